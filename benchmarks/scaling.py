"""Scaling: records/s at parallelism 1 and 2, and as the input and the key count grow.

    python -m benchmarks.scaling parallelism --workloads W2,W3,W4,W5 --n 1000000 \
        [--executor spark] [--master local[2]] [--repeat 1] [--state-backend hashmap]
    python -m benchmarks.scaling growth --n 1000000,4000000,16000000 --workload W2 \
        --keys 10000,1000000,10000000 [--state-backend rocksdb]

parallelism: each workload of ``benchmarks.workloads`` at parallelism 1 and 2 (on Spark
``local[2]``: two cores), records/s and p2 / p1 (goal: >= 1.7 on W2-W5). Each split is
read in one micro-batch (batch size = N / parallelism, unless ``--micro-batch-size``),
so both runs pay the same number of batches. Timed as in ``benchmarks.run`` (after a
warm-up run at N = 1000; Spark session start-up not timed).

growth: the ``--workload`` at each N of ``--n``, then ``KeyedCount`` -- a keyed rolling
count of N = max(largest --n, K) records over K distinct int keys (``key_by`` ->
KeyedProcessFunction with a ValueState counter -> a counting sink; every key is set) --
at each K of ``--keys``, in micro-batches of ``--micro-batch-size`` (default 500,000 per
split). Beside records/s: the peak resident memory during the run of the driver process
and of the other Python processes under it (Spark's Python workers and their daemon,
RSS added up: pages they share after the fork count once per process), the largest of
those processes, sampled every 0.25 s, and the driver's lifetime peak
(``resource.getrusage``), so memory that grows with N or K shows. The sum also counts
the subtask hosts of the previous run, which stay up to
``task_host.FINISHED_IDLE_SECONDS`` after it: growth shows in the largest process.
"""
import argparse
import os
import pickle
import resource
import shutil
import tempfile
import threading
import uuid
from typing import Dict, List, Tuple

from api.common import Types, WatermarkStrategy
from api.datastream import KeyedProcessFunction
from api.datastream.connectors import NumberSequenceSource
from api.datastream.functions import SinkFunction
from api.datastream.state import ValueStateDescriptor

from .run import (WARM_UP_N, add_engine_arguments, best_of, print_heading, start_session,
                  timed)
from .workloads import WORKLOADS, environment

PAGE_KB = os.sysconf("SC_PAGE_SIZE") // 1024
# Workloads whose results do not depend on the parallelism (W4's timers fire by the
# splits' watermarks, which do).
SAME_RESULTS = {"W1", "W2", "W3", "W5"}


# --- the keyed rolling count ------------------------------------------------------------
class KeyOf:
    """Record i -> (its key, 1): key ``i * 7919 % keys`` (every key once per ``keys``
    consecutive records: 7919 is a prime not dividing powers of ten)."""

    def __init__(self, keys: int):
        self.keys = keys

    def __call__(self, i: int):
        return i * 7919 % self.keys


class CountPerKey(KeyedProcessFunction):
    """A ValueState counter per key; emits (key, count so far) per record."""

    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value, ctx):
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        yield value, n


class CountCheckSink(SinkFunction):
    """Counts (key, count) results, adds up the counts and counts the first ones (count
    1); each subtask's copy writes its totals when the input ends, ``gathered()`` adds
    them up in the driver. A rolling count is right when there are N results, K firsts
    and the counts add up to ``expected_count_sum(n, k)``."""

    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix="scaling-sink-")
        self.results = self.count_sum = self.firsts = 0

    def invoke(self, value, context):
        self.results += 1
        self.count_sum += value[1]
        if value[1] == 1:
            self.firsts += 1

    def close(self):
        with open(os.path.join(self.directory, uuid.uuid4().hex), "wb") as f:
            pickle.dump((self.results, self.count_sum, self.firsts), f)

    def gathered(self) -> Tuple[int, int, int]:
        totals = [0, 0, 0]
        for name in os.listdir(self.directory):
            with open(os.path.join(self.directory, name), "rb") as f:
                totals = [a + b for a, b in zip(totals, pickle.load(f))]
        shutil.rmtree(self.directory)
        return tuple(totals)


def expected_count_sum(n: int, keys: int) -> int:
    """The sum of all rolling counts when n records spread evenly over ``keys`` keys."""
    q, r = divmod(n, keys)
    return r * (q + 1) * (q + 2) // 2 + (keys - r) * q * (q + 1) // 2


def keyed_count(opts, n: int, keys: int) -> Tuple[int, int, int]:
    """Runs the keyed rolling count; returns the sink's (results, count sum, firsts)."""
    env = environment(opts)
    sink = CountCheckSink()
    env.from_source(NumberSequenceSource(0, n - 1), WatermarkStrategy.no_watermarks(),
                    "numbers").map(KeyOf(keys)).key_by(lambda key: key) \
        .process(CountPerKey()).add_sink(sink)
    env.execute("KeyedCount")
    return sink.gathered()


# --- memory ---------------------------------------------------------------------------------
def _rss_kb(pid: int) -> int:
    with open(f"/proc/{pid}/statm") as f:
        return int(f.read().split()[1]) * PAGE_KB


def _python_descendants(root: int) -> List[int]:
    """Python processes under ``root`` (Spark's workers and their daemon), and those of
    their process groups (the subtask hosts, which their workers fork away)."""
    children: Dict[int, List[int]] = {}
    names: Dict[int, str] = {}
    groups: Dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        pid = int(entry)
        names[pid] = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        children.setdefault(int(fields[1]), []).append(pid)
        groups[pid] = int(fields[2])
    found, todo = [], list(children.get(root, []))
    while todo:
        pid = todo.pop()
        if names.get(pid, "").startswith("python"):
            found.append(pid)
        todo.extend(children.get(pid, []))
    found_groups = {groups[pid] for pid in found} - {groups.get(root)}
    return sorted(set(found) | {pid for pid, group in groups.items()
                                if group in found_groups and names[pid].startswith("python")})


class PeakMemory:
    """Samples (every ``interval`` s, while in a ``with``) the resident memory of this
    process and the sum over the Python processes under it; keeps the peaks, in MB."""

    def __init__(self, interval: float = 0.25):
        self.interval = interval
        self.driver_mb = self.workers_mb = self.largest_mb = 0.0
        self._stop = threading.Event()

    def _sample(self) -> None:
        me = os.getpid()
        driver, workers, largest = _rss_kb(me), 0, 0
        for pid in _python_descendants(me):
            try:
                rss = _rss_kb(pid)
            except OSError:  # it ended
                continue
            workers += rss
            largest = max(largest, rss)
        self.driver_mb = max(self.driver_mb, driver / 1024)
        self.workers_mb = max(self.workers_mb, workers / 1024)
        self.largest_mb = max(self.largest_mb, largest / 1024)

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self):
        self._sample()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._sample()


def lifetime_peak_mb() -> float:
    """The driver's peak resident memory since it started (``ru_maxrss``, KB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --- the two modes --------------------------------------------------------------------------
def run_parallelism(opts) -> List[dict]:
    """Each workload at parallelism 1 and 2; returns a row per workload."""
    rows = []
    for name in opts.workloads.upper().replace(" ", "").split(","):
        run = WORKLOADS[name][0]
        rates, sinks = {}, {}
        for parallelism in (1, 2):
            opts.parallelism = parallelism
            opts.micro_batch_size = opts.batch_size or -(-opts.n // parallelism)
            run(opts, WARM_UP_N).gathered()
            sink, seconds = best_of(opts.repeat, run, opts)
            rates[parallelism], sinks[parallelism] = opts.n / seconds, sink
        assert sinks[1].count == sinks[2].count or name not in SAME_RESULTS, name
        assert sinks[1].last == sinks[2].last or name not in SAME_RESULTS, name
        row = {"workload": name, "p1": rates[1], "p2": rates[2], "speedup": rates[2] / rates[1],
               "results": sinks[2].count}
        rows.append(row)
        print(f"{name:8} {opts.n:>10,} {rates[1]:>11,.0f} {rates[2]:>11,.0f} "
              f"{row['speedup']:>6.2f} {'met' if row['speedup'] >= 1.7 else 'missed':>6}",
              flush=True)
    return rows


def _growth_row(label: str, n: int, fn, *args) -> dict:
    with PeakMemory() as memory:
        result, seconds = timed(fn, *args)
    row = {"run": label, "n": n, "rate": n / seconds, "driver_mb": memory.driver_mb,
           "workers_mb": memory.workers_mb, "largest_mb": memory.largest_mb,
           "lifetime_mb": lifetime_peak_mb(), "result": result}
    print(f"{label:20} {n:>11,} {row['rate']:>11,.0f} {row['driver_mb']:>9.0f} "
          f"{row['workers_mb']:>10.0f} {row['largest_mb']:>10.0f} {row['lifetime_mb']:>9.0f}",
          flush=True)
    return row


def run_growth(opts) -> List[dict]:
    """The workload at each N, then the keyed count at each K; a row per run."""
    rows = []
    run = WORKLOADS[opts.workload.upper()][0]
    opts.micro_batch_size = opts.batch_size or 500_000
    sizes = [int(n) for n in opts.n.split(",")] if opts.n else []
    if sizes:
        run(opts, WARM_UP_N).gathered()
    for n in sizes:
        row = _growth_row(opts.workload.upper(), n, run, opts, n)
        row["result"] = row["result"].gathered().count  # outside the timing
        rows.append(row)
    if opts.keys:
        keyed_count(opts, WARM_UP_N, 10)
    for keys in (int(k) for k in opts.keys.split(",")) if opts.keys else ():
        n = max(sizes + [keys])
        row = _growth_row(f"KeyedCount {keys:,}", n, keyed_count, opts, n, keys)
        assert row["result"] == (n, expected_count_sum(n, keys), keys), row["result"]
        rows.append(row)
    return rows


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["parallelism", "growth"])
    p.add_argument("--n", default=None, help="records (growth: comma-separated list)")
    p.add_argument("--workloads", default="W2,W3,W4,W5", help="parallelism: workloads")
    p.add_argument("--workload", default="W2", help="growth: the workload run at each N")
    p.add_argument("--keys", default="10000,1000000",
                   help="growth: distinct keys of KeyedCount, comma-separated ('' for none)")
    add_engine_arguments(p)  # --parallelism: growth only
    p.add_argument("--micro-batch-size", dest="batch_size", type=int, default=0,
                   help="max records per split and batch (default: parallelism: one batch "
                        "per split; growth: 500,000)")
    p.add_argument("--repeat", type=int, default=1, help="parallelism: runs, best shown")
    return p.parse_args(argv)


def main(argv=None):
    """Prints the table; returns its rows (dicts)."""
    opts = parse_args(argv)
    start_session(opts)
    master = f" {opts.master}" if opts.executor == "spark" else ""
    settings = f", executor {opts.executor}{master}, state backend {opts.state_backend}"
    if opts.mode == "parallelism":
        opts.n = int(opts.n or 1_000_000)
        print_heading(settings, f"{'workload':8} {'N':>10} {'p1 rec/s':>11} {'p2 rec/s':>11} "
                                f"{'p2/p1':>6} {'>=1.7':>6}")
        return run_parallelism(opts)
    else:
        opts.n = opts.n or "1000000,4000000"
        print_heading(f"{settings}; parallelism {opts.parallelism}, micro-batch "
                      f"{opts.batch_size or 500_000:,} per split; MB: peak resident memory "
                      f"during the run (driver; Python processes under it, added up and the "
                      f"largest), and the driver's lifetime peak",
                      f"{'run':20} {'N':>11} {'rec/s':>11} {'driver MB':>9} {'workers MB':>10} "
                      f"{'largest MB':>10} {'life MB':>9}")
        return run_growth(opts)


if __name__ == "__main__":
    main()
