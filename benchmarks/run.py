"""Runs the benchmark workloads and prints ours vs. the pure-Python baseline.

    python -m benchmarks.run --n 1000000 --workloads W1,W2 --executor spark \
        --parallelism 2 --micro-batch-size 250000

Timed: building the job, planning, every micro-batch and the sink (in the tasks).
Not timed: gathering the sinks' results to check them, Spark session start-up
(created once before) and a small warm-up run of
each workload (starts Spark's Python workers and imports the engine in them).
"""
import argparse
import os
import time

from .workloads import WORKLOADS

WARM_UP_N = 1000


def timed(fn, *args):
    start = time.perf_counter()
    result = fn(*args)
    return result, time.perf_counter() - start


def start_session(opts) -> None:
    """Sets ``opts.session``: the Spark session of ``opts.master`` (created once, before
    any timing) for the spark executor, None for the local one."""
    opts.session = None
    if opts.executor == "spark":
        from engine.executor.spark import get_spark_session
        opts.session = get_spark_session(opts.master, {})


def best_of(repeat: int, fn, opts):
    """The fastest of ``repeat`` timed runs: (its gathered sink, seconds)."""
    runs = [timed(fn, opts, opts.n) for _ in range(repeat)]
    gathered = [(sink.gathered(), seconds) for sink, seconds in runs]  # outside the timing
    return min(gathered, key=lambda run: run[1])


def add_engine_arguments(p: argparse.ArgumentParser) -> None:
    """Adds the options of the engine's runs that every runner shares: executor,
    parallelism, Spark master and state backend."""
    p.add_argument("--executor", default="spark", choices=["spark", "local"])
    p.add_argument("--parallelism", type=int, default=2)
    p.add_argument("--master", default="local[2]", help="Spark master (executor spark)")
    p.add_argument("--state-backend", default="hashmap", choices=["hashmap", "rocksdb"],
                   help="keyed state backend of the engine's runs (state.backend.type)")


def print_heading(settings: str, columns: str) -> None:
    """Prints the run's line (time, cores, load average, then ``settings``) and the
    table's ``columns``, underlined."""
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} cores, load average "
          f"{os.getloadavg()[0]:.1f}{settings}")
    print(columns)
    print("-" * len(columns))


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=1_000_000, help="records per workload")
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    add_engine_arguments(p)
    p.add_argument("--micro-batch-size", type=int, default=100_000,
                   help="max records per source split and micro-batch")
    p.add_argument("--repeat", type=int, default=1, help="runs per workload; best is shown")
    p.add_argument("--object-reuse", action="store_true",
                   help="the engine's runs enable object reuse (pipeline.object-reuse)")
    return p.parse_args(argv)


def main(argv=None):
    opts = parse_args(argv)
    start_session(opts)
    print_heading(f", state backend {opts.state_backend}; ratio = ours / baseline records/s",
                  f"{'workload':8} {'N':>9} {'executor':8} {'par':>3} {'batch':>8} {'s':>7} "
                  f"{'rec/s':>10} {'base s':>7} {'base rec/s':>10} {'ratio':>6}")
    for name in opts.workloads.upper().replace(" ", "").split(","):
        run, baseline = WORKLOADS[name]
        run(opts, WARM_UP_N).gathered()
        ours = best_of(opts.repeat, run, opts)
        base = best_of(opts.repeat, baseline, opts)
        (sink, seconds), (base_sink, base_seconds) = ours, base
        assert sink.count == base_sink.count, (name, sink.count, base_sink.count)
        assert sink.last == base_sink.last, f"{name}: final per-key results differ"
        rate, base_rate = opts.n / seconds, opts.n / base_seconds
        print(f"{name:8} {opts.n:>9} {opts.executor:8} {opts.parallelism:>3} "
              f"{opts.micro_batch_size:>8} {seconds:>7.2f} {rate:>10,.0f} "
              f"{base_seconds:>7.2f} {base_rate:>10,.0f} {rate / base_rate:>6.3f}", flush=True)


if __name__ == "__main__":
    main()
