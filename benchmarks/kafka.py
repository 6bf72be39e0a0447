"""Kafka benchmarks, against a Tansu broker started here (the test broker, memory storage):

    python -m benchmarks.kafka throughput --n 200000 [--parallelism 2] [--guarantee exactly-once]
    python -m benchmarks.kafka latency --rates 1000,10000 [--seconds 20] [--charts DIR]
    python -m benchmarks.kafka sustainable [--guarantees at-least-once,exactly-once] \
        [--p99-ms 1000] [--seconds 120] [--start-rate 1000] [--max-rate 64000] \
        [--charts benchmarks/charts]

throughput: Kafka -> map -> Kafka over a 2-partition topic (bounded at the offsets of the
start), records/s of the engine beside a pure-Python single-process loop (one consumer,
the same map, one producer) measured in the same run.

latency: an unbounded Kafka -> key_by -> count -> Kafka job while a producer offers
``rate`` records/s; each result carries its input record's Kafka timestamp, and a
consumer of the output topic reports p50/p99 of (output record's Kafka timestamp - input
record's Kafka timestamp). The first 10 % of the results (the job catching up after its
start) are left out. With ``--charts DIR`` it writes DIR/kafka-latency-over-time.png: p50
and p99 per 1 s window over each rate's run.

sustainable: per delivery guarantee, the highest offered rate the latency job sustains
(the Yahoo streaming benchmark's method): a rate is sustainable if, over a whole run of
``--seconds``, p99 stays under ``--p99-ms`` and the job does not fall behind (falling
behind: the p50 of the run's last third of time is over twice that of its first third
and over half the bound, or the last third has no results). The rate doubles from
``--start-rate`` while sustainable (up to ``--max-rate``), then is bisected between the
last good and the first bad rate until they are within 15 % (halved from the start while
nothing is sustainable). Each run has a fresh broker. Printed: each tried rate with the
records offered and the results read, p50/p99 and the verdict, then per guarantee the
highest sustainable rate with its p50/p99. Charts in ``--charts`` (default
benchmarks/charts): kafka-latency-over-time.png (p50/p99 per 1 s window at each
guarantee's highest sustainable rate) and kafka-latency-vs-rate.png (p99 against offered
rate, log x axis, with the bound). The charts need matplotlib (``pip install
'spark-datastream[bench]'``).
"""
import argparse
import concurrent.futures
import os
import sys
import threading
import time
from collections import Counter
from typing import Callable, Iterable, List, NamedTuple, Optional, Tuple

from api.common import Configuration, Types, WatermarkStrategy
from api.common.serialization import SimpleStringSchema
from api.datastream import KeyedProcessFunction, StreamExecutionEnvironment
from api.datastream.connectors.base import DeliveryGuarantee
from api.datastream.connectors.kafka import (KafkaOffsetsInitializer,
                                             KafkaRecordSerializationSchema, KafkaSink,
                                             KafkaSource)
from api.datastream.state import ValueStateDescriptor
from engine.executor.spark import get_spark_session
from benchmarks.kafka_broker import TansuBroker, create_topic, produce_many, unique_topic

GUARANTEES = {"none": DeliveryGuarantee.NONE, "at-least-once": DeliveryGuarantee.AT_LEAST_ONCE,
              "exactly-once": DeliveryGuarantee.EXACTLY_ONCE}
OVER_TIME, AGAINST_RATE = "kafka-latency-over-time.png", "kafka-latency-vs-rate.png"
MIN_RATE = 100  # records/s: the sustainable search gives up below it
DRAIN_QUIET_S = 30  # after the offering: wait this long for more results before counting
upper = str.upper


def environment(opts, session, **conf) -> StreamExecutionEnvironment:
    config = Configuration()
    config.set_string("execution.executor", opts.executor)
    config.set_string("execution.micro-batch.size", str(opts.micro_batch_size))
    for key, value in conf.items():
        config.set_string(key, str(value))
    env = StreamExecutionEnvironment.get_execution_environment(config, session)
    env.set_parallelism(opts.parallelism)
    return env


def _source(bootstrap, topic, bounded: bool):
    builder = KafkaSource.builder().set_bootstrap_servers(bootstrap).set_topics(topic) \
        .set_group_id("benchmark").set_value_only_deserializer(SimpleStringSchema()) \
        .set_starting_offsets(KafkaOffsetsInitializer.earliest())
    if bounded:
        builder = builder.set_bounded(KafkaOffsetsInitializer.latest())
    return builder.build()


def _sink(bootstrap, topic, guarantee):
    return KafkaSink.builder().set_bootstrap_servers(bootstrap) \
        .set_record_serializer(KafkaRecordSerializationSchema.builder().set_topic(topic)
                               .set_value_serialization_schema(SimpleStringSchema()).build()) \
        .set_delivery_guarantee(guarantee).set_transactional_id_prefix("benchmark").build()


def run_engine(opts, session, bootstrap, source_topic, guarantee) -> float:
    out = create_topic(bootstrap, unique_topic("out"), 2)
    env = environment(opts, session)
    env.from_source(_source(bootstrap, source_topic, bounded=True),
                    WatermarkStrategy.no_watermarks(), "in") \
        .map(upper, Types.STRING()).sink_to(_sink(bootstrap, out, guarantee))
    started = time.perf_counter()
    env.execute("kafka-throughput")
    return time.perf_counter() - started


def produce_waiting(producer, topic: str, value: bytes, **kwargs) -> None:
    """``producer.produce``, waiting while its queue is full."""
    while True:
        try:
            return producer.produce(topic, value, **kwargs)
        except BufferError:
            producer.poll(0.05)


def run_baseline(bootstrap, source_topic, n: int) -> float:
    """One process: consume every record, map it, produce it, flush."""
    from confluent_kafka import Consumer, Producer, TopicPartition
    out = create_topic(bootstrap, unique_topic("out"), 2)
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "baseline",
                         "enable.auto.commit": False, "isolation.level": "read_committed"})
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20})
    started = time.perf_counter()
    partitions = consumer.list_topics(source_topic, timeout=30).topics[source_topic].partitions
    consumer.assign([TopicPartition(source_topic, p, 0) for p in partitions])
    seen = 0
    while seen < n:
        for message in consumer.consume(10_000, 1.0):
            if message.error() is None:
                produce_waiting(producer, out, upper(message.value().decode()).encode())
                seen += 1
    producer.flush(60)
    consumer.close()
    return time.perf_counter() - started


class CountWithInputTime(KeyedProcessFunction):
    """Per key: the count so far, with the input record's Kafka timestamp."""

    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("n", Types.LONG()))

    def process_element(self, value, ctx):
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        yield f"{value},{n},{ctx.timestamp()}"


class LatencyRun(NamedTuple):
    """One run of the latency job at an offered ``rate`` (``offered`` records in all):
    per result, in arrival order, (seconds from the start of the offering to the output
    timestamp, latency in ms); and how many records the output lacks and holds twice."""
    guarantee: str
    rate: int
    seconds: float
    offered: int
    series: List[Tuple[float, int]]
    missing: int = 0
    duplicated: int = 0

    def steady(self) -> List[Tuple[float, int]]:
        """The series without its first 10 % (the job catching up after its start)."""
        return self.series[len(self.series) // 10:] if len(self.series) > 20 else self.series

    def percentiles(self) -> Tuple[Optional[int], Optional[int]]:
        """p50 and p99 of the steady latencies (None without results)."""
        return percentiles([latency for _, latency in self.steady()])

    def thirds(self) -> Tuple[Optional[int], Optional[int]]:
        """p50 of the steady latencies of the run's first and last thirds of time."""
        steady = self.steady()
        return (percentiles([l for t, l in steady if t < self.seconds / 3])[0],
                percentiles([l for t, l in steady if t >= self.seconds * 2 / 3])[0])

    def verdict(self, p99_ms: float) -> str:
        """"sustainable", or why not: no results, records missing (or duplicated, for
        exactly-once), p99 over the bound, or falling behind (p50 of the last third over
        twice the first third's and over half the bound)."""
        p99 = self.percentiles()[1]
        first, last = self.thirds()
        if p99 is None:
            return "no results"
        if self.missing or (self.duplicated and self.guarantee == "exactly-once"):
            return f"{self.missing:,} missing, {self.duplicated:,} duplicated"
        if p99 >= p99_ms:
            return "p99 over bound"
        if last is None or (first is not None and last > 2 * first and last > p99_ms / 2):
            return "falling behind"
        return "sustainable"


def missing_and_duplicated(counts: Iterable[Tuple[str, int]], offered: int
                           ) -> Tuple[int, int]:
    """How many of ``offered`` records a keyed count's results ``(key, n)`` lack, and how
    many they hold twice (a result repeated, or a record counted twice): every record
    counted once gives each key 1..n once, the n's adding up to ``offered``."""
    seen = Counter(counts)
    highest = Counter()
    for key, n in seen:
        highest[key] = max(highest[key], n)
    counted = sum(highest.values())
    missing = counted - len(seen) + max(0, offered - counted)
    return missing, sum(copies - 1 for copies in seen.values()) + max(0, counted - offered)


def percentiles(latencies) -> Tuple[Optional[int], Optional[int]]:
    """p50 and p99 of ``latencies`` (None, None if empty)."""
    if not latencies:
        return None, None
    ordered = sorted(latencies)
    return tuple(ordered[min(len(ordered) - 1, int(len(ordered) * q))] for q in (0.5, 0.99))


def measure_latency(opts, session, guarantee: str, rate: int, seconds: float) -> LatencyRun:
    """Runs the keyed count job ``seconds`` seconds (after ``opts.warmup``) while a
    producer offers ``rate`` records/s, and collects each result's latency. Each run has
    a broker of its own: Tansu's memory storage slows down as it fills."""
    from confluent_kafka import Consumer, Producer, TopicPartition
    broker = TansuBroker().start()
    bootstrap = broker.bootstrap
    try:
        source_topic = create_topic(bootstrap, unique_topic("lat-in"), 2)
        out = create_topic(bootstrap, unique_topic("lat-out"), 2)
        env = environment(opts, session, **{"execution.micro-batch.interval": opts.interval_ms})
        env.from_source(_source(bootstrap, source_topic, bounded=False),
                        WatermarkStrategy.no_watermarks(), "in") \
            .key_by(lambda v: v).process(CountWithInputTime(), Types.STRING()) \
            .sink_to(_sink(bootstrap, out, GUARANTEES[guarantee])) \
            .set_parallelism(opts.sink_parallelism or opts.parallelism)
        client = env.execute_async("kafka-latency")
        series, sent = [], 0
        stop = threading.Event()

        def offer():
            nonlocal sent
            # Batches of opts.linger_ms, as producers send: the test broker (Tansu, memory
            # storage) fetches in time that grows with the number of record batches in a
            # partition, so one record per batch (linger.ms 1 at these rates) makes it
            # ever slower to read, job or no job (a plain consumer sees the same).
            producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": opts.linger_ms})
            started = time.monotonic()
            while not stop.is_set():
                due = int((time.monotonic() - started) * rate)
                for i in range(sent, due):
                    produce_waiting(producer, source_topic, f"k{i % 100}".encode(),
                                    partition=i % 2)
                sent = due
                producer.poll(0)
                time.sleep(0.001)
            producer.flush(30)
            for partition in range(2):  # alone in a batch: the broker's watermark shows all
                produce_waiting(producer, source_topic, f"k{sent % 100}".encode(),
                                partition=partition)
                producer.flush(30)
                sent += 1

        consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "latency",
                             "isolation.level": "read_committed", "enable.auto.commit": False})
        consumer.assign([TopicPartition(out, p, 0) for p in range(2)])
        time.sleep(opts.warmup)  # the job's first batches (Spark workers start)
        offering = threading.Thread(target=offer, daemon=True)
        started_ms = time.time() * 1000
        offering.start()
        counts = []

        def take(wait_s: float) -> int:
            messages = [m for m in consumer.consume(1000, wait_s) if m.error() is None]
            for message in messages:
                key, n, input_time = message.value().decode().rsplit(",", 2)
                output_time = message.timestamp()[1]
                series.append(((output_time - started_ms) / 1000,
                               output_time - int(input_time)))
                counts.append((key, int(n)))
            return len(messages)

        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            take(0.1)
        stop.set()
        offering.join()
        quiet_since = time.monotonic()  # the results of what was offered last
        while len(counts) < sent and time.monotonic() - quiet_since < DRAIN_QUIET_S:
            if take(0.5):
                quiet_since = time.monotonic()
        try:  # a batch stuck reading an overloaded broker ends at its 60 s read timeout
            client.cancel().result(timeout=180)
        except concurrent.futures.TimeoutError:
            print(f"the job at {rate:,}/s did not stop within 180 s; it is left running, "
                  f"its broker stopped", file=sys.stderr)
        consumer.close()
        return LatencyRun(guarantee, rate, seconds, sent, series,
                          *missing_and_duplicated(counts, sent))
    finally:
        broker.stop()


def find_sustainable(trial: Callable[[int], LatencyRun], start_rate: int, max_rate: int,
                     p99_ms: float) -> List[LatencyRun]:
    """The runs of a search for the highest sustainable rate: doubling from
    ``start_rate`` (capped at ``max_rate``) while sustainable, then bisecting between the
    last good and the first bad rate until they are within 15 %; halving from the start
    while nothing is sustainable, down to MIN_RATE."""
    runs, good, bad = [], 0, None
    rate = start_rate
    while True:
        runs.append(trial(rate))
        if runs[-1].verdict(p99_ms) == "sustainable":
            good = rate
        else:
            bad = rate
        if bad is None:
            if rate >= max_rate:
                return runs
            rate = min(2 * rate, max_rate)
        else:
            rate = (good + bad) // 2
            if bad <= good * 1.15 or rate < MIN_RATE:
                return runs


def highest_sustainable(runs: List[LatencyRun], p99_ms: float) -> Optional[LatencyRun]:
    """The run at the highest sustainable rate, if any."""
    good = [run for run in runs if run.verdict(p99_ms) == "sustainable"]
    return max(good, key=lambda run: run.rate) if good else None


def _ms(value) -> str:
    return "-" if value is None else f"{value:,}"


def print_trial(run: LatencyRun, p99_ms: float) -> None:
    """One row of the table of tried rates."""
    p50, p99 = run.percentiles()
    first, last = run.thirds()
    print(f"{run.guarantee:<14} {run.rate:>10,} {run.offered:>9,} {len(run.series):>9,} "
          f"{_ms(p50):>7} {_ms(p99):>7} {_ms(first):>8} / {_ms(last):<8} "
          f"{run.verdict(p99_ms)}", flush=True)


def print_summary(runs: List[LatencyRun], guarantees: List[str], p99_ms: float) -> None:
    """Per guarantee: the highest sustainable rate and its p50/p99."""
    print(f"\n{'guarantee':<14} {'sustainable/s':>13} {'p50 ms':>7} {'p99 ms':>7}")
    for guarantee in guarantees:
        best = highest_sustainable([r for r in runs if r.guarantee == guarantee], p99_ms)
        p50, p99 = best.percentiles() if best else (None, None)
        print(f"{guarantee:<14} {_ms(best and best.rate):>13} {_ms(p50):>7} {_ms(p99):>7}")


def _axes():
    """New axes of a 9 x 5 inch figure on matplotlib's file-only backend."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot
    return pyplot.subplots(figsize=(9, 5))[1]


def _save(axes, path: str, p99_ms: Optional[float], **labels) -> None:
    """Draws the bound (if any), labels the axes, writes the PNG and frees the figure."""
    from matplotlib import pyplot
    if p99_ms is not None:
        axes.axhline(p99_ms, color="grey", linestyle=":", label=f"bound {p99_ms:,.0f} ms")
    axes.set(**labels)
    axes.set_ylim(bottom=0)
    axes.legend(fontsize="small")
    axes.figure.savefig(path, dpi=100, bbox_inches="tight")
    pyplot.close(axes.figure)


def chart_over_time(runs: List[LatencyRun], path: str, p99_ms: Optional[float] = None):
    """PNG of p50 (dashed) and p99 latency per 1 s window over each run."""
    axes = _axes()
    for run in runs:
        windows = {}
        for t, latency in run.steady():
            windows.setdefault(int(t), []).append(latency)
        seconds = sorted(windows)
        p50s, p99s = zip(*(percentiles(windows[s]) for s in seconds)) if seconds else ((), ())
        label = f"{run.guarantee}, {run.rate:,}/s"
        line, = axes.plot(seconds, p99s, label=f"{label}: p99")
        axes.plot(seconds, p50s, linestyle="--", color=line.get_color(), label=f"{label}: p50")
    _save(axes, path, p99_ms, xlabel="seconds since the offering started",
          ylabel="latency (ms)", title="Kafka -> keyed count -> Kafka: latency per 1 s window")


def chart_against_rate(runs: List[LatencyRun], guarantees: List[str], path: str,
                       p99_ms: float):
    """PNG of p99 latency against offered rate per guarantee (log x), with the bound;
    dots are sustainable runs, crosses are not."""
    axes = _axes()
    for guarantee in guarantees:
        tried = sorted((r for r in runs if r.guarantee == guarantee and r.series),
                       key=lambda r: r.rate)
        line, = axes.plot([r.rate for r in tried], [r.percentiles()[1] for r in tried],
                          label=guarantee)
        for run in tried:
            axes.plot(run.rate, run.percentiles()[1], color=line.get_color(),
                      marker="o" if run.verdict(p99_ms) == "sustainable" else "x")
    axes.set_xscale("log")
    rates = sorted({run.rate for run in runs})
    axes.set_xticks(rates, [f"{rate:,}" for rate in rates], rotation=45)
    axes.minorticks_off()
    _save(axes, path, p99_ms, xlabel="offered rate (records/s)", ylabel="p99 latency (ms)",
          title="Kafka -> keyed count -> Kafka: p99 against offered rate (o sustainable, x not)")


def throughput(opts, session) -> None:
    """Times the engine and the pure-Python loop over the same topic and prints both."""
    broker = TansuBroker().start()
    try:
        bootstrap = broker.bootstrap
        topic = create_topic(bootstrap, unique_topic("in"), 2)
        produce_many(bootstrap, topic, opts.n, lambda i: f"record-{i}")
        run_engine(opts, session, bootstrap, topic, GUARANTEES[opts.guarantee])  # warm-up
        ours = run_engine(opts, session, bootstrap, topic, GUARANTEES[opts.guarantee])
        base = run_baseline(bootstrap, topic, opts.n)
        print(f"Kafka -> map -> Kafka ({opts.guarantee}), N={opts.n}, "
              f"{opts.executor} parallelism {opts.parallelism}: "
              f"ours {opts.n / ours:,.0f} rec/s ({ours:.2f} s), pure-Python loop "
              f"{opts.n / base:,.0f} rec/s ({base:.2f} s), ratio {base / ours:.3f}")
    finally:
        broker.stop()


def sustainable(opts, session) -> List[LatencyRun]:
    """Searches the highest sustainable rate per guarantee, prints the tables and writes
    the charts."""
    guarantees = opts.guarantees.split(",")
    print(f"Kafka -> keyed count -> Kafka, {opts.seconds:g} s per rate, p99 bound "
          f"{opts.p99_ms:g} ms, {opts.executor} parallelism {opts.parallelism}\n"
          f"{'guarantee':<14} {'offered/s':>10} {'offered':>9} {'results':>9} {'p50 ms':>7} "
          f"{'p99 ms':>7} {'p50 first / last third':<19} verdict")
    runs = []
    for guarantee in guarantees:
        def trial(rate):
            run = measure_latency(opts, session, guarantee, rate, opts.seconds)
            print_trial(run, opts.p99_ms)
            return run
        runs += find_sustainable(trial, opts.start_rate, opts.max_rate, opts.p99_ms)
    print_summary(runs, guarantees, opts.p99_ms)
    charts = opts.charts or os.path.join("benchmarks", "charts")
    os.makedirs(charts, exist_ok=True)
    best = [highest_sustainable([r for r in runs if r.guarantee == g], opts.p99_ms)
            for g in guarantees]
    chart_over_time([run for run in best if run], os.path.join(charts, OVER_TIME), opts.p99_ms)
    chart_against_rate(runs, guarantees, os.path.join(charts, AGAINST_RATE), opts.p99_ms)
    print(f"charts: {os.path.join(charts, OVER_TIME)}, {os.path.join(charts, AGAINST_RATE)}")
    return runs


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["throughput", "latency", "sustainable"])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--rates", default="1000,10000")
    parser.add_argument("--seconds", type=float,
                        help="per rate; default 20 (latency), 120 (sustainable)")
    parser.add_argument("--warmup", type=float, default=8)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--executor", default="spark")
    parser.add_argument("--micro-batch-size", type=int, default=500_000)
    parser.add_argument("--interval-ms", type=int, default=100)
    parser.add_argument("--linger-ms", type=int, default=5,
                        help="the offering producer's linger.ms (longer runs on the test "
                             "broker need fewer, larger record batches)")
    parser.add_argument("--sink-parallelism", type=int,
                        help="the latency job's sink's (default --parallelism): with one "
                             "subtask, no two transactions are open at once, which the test "
                             "broker needs to make each visible at its commit")
    parser.add_argument("--guarantee", choices=list(GUARANTEES), default="exactly-once")
    parser.add_argument("--guarantees", default="at-least-once,exactly-once")
    parser.add_argument("--p99-ms", type=float, default=1000)
    parser.add_argument("--start-rate", type=int, default=1000)
    parser.add_argument("--max-rate", type=int, default=64_000)
    parser.add_argument("--charts", help="directory of the PNG charts; default "
                        "benchmarks/charts (sustainable), none (latency)")
    opts = parser.parse_args(argv)
    if opts.seconds is None:
        opts.seconds = 120 if opts.what == "sustainable" else 20
    session = get_spark_session(f"local[{opts.parallelism}]", {}) \
        if opts.executor == "spark" else None
    if opts.what == "throughput":
        throughput(opts, session)
    elif opts.what == "latency":
        runs = []
        for rate in [int(r) for r in opts.rates.split(",")]:
            runs.append(measure_latency(opts, session, opts.guarantee, rate, opts.seconds))
            p50, p99 = runs[-1].percentiles()
            print(f"Kafka -> keyed count -> Kafka ({opts.guarantee}) at {rate:,} rec/s "
                  f"offered: {len(runs[-1].series):,} results, latency p50 {p50} ms, "
                  f"p99 {p99} ms; of {runs[-1].offered:,} records {runs[-1].missing:,} "
                  f"missing, {runs[-1].duplicated:,} duplicated")
        if opts.charts:
            os.makedirs(opts.charts, exist_ok=True)
            chart_over_time(runs, os.path.join(opts.charts, OVER_TIME))
    else:
        sustainable(opts, session)


if __name__ == "__main__":
    main()
