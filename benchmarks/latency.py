"""Micro-batch latency of an unbounded keyed job at a fixed offered rate, without Kafka.

    python -m benchmarks.latency --rates 1000,10000 --seconds 15 --executor spark \
        [--interval-ms 200] [--warmup 5] [--parallelism 2] [--master local[2]]

The job: ``env.add_source(RateSource)`` -- a SourceFunction whose ``run`` (a thread of
the driver) emits ``(key, creation time)`` at ``rate`` records/s, ``time.time()`` taken
as each record is emitted -- then ``key_by(key)`` -> a KeyedProcessFunction counting per
key in a ValueState -> ``add_sink(LatencySink)``, whose ``invoke`` (in the tasks) appends
(creation time, now) to a file of its process. The source runs ``--warmup`` seconds
(Spark starts its Python workers; not counted) and then ``--seconds`` seconds, and
returns: the job then ends by itself, so every record reaches the sink.

Printed per executor and rate: p50 / p99 / max of (sink time - creation time) in ms, the
same up to the end of the commit of the record's batch, and its parts: waiting for the
next batch to be planned, and from there to the sink. Then where a batch's time goes,
timed from outside around the driver's calls (``BatchTimeline``): planning the source
ranges, ``executor.run_batch`` (the Spark job: every stage's tasks, the sink's writes in
them), the metadata-log commit, the sinks' commit, and the rest of the cycle (the sleep
to the next ``execution.micro-batch.interval`` trigger and the driver's bookkeeping).
"""
import argparse
import bisect
import os
import shutil
import struct
import tempfile
import time
import uuid
from contextlib import contextmanager
from typing import Dict, List, NamedTuple, Optional

from api.common import Configuration, Types
from api.datastream import KeyedProcessFunction, StreamExecutionEnvironment
from api.datastream.functions import SinkFunction, SourceFunction
from api.datastream.state import ValueStateDescriptor
from checkpoint.job_directory import JobDirectory
from engine.driver import scheduler
from engine.executor.local import LocalExecutor

_PAIR = "<dd"  # (creation time, sink time), seconds since the epoch
_PAIR_SIZE = struct.calcsize(_PAIR)


class RateSource(SourceFunction):
    """Emits ``(f"k{i % keys}", time.time())`` at ``rate`` records/s for ``seconds``
    seconds, then returns. ``emitted`` counts the records."""

    def __init__(self, rate: float, seconds: float, keys: int = 1000):
        super().__init__()
        self.rate = rate
        self.seconds = seconds
        self.keys = keys
        self.emitted = 0
        self.started: Optional[float] = None
        self._cancelled = False

    def run(self, ctx) -> None:
        self.started = start = time.time()
        keys, rate = self.keys, self.rate
        while not self._cancelled:
            elapsed = time.time() - start
            due = int(min(elapsed, self.seconds) * rate)
            for i in range(self.emitted, due):
                ctx.collect((f"k{i % keys}", time.time()))
            self.emitted = due
            if elapsed >= self.seconds:
                return
            time.sleep(0.001)

    def cancel(self) -> None:
        self._cancelled = True


class CountWithCreation(KeyedProcessFunction):
    """Per key: the count so far in a ValueState; emits (key, count, creation time)."""

    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value, ctx):
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        yield value[0], n, value[1]


class LatencySink(SinkFunction):
    """Appends (creation time, now) of each record to a file of its subtask copy under
    ``directory`` at once (unbuffered: nothing is lost however the job ends); ``read()``
    gathers them in the driver and removes the directory. It also keeps each key's
    largest count (``counts()``), for checking the keyed state."""

    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix="latency-sink-")
        self._fd = None

    def open(self, runtime_context):
        self._fd = os.open(os.path.join(self.directory, uuid.uuid4().hex),
                           os.O_WRONLY | os.O_CREAT | os.O_APPEND)

    def invoke(self, value, context):
        key, count, created = value
        os.write(self._fd, struct.pack(_PAIR, created, time.time()) + f"{key},{count}\n".encode())

    def close(self):
        os.close(self._fd)

    def read(self):
        """([(creation time, sink time)], {key: largest count}) of every record."""
        pairs, counts = [], {}
        for name in os.listdir(self.directory):
            with open(os.path.join(self.directory, name), "rb") as f:
                data = f.read()
            at = 0
            while at < len(data):
                pairs.append(struct.unpack_from(_PAIR, data, at))
                end = data.index(b"\n", at + _PAIR_SIZE)
                key, count = data[at + _PAIR_SIZE:end].decode().split(",")
                counts[key] = max(counts.get(key, 0), int(count))
                at = end + 1
        shutil.rmtree(self.directory)
        return pairs, counts


class Batch:
    """One micro-batch as the driver ran it: wall-clock times (``time.time()``) and
    durations in seconds."""

    def __init__(self, planned: float):
        self.planned = planned        # when planning started
        self.cut = planned            # when planning ended: records before are in it
        self.records = 0
        self.spark_jobs = 0
        self.seconds: Dict[str, float] = {"plan": 0.0, "run": 0.0, "commit": 0.0,
                                          "sinks": 0.0}
        self.run_started: Optional[float] = None
        self.run_ended: Optional[float] = None
        self.committed: Optional[float] = None
        self.first_sunk: Optional[float] = None  # first and last sink writes of its records
        self.last_sunk: Optional[float] = None


class BatchTimeline:
    """Times the driver's calls of each micro-batch from outside: wraps (while
    ``recording()``) ``_SourceSplits.plan``, the executors' ``run_batch``,
    ``JobDirectory.commit`` and ``JobRunner._commit_sinks``; no engine code changes.
    With ``spark_context``, also counts the Spark jobs of each ``run_batch``."""

    def __init__(self, spark_context=None):
        self.batches: List[Batch] = []
        self._tracker = None if spark_context is None else spark_context.statusTracker()

    def _wrap(self, owner, name: str, phase: str):
        original = getattr(owner, name)
        timeline = self

        def timed(*args, **kwargs):
            jobs = timeline._jobs() if phase == "run" else 0
            started = time.time()
            if phase == "plan" and (not timeline.batches or timeline.batches[-1].seconds["run"]):
                timeline.batches.append(Batch(started))
            batch = timeline.batches[-1]
            try:
                return original(*args, **kwargs)
            finally:
                ended = time.time()
                batch.seconds[phase] += ended - started
                if phase == "plan":
                    batch.cut = ended
                elif phase == "run":
                    batch.run_started, batch.run_ended = started, ended
                    batch.records = sum(len(r.descriptor) for ranges in args[2].values()
                                        for subtask in ranges for r in subtask)
                    batch.spark_jobs = timeline._jobs() - jobs
                elif phase == "commit":
                    batch.committed = ended
        return owner, name, original, timed

    def _jobs(self) -> int:
        return 0 if self._tracker is None else len(self._tracker.getJobIdsForGroup())

    @contextmanager
    def recording(self):
        from engine.executor.spark import SparkExecutor
        wrapped = [self._wrap(scheduler._SourceSplits, "plan", "plan"),
                   self._wrap(SparkExecutor, "run_batch", "run"),
                   self._wrap(LocalExecutor, "run_batch", "run"),
                   self._wrap(JobDirectory, "commit", "commit"),
                   self._wrap(scheduler.JobRunner, "_commit_sinks", "sinks")]
        for owner, name, _, timed in wrapped:
            setattr(owner, name, timed)
        try:
            yield self
        finally:
            for owner, name, original, _ in wrapped:
                setattr(owner, name, original)


class Measurement(NamedTuple):
    """What one run measured, in ms (lists sorted): per record, sink latency, latency to
    the end of its batch's commit, waiting for its batch, and its batch's part; and the
    batches run after the warm-up."""
    offered: int
    received: int
    counts: Dict[str, int]
    latency: List[float]
    committed: List[float]
    waiting: List[float]
    in_batch: List[float]
    batches: List[Batch]


def run(opts, session, rate: float, seconds: float, warmup: float) -> Measurement:
    """Runs the job at ``rate`` for ``warmup + seconds`` s; measures the last ``seconds``."""
    config = Configuration()
    config.set_string("execution.executor", opts.executor)
    if opts.interval_ms is not None:
        config.set_string("execution.micro-batch.interval", str(opts.interval_ms))
    env = StreamExecutionEnvironment.get_execution_environment(config, session)
    env.set_parallelism(opts.parallelism)
    source, sink = RateSource(rate, warmup + seconds, opts.keys), LatencySink()
    env.add_source(source, "rate").key_by(lambda r: r[0]) \
        .process(CountWithCreation()).add_sink(sink)
    timeline = BatchTimeline(None if session is None else session.sparkContext)
    with timeline.recording():
        env.execute("latency")
    pairs, counts = sink.read()
    since = source.started + warmup
    batches = [b for b in timeline.batches if b.planned >= since]
    cuts = [b.cut for b in timeline.batches]
    latency, committed, waiting, in_batch = [], [], [], []
    for created, sunk in pairs:
        batch = timeline.batches[min(bisect.bisect_left(cuts, created), len(cuts) - 1)]
        batch.first_sunk = min(sunk, batch.first_sunk or sunk)
        batch.last_sunk = max(sunk, batch.last_sunk or sunk)
        if created < since:
            continue
        latency.append((sunk - created) * 1000)
        waiting.append((batch.cut - created) * 1000)
        in_batch.append((sunk - batch.cut) * 1000)
        committed.append((batch.committed - created) * 1000)
    for values in (latency, committed, waiting, in_batch):
        values.sort()
    return Measurement(source.emitted, len(pairs), counts, latency, committed, waiting,
                       in_batch, batches)


def percentile(sorted_values: List[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(len(sorted_values) * q))]


def _summary(values: List[float]) -> str:
    if not values:
        return "no records"
    return (f"p50 {percentile(values, 0.5):7.1f}  p99 {percentile(values, 0.99):7.1f}  "
            f"max {values[-1]:7.1f}")


def _mean_p99(values: List[float]) -> str:
    values = sorted(values)
    return f"{sum(values) / len(values):.1f} / {percentile(values, 0.99):.1f}"


def report(executor: str, rate: float, m: Measurement) -> None:
    batches = m.batches
    print(f"{executor} at {rate:,.0f} rec/s offered: {m.offered:,} records, {m.received:,} "
          f"reached the sink, {len(m.latency):,} measured, {len(batches)} batches")
    print(f"  to the sink (ms)      {_summary(m.latency)}")
    print(f"  to the commit (ms)    {_summary(m.committed)}")
    print(f"    waiting for a batch {_summary(m.waiting)}")
    print(f"    batch to the sink   {_summary(m.in_batch)}")
    if len(batches) < 2:
        return
    pairs = list(zip(batches, batches[1:]))
    rests = [(b.planned - a.planned - sum(a.seconds.values())) * 1000 for a, b in pairs]
    records = sum(b.records for b in batches) / len(batches)
    jobs = sum(b.spark_jobs for b in batches) / len(batches)
    print(f"  per batch (ms, mean / p99): cycle "
          f"{_mean_p99([(b.planned - a.planned) * 1000 for a, b in pairs])}, records "
          f"{records:,.0f}" + (f", Spark jobs {jobs:.2f}" if executor == "spark" else ""))
    print("    " + ", ".join(f"{phase} {_mean_p99([b.seconds[phase] * 1000 for b in batches])}"
                             for phase in batches[0].seconds)
          + f", rest (sleep to the interval, bookkeeping) {_mean_p99(rests)}")
    sunk = [b for b in batches if b.first_sunk is not None]
    if sunk:
        spans = {"start to first sink write": [b.first_sunk - b.run_started for b in sunk],
                 "first to last": [b.last_sunk - b.first_sunk for b in sunk],
                 "last sink write to end": [b.run_ended - b.last_sunk for b in sunk]}
        print("    within run: " + ", ".join(f"{name} {_mean_p99([s * 1000 for s in values])}"
                                            for name, values in spans.items()))


def _nothing_to_ship(partition, rows):
    for _ in rows:  # (a Python worker that leaves input unread is not reused)
        pass
    return [(partition, "chunk"), "for the driver"]


def _chunks_and_results(row):
    """The first stage's chunk to its target, its result for the driver to partition 0."""
    return [row] if isinstance(row, tuple) else [(0, row)]


def spark_floor(session, parallelism: int, runs: int = 20) -> List[float]:
    """ms of Spark jobs built as ``SparkExecutor.run_batch`` builds a batch of this job
    (two stages of ``mapPartitionsWithIndex`` with a ``partitionBy`` between, which also
    carries the first stage's results for the driver; the second stage collected) whose
    Python functions do nothing: Spark's own cost per batch."""
    sc = session.sparkContext
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        sc.parallelize([[]] * parallelism, parallelism) \
            .mapPartitionsWithIndex(_nothing_to_ship).flatMap(_chunks_and_results) \
            .partitionBy(parallelism, int).mapPartitionsWithIndex(_nothing_to_ship).collect()
        seconds.append((time.perf_counter() - started) * 1000)
    return sorted(seconds)


def main(argv=None):
    """Prints the report; returns [(executor, rate, Measurement)] in the order run."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rates", default="1000,10000", help="records/s offered, comma-separated")
    p.add_argument("--seconds", type=float, default=15, help="measured seconds per rate")
    p.add_argument("--warmup", type=float, default=5, help="seconds run before measuring")
    p.add_argument("--executor", default="spark", help="spark, local or both: spark,local")
    p.add_argument("--parallelism", type=int, default=2)
    p.add_argument("--master", default="local[2]", help="Spark master (executor spark)")
    p.add_argument("--interval-ms", type=int, default=None,
                   help="execution.micro-batch.interval (default: the engine's, 200 ms)")
    p.add_argument("--keys", type=int, default=1000, help="distinct keys")
    opts = p.parse_args(argv)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.1f}, "
          f"parallelism {opts.parallelism}, {opts.keys} keys, micro-batch interval "
          f"{opts.interval_ms or 'default (200)'} ms, warm-up {opts.warmup} s, "
          f"{opts.seconds} s measured")
    measured = []
    for executor in opts.executor.split(","):
        opts.executor = executor
        session = None
        if executor == "spark":
            from engine.executor.spark import get_spark_session
            session = get_spark_session(opts.master, {})
        for rate in (float(r) for r in opts.rates.split(",")):
            measured.append((executor, rate, run(opts, session, rate, opts.seconds, opts.warmup)))
            report(*measured[-1])
        if session is not None:
            print("Spark alone, an empty job built like a batch of this job (two stages, a "
                  f"shuffle, collect), ms: {_summary(spark_floor(session, opts.parallelism))}")
    return measured


if __name__ == "__main__":
    main()
