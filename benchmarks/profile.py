"""Where a workload's time goes: microseconds per record for each part of the engine.

    python -m benchmarks.profile --n 500000 --workloads W1,W2,W3,W4,W5 [--spark]

Runs each workload on the local executor at parallelism 1 (one process, one core),
timing every operator's own time (its callees down the chain subtracted, user
functions called by the operator included), the routing of records to the next stage
(with the key selector), the pickling and unpickling of the chunks that cross a
stage, and the rest (building the job, planning, the driver, freeing the batch's
objects), beside the pure-Python baseline of the same logic. With ``--spark`` it also
measures the fixed cost of a batch on Spark ``local[2]``: the seconds of the same job
at N = 2,000 (which moves no real data).

The timers add ~0.5 us per timed call (calls per chunk, not per record), so the parts
add up to slightly more than an untimed run.
"""
import argparse
import collections
import importlib
import inspect
import time

from engine.runtime import routing, task
from engine.runtime.operators.base import Operator

from .run import WARM_UP_N, parse_args, start_session
from .workloads import WORKLOADS

_OPERATOR_MODULES = ("async_io", "io", "keyed", "timestamps", "two_input", "udf", "window",
                     "window_batch")
_TIMED_METHODS = ("process_chunk", "fire_timers", "_add_chunk", "_fire_timers", "end_input", "run",
                  "_process")


class OwnTime:
    """Seconds spent in each labelled function, minus the labelled functions it called."""

    def __init__(self):
        self.seconds = collections.Counter()
        self._children = []  # per open call: seconds spent in labelled callees

    def wrap(self, label: str, function):
        def timed(*args, **kwargs):
            start = time.perf_counter()
            self._children.append(0.0)
            try:
                return function(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - start
                self.seconds[label] += elapsed - self._children.pop()
                if self._children:
                    self._children[-1] += elapsed
        return timed


def _operator_classes(cls=Operator):
    for sub in cls.__subclasses__():
        yield sub
        yield from _operator_classes(sub)


def instrument(own: OwnTime) -> None:
    """Wraps the engine's operator methods, routers and chunk (un)pickling in ``own``."""
    for module in _OPERATOR_MODULES:  # every operator class defined before wrapping
        try:
            importlib.import_module(f"engine.runtime.operators.{module}")
        except ModuleNotFoundError:  # (older engine versions, for before/after profiles)
            pass
    for cls in set(_operator_classes()):
        for method in _TIMED_METHODS:
            if method in cls.__dict__:
                setattr(cls, method, own.wrap(_label(cls), cls.__dict__[method]))
    make_route = routing.Router._make_route

    def timed_route(self, *args):
        return own.wrap("routing (with key selector)", make_route(self, *args))
    routing.Router._make_route = timed_route
    if hasattr(routing, "pickled"):  # routers pickle their chunks in pieces
        routing.pickled = own.wrap("pickling chunks", routing.pickled)
    else:
        task.pickled = own.wrap("pickling chunks", task.pickled)
    if inspect.isgeneratorfunction(task.records_of):  # a payload's pieces, one at a time
        task.records_of = _timed_pieces(own, task.records_of)
    else:
        task.records_of = own.wrap("unpickling chunks", task.records_of)


def _timed_pieces(own: OwnTime, records_of):
    def timed_records_of(payload):
        pieces = records_of(payload)
        next_piece = own.wrap("unpickling chunks", next)
        while (piece := next_piece(pieces, None)) is not None:
            yield piece
    return timed_records_of


def _label(cls) -> str:
    names = {"SourceOperator": "source", "SinkOperator": "sink (with user invoke)",
             "MapOperator": "map/filter/flat_map (with user function)",
             "FilterOperator": "map/filter/flat_map (with user function)",
             "FlatMapOperator": "map/filter/flat_map (with user function)",
             "TimestampsOperator": "timestamps (with assigner)"}
    return names.get(cls.__name__, f"{cls.__name__} (with user functions, state, timers)")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--n", type=int, default=500_000)
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--spark", action="store_true",
                   help="also measure a batch's fixed cost on Spark local[2]")
    args = p.parse_args(argv)
    opts = parse_args(["--executor", "local", "--parallelism", "1",
                       "--micro-batch-size", str(args.n)])
    opts.session = None
    own = OwnTime()
    instrument(own)
    spark_opts = None
    if args.spark:
        spark_opts = parse_args(["--executor", "spark", "--parallelism", "2",
                                 "--micro-batch-size", str(args.n)])
        start_session(spark_opts)
    for name in args.workloads.upper().replace(" ", "").split(","):
        run, baseline = WORKLOADS[name]
        run(opts, WARM_UP_N).gathered()
        own.seconds.clear()
        start = time.perf_counter()
        sink = run(opts, args.n)
        total = time.perf_counter() - start
        sink.gathered()
        start = time.perf_counter()
        sink = baseline(opts, args.n)
        base = time.perf_counter() - start
        sink.gathered()
        per_record = 1e6 / args.n
        print(f"\n{name}, N = {args.n:,}, local executor, parallelism 1: "
              f"{total * per_record:.2f} us/record (baseline {base * per_record:.2f})")
        for label, seconds in own.seconds.most_common():
            print(f"  {seconds * per_record:7.2f}  {label}")
        print(f"  {(total - sum(own.seconds.values())) * per_record:7.2f}  the rest (job "
              "building, planning, driver, freeing the batch)")
        if spark_opts is not None:
            run(spark_opts, WARM_UP_N).gathered()
            start = time.perf_counter()
            sink = run(spark_opts, 2000)
            print(f"  Spark local[2], a batch at N = 2,000: {time.perf_counter() - start:.3f} s")
            sink.gathered()


if __name__ == "__main__":
    main()
