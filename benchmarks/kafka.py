"""Kafka benchmarks, against a Tansu broker started here (the test broker, memory storage):

    python -m benchmarks.kafka throughput --n 200000 [--parallelism 2] [--guarantee exactly-once]
    python -m benchmarks.kafka latency --rates 1000,10000 [--seconds 20]

throughput: Kafka -> map -> Kafka over a 2-partition topic (bounded at the offsets of the
start), records/s of the engine beside a pure-Python single-process loop (one consumer,
the same map, one producer) measured in the same run.

latency: an unbounded Kafka -> key_by -> count -> Kafka job while a producer offers
``rate`` records/s; each result carries its input record's Kafka timestamp, and a
consumer of the output topic reports p50/p99 of (output record's Kafka timestamp - input
record's Kafka timestamp).
"""
import argparse
import statistics
import threading
import time

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
                value = upper(message.value().decode())
                while True:
                    try:
                        producer.produce(out, value.encode())
                        break
                    except BufferError:
                        producer.poll(0.05)
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


def measure_latency(opts, session, bootstrap, rate: int, seconds: float):
    from confluent_kafka import Consumer, Producer, TopicPartition
    source_topic = create_topic(bootstrap, unique_topic("lat-in"), 2)
    out = create_topic(bootstrap, unique_topic("lat-out"), 2)
    env = environment(opts, session, **{"execution.micro-batch.interval": opts.interval_ms})
    env.from_source(_source(bootstrap, source_topic, bounded=False),
                    WatermarkStrategy.no_watermarks(), "in") \
        .key_by(lambda v: v).process(CountWithInputTime(), Types.STRING()) \
        .sink_to(_sink(bootstrap, out, GUARANTEES[opts.guarantee]))
    client = env.execute_async("kafka-latency")
    latencies = []
    stop = threading.Event()

    def offer():
        producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 1})
        started, sent = time.monotonic(), 0
        while not stop.is_set():
            due = int((time.monotonic() - started) * rate)
            for i in range(sent, due):
                producer.produce(source_topic, f"k{i % 100}".encode(), partition=i % 2)
            sent = due
            producer.poll(0)
            time.sleep(0.001)
        producer.flush(30)

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "latency",
                         "isolation.level": "read_committed", "enable.auto.commit": False})
    consumer.assign([TopicPartition(out, p, 0) for p in range(2)])
    time.sleep(opts.warmup)  # the job's first batches (Spark workers start)
    offering = threading.Thread(target=offer, daemon=True)
    offering.start()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for message in consumer.consume(1000, 0.1):
            if message.error() is None:
                input_time = int(message.value().decode().rsplit(",", 1)[1])
                latencies.append(message.timestamp()[1] - input_time)
    stop.set()
    offering.join()
    client.cancel().result(timeout=60)
    consumer.close()
    latencies.sort()
    cut = len(latencies) // 10  # the first 10 %: the job catching up after its start
    steady = latencies[cut:] if len(latencies) > 20 else latencies
    if not steady:
        return 0, None, None
    steady.sort()
    return (len(latencies), statistics.median(steady),
            steady[min(len(steady) - 1, int(len(steady) * 0.99))])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("what", choices=["throughput", "latency"])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--rates", default="1000,10000")
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--warmup", type=float, default=8)
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--executor", default="spark")
    parser.add_argument("--micro-batch-size", type=int, default=500_000)
    parser.add_argument("--interval-ms", type=int, default=100)
    parser.add_argument("--guarantee", choices=list(GUARANTEES), default="exactly-once")
    opts = parser.parse_args(argv)
    session = get_spark_session(f"local[{opts.parallelism}]", {}) \
        if opts.executor == "spark" else None
    broker = TansuBroker().start()
    try:
        bootstrap = broker.bootstrap
        if opts.what == "throughput":
            topic = create_topic(bootstrap, unique_topic("in"), 2)
            produce_many(bootstrap, topic, opts.n, lambda i: f"record-{i}")
            run_engine(opts, session, bootstrap, topic, GUARANTEES[opts.guarantee])  # warm-up
            ours = run_engine(opts, session, bootstrap, topic, GUARANTEES[opts.guarantee])
            base = run_baseline(bootstrap, topic, opts.n)
            print(f"Kafka -> map -> Kafka ({opts.guarantee}), N={opts.n}, "
                  f"{opts.executor} parallelism {opts.parallelism}: "
                  f"ours {opts.n / ours:,.0f} rec/s ({ours:.2f} s), pure-Python loop "
                  f"{opts.n / base:,.0f} rec/s ({base:.2f} s), ratio {base / ours:.3f}")
        else:
            for rate in [int(r) for r in opts.rates.split(",")]:
                count, p50, p99 = measure_latency(opts, session, bootstrap, rate, opts.seconds)
                print(f"Kafka -> keyed count -> Kafka ({opts.guarantee}) at {rate:,} rec/s "
                      f"offered: {count:,} results, latency p50 {p50} ms, p99 {p99} ms")
    finally:
        broker.stop()


if __name__ == "__main__":
    main()
