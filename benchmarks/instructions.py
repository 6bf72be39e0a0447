"""Instructions per record of each workload and its baseline, counted by valgrind's
callgrind: repeatable whatever else the machine is doing (this machine's speed moves
by up to 2x between identical timed runs, so a change of a few percent shows only here).

    python -m benchmarks.instructions --workloads W2,W4 --n 60000

Each count runs one workload (local executor, parallelism 2, one batch) or its
baseline in a fresh interpreter under callgrind, at N records and at 1,000; the
difference divided by N - 1,000 is the instructions per record, start-up and imports
cancelled out. Needs ``valgrind`` (``apt-get install valgrind``); takes ~45 s a count.
"""
import argparse
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from .run import parse_args
from .workloads import WORKLOADS

SMALL_N = 1000


def count(workload: str, n: int, baseline: bool) -> int:
    """Instructions of one run of ``workload`` (or its baseline) at ``n`` records."""
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
               sys.executable, "-m", "benchmarks.instructions", "--run", workload, "--n",
               str(n)] + (["--baseline"] if baseline else [])
    found = re.search(r"Collected : (\d+)", subprocess.run(
        command, capture_output=True, text=True, check=True).stderr)
    return int(found.group(1))


def run_once(workload: str, n: int, baseline: bool) -> None:
    opts = parse_args(["--executor", "local", "--parallelism", "2",
                       "--micro-batch-size", str(n)])
    opts.session = None
    run, base = WORKLOADS[workload]
    (base if baseline else run)(opts, n).gathered()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--workloads", default="W1,W2,W4")
    p.add_argument("--n", type=int, default=60_000)
    p.add_argument("--run", help=argparse.SUPPRESS)  # one run, under valgrind
    p.add_argument("--baseline", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.run:
        run_once(args.run, args.n, args.baseline)
        return
    with ThreadPoolExecutor(2) as pool:  # two counts at a time: one per core
        for workload in args.workloads.upper().replace(" ", "").split(","):
            per_record = {}
            for baseline in (False, True):
                big, small = pool.map(lambda n: count(workload, n, baseline),
                                      (args.n, SMALL_N))
                per_record[baseline] = (big - small) / (args.n - SMALL_N)
            print(f"{workload}: {per_record[False]:,.0f} instructions per record, baseline "
                  f"{per_record[True]:,.0f} ({per_record[False] / per_record[True]:.2f}x)",
                  flush=True)


if __name__ == "__main__":
    main()
