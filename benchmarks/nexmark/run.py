"""Runs Nexmark queries on the engine and prints events/s, per core and next to Flink's.

    python -m benchmarks.nexmark.run --events 1000000 --queries q0,q1,q5 \
        --executor spark --parallelism 2 --micro-batch-size 500000

Timed: building the job, planning, every micro-batch (generating the events in the
tasks, the query, a counting sink in the tasks). Not timed: Spark session start-up
(created once before) and a warm-up run of each query at 1,000 events.
"""
import argparse

from benchmarks.run import add_engine_arguments, print_heading, start_session, timed
from benchmarks.workloads import CountSink, environment

from .generator import GeneratorConfig, nexmark_source
from .queries import QUERIES

WARM_UP_EVENTS = 1000

# Throughput/Cores in K events/s of Flink 1.13 (SQL, 100M events at 10M events/s,
# parallelism 8, RocksDB, 3 machines of 8 cores), the table "Nexmark Benchmark Result"
# of https://github.com/nexmark/nexmark README.md.
FLINK_1_13_PER_CORE_K = {"q0": 155.02, "q1": 157.94, "q2": 175.21, "q3": 152.12,
                         "q5": 22.14, "q7": 12.33, "q8": 146.14, "q11": 39.7,
                         "q12": 75.67, "q13": 130.73, "q18": 53.7, "q19": 44.04}


def run_query(opts, name: str, n: int) -> int:
    """Runs query ``name`` over ``n`` events; returns the number of results."""
    env = environment(opts)
    sink = CountSink()
    config = GeneratorConfig(opts.seed, opts.event_rate)
    QUERIES[name].build(nexmark_source(env, n, config)).add_sink(sink)
    env.execute(f"nexmark-{name}")
    return sink.gathered().count


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--events", type=int, default=1_000_000)
    p.add_argument("--queries", default=",".join(QUERIES))
    add_engine_arguments(p)
    p.add_argument("--micro-batch-size", type=int, default=500_000,
                   help="max events per source split and micro-batch")
    p.add_argument("--event-rate", type=int, default=GeneratorConfig().event_rate,
                   help="events per second of event time")
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args(argv)


def main(argv=None):
    opts = parse_args(argv)
    start_session(opts)
    print_heading(f"; executor {opts.executor}, parallelism {opts.parallelism}, micro-batch "
                  f"{opts.micro_batch_size}, event rate {opts.event_rate}/s, state backend "
                  f"{opts.state_backend}; per core = events/s / parallelism (spark), "
                  f"= events/s (local: one process)",
                  f"{'query':5} {'events':>9} {'results':>9} {'s':>7} {'events/s':>10} "
                  f"{'per core':>9} {'Flink 1.13 per core':>19}")
    cores = opts.parallelism if opts.executor == "spark" else 1  # local: one process
    for name in opts.queries.lower().replace(" ", "").split(","):
        run_query(opts, name, WARM_UP_EVENTS)
        results, seconds = timed(run_query, opts, name, opts.events)
        rate = opts.events / seconds
        flink = FLINK_1_13_PER_CORE_K[name]
        print(f"{name:5} {opts.events:>9} {results:>9} {seconds:>7.2f} {rate:>10,.0f} "
              f"{rate / cores:>9,.0f} {flink * 1000:>19,.0f}", flush=True)


if __name__ == "__main__":
    main()
