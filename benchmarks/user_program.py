"""The benchmark program users write: ``../shared/bench`` (a PyFlink program with declared
types, and its plain-Python twin), run as its README says.

Each workload's program runs with its imports rewritten (``pyflink`` -> ``api``) at two
sizes, best of ``--repeat`` runs per size; its rate is the marginal one between them,
``(N2 - N1) / (job_s(N2) - job_s(N1))``, so that starting Spark cancels out. The baseline
is plain Python on one core at N2, best of ``--repeat``, in the same sitting. A run whose
program reports wrong results (``ok`` false) fails the tool.

    python -m benchmarks.user_program --workloads W1,W2,W3,W4,W5 --parallelism 2
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from typing import Dict, List, NamedTuple, Tuple

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BENCH = os.path.join(os.path.dirname(ROOT), "shared", "bench")
FILES = ("flink_bench.py", "common.py", "purepy_bench.py")
# (N1, N2) per workload, as the program's README gives them
SIZES: Dict[str, Tuple[int, int]] = {
    "W1": (1_000_000, 5_000_000), "W2": (1_000_000, 5_000_000), "W3": (500_000, 2_000_000),
    "W4": (1_000_000, 5_000_000), "W5": (500_000, 2_000_000)}


class Figures(NamedTuple):
    """One workload's measurements: best ``job_s`` of ours at N1 and N2, of plain Python
    at N2."""
    workload: str
    n1: int
    n2: int
    ours_s1: float
    ours_s2: float
    plain_s: float

    @property
    def ours_rate(self) -> float:
        """Our marginal records/s between N1 and N2."""
        return (self.n2 - self.n1) / max(self.ours_s2 - self.ours_s1, 1e-9)

    @property
    def plain_rate(self) -> float:
        return self.n2 / self.plain_s

    @property
    def ratio(self) -> float:
        return self.ours_rate / self.plain_rate


def rewrite_imports(bench_dir: str, target_dir: str) -> str:
    """Copies the program's files into ``target_dir`` with ``pyflink`` replaced by
    ``api`` as a whole word, as a user ports a program; returns ``target_dir``."""
    for name in FILES:
        with open(os.path.join(bench_dir, name)) as f:
            text = re.sub(r"\bpyflink\b", "api", f.read())
        with open(os.path.join(target_dir, name), "w") as f:
            f.write(text)
    return target_dir


def run_program(command: List[str], code: str = ROOT) -> dict:
    """Runs one program on the project checkout ``code`` and returns its ``RESULT``
    line's fields; raises if it failed or reports wrong results."""
    env = dict(os.environ, PYTHONPATH=code, PYSPARK_PYTHON=sys.executable)
    done = subprocess.run(command, env=env, capture_output=True, text=True, cwd=code)
    results = [line[len("RESULT "):] for line in done.stdout.splitlines()
               if line.startswith("RESULT ")]
    if done.returncode != 0 or not results:
        raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}):\n"
                           f"{done.stderr[-3000:]}")
    result = json.loads(results[-1])
    if result.get("ok") is False:
        raise RuntimeError(f"{' '.join(command)} reported wrong results: {result}")
    return result


def measure(program_dir: str, workload: str, sizes: Tuple[int, int], parallelism: int,
            repeat: int, conf: List[str], code: str = ROOT) -> Figures:
    """Best-of-``repeat`` ``job_s`` of ours at both sizes and of plain Python at N2."""
    def best(command):
        return min(run_program(command, code)["job_s"] for _ in range(repeat))
    ours = [best([sys.executable, os.path.join(program_dir, "flink_bench.py"), workload,
                  str(n), "--parallelism", str(parallelism),
                  *(arg for kv in conf for arg in ("--conf", kv))]) for n in sizes]
    plain = best([sys.executable, os.path.join(program_dir, "purepy_bench.py"), workload,
                  str(sizes[1])])
    return Figures(workload, *sizes, *ours, plain)


def main(argv=None) -> List[Figures]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--workloads", default="W1,W2,W3,W4,W5")
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--bench", default=DEFAULT_BENCH,
                        help="the directory of flink_bench.py, common.py, purepy_bench.py")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiplies the README's sizes (smaller for a quick look)")
    parser.add_argument("--conf", action="append", default=[],
                        help="key=value passed on to the program (e.g. execution.executor=local)")
    parser.add_argument("--code", default=ROOT,
                        help="the project checkout the program runs on (default this one): "
                             "another commit's, to compare in one sitting")
    opts = parser.parse_args(argv)
    rows = []
    print(f"../shared/bench, imports rewritten; parallelism {opts.parallelism}, marginal "
          f"rate between N1 and N2 (best of {opts.repeat}) against plain Python at N2\n"
          f"{'workload':<8} {'N1':>10} {'N2':>10} {'ours rec/s':>12} {'plain rec/s':>12} "
          f"{'ratio':>6}", flush=True)
    with tempfile.TemporaryDirectory(prefix="user-program-") as program_dir:
        rewrite_imports(opts.bench, program_dir)
        for workload in opts.workloads.split(","):
            sizes = tuple(int(n * opts.scale) for n in SIZES[workload])
            row = measure(program_dir, workload, sizes, opts.parallelism, opts.repeat,
                          opts.conf, os.path.abspath(opts.code))
            rows.append(row)
            print(f"{workload:<8} {row.n1:>10,} {row.n2:>10,} {row.ours_rate:>12,.0f} "
                  f"{row.plain_rate:>12,.0f} {row.ratio:>6.2f}", flush=True)
    return rows


if __name__ == "__main__":
    main()
