"""Kafka clients for the connector: the properties (``KafkaConfig``), librdkafka
producers and consumers made from them and kept per process and thread across batches (a
forked process starts with none), reading a partition's offset range (``consume``) and
producing (``produce``), and the error raised when the brokers do not answer.

Timeouts (Kafka's Java client's property names, read here and not passed to
librdkafka): ``default.api.timeout.ms`` bounds metadata and offset queries and a read
that stops making progress (default 60 s); ``max.block.ms`` bounds starting and
committing a transaction (default 60 s); ``delivery.timeout.ms`` bounds delivering a
produced record (librdkafka's default, 300 s).
"""
import logging
import os
import re
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple

log = logging.getLogger(__name__)

# librdkafka logs every failed connection attempt; the errors raised here report outages.
CLIENT_LOG = logging.getLogger(__name__ + ".librdkafka")
CLIENT_LOG.setLevel(logging.CRITICAL)

DEFAULT_API_TIMEOUT_MS = 60_000
DEFAULT_MAX_BLOCK_MS = 60_000

# Settings of Flink or of Kafka's Java client that librdkafka does not take.
_NOT_FOR_LIBRDKAFKA = frozenset({
    "partition.discovery.interval.ms", "client.id.prefix", "commit.offsets.on.checkpoint",
    "register.consumer.metrics", "default.api.timeout.ms", "max.block.ms",
    "key.deserializer", "value.deserializer", "key.serializer", "value.serializer",
    "flink.partition-discovery.interval-millis"})
_UNKNOWN_PROPERTY = re.compile(r'No such configuration property: "([^"]+)"')


def kafka_library():
    """The confluent-kafka client library (an ImportError saying how to install it if it
    is missing)."""
    try:
        import confluent_kafka
    except ImportError:
        raise ImportError("The Kafka connector needs the confluent-kafka client: "
                          "pip install 'spark-datastream[kafka]'") from None
    return confluent_kafka


class KafkaUnavailableError(ConnectionError):
    """The Kafka brokers did not answer within the configured time."""


class KafkaConfig:
    """A connector's Kafka properties (Flink's names); makes librdkafka clients from them."""

    def __init__(self, properties: Dict[str, str]):
        self.properties = {str(k): str(v) for k, v in properties.items()}

    def millis(self, name: str, default: int) -> int:
        return int(self.properties.get(name, default))

    def timeout_s(self, name: str, default: int) -> float:
        return self.millis(name, default) / 1000

    def down(self, what: str, setting: str, default: int, cause) -> KafkaUnavailableError:
        return KafkaUnavailableError(
            f"Kafka at {self.properties.get('bootstrap.servers')} did not answer {what} "
            f"within {self.millis(setting, default)} ms (property {setting}): {cause}")

    def client_settings(self, **overrides) -> Dict[str, Any]:
        settings = {k: v for k, v in self.properties.items() if k not in _NOT_FOR_LIBRDKAFKA}
        settings["logger"] = CLIENT_LOG
        settings.update(overrides)
        return settings


_dropped_warned: set = set()


def new_client(kind: Callable, settings: Dict[str, Any]):
    """``kind(settings)``, leaving out properties librdkafka does not know (Java-client
    settings a Flink program may carry), with one warning naming them."""
    settings = dict(settings)
    while True:
        try:
            return kind(settings)
        except Exception as e:  # KafkaException, or ValueError from confluent-kafka
            match = _UNKNOWN_PROPERTY.search(str(e))
            if match is None or match[1] not in settings:
                raise
            name = match[1]
            del settings[name]
            if name not in _dropped_warned:
                _dropped_warned.add(name)
                log.warning("Kafka property %r is not used here: the client (librdkafka) "
                            "does not know it", name)


_cache_lock = threading.Lock()
_clients: Dict[tuple, Any] = {}
_parents_clients: list = []  # in a forked process: never used, nor freed


def _start_afresh_after_fork() -> None:
    """A forked process (a subtask host) does not own its parent's clients, whose threads
    did not come with it: it makes its own, and never touches the parent's (freeing one
    would wait for threads that are not there)."""
    global _cache_lock, _clients
    _parents_clients.append(_clients)
    _cache_lock, _clients = threading.Lock(), {}


if hasattr(os, "register_at_fork"):  # (not on Windows, which has no fork)
    os.register_at_fork(after_in_child=_start_afresh_after_fork)


def cached_client(kind_name: str, settings: Dict[str, Any],
                  prepare: Optional[Callable[[Any], None]] = None):
    """A client per process, thread and settings, kept across batches (tasks run many
    batches in one Python worker); ``prepare(client)`` runs once on a new client, before
    it is kept."""
    key = (kind_name, threading.get_ident(), tuple(sorted(settings.items())))
    with _cache_lock:
        client = _clients.get(key)
    if client is None:
        client = new_client(getattr(kafka_library(), kind_name), settings)
        if prepare is not None:
            prepare(client)
        with _cache_lock:
            _clients[key] = client
    return client


def forget_client(client) -> None:
    """Drops ``client`` from the cache: the next request makes a new one."""
    with _cache_lock:
        for key in [k for k, v in _clients.items() if v is client]:
            del _clients[key]


def reader_settings(config: KafkaConfig) -> Dict[str, Any]:
    """The settings of a consumer reading planned offset ranges (no group, no commits)."""
    get = config.properties.get
    return config.client_settings(**{
        "group.id": get("group.id", "spark-datastream-reader"),
        "enable.auto.commit": False,
        "enable.partition.eof": True,
        "isolation.level": get("isolation.level", "read_committed"),
        # A read ends at a planned offset, and the next read (often of another partition)
        # waits for the fetch still pending at the end of the last one: keep it short.
        "fetch.wait.max.ms": get("fetch.wait.max.ms", 10)})


def consume(config: KafkaConfig, topic: str, partition: int, start: int,
            end: int) -> Iterator[Any]:
    """The messages of one partition from offset ``start`` up to ``end`` (exclusive),
    read with the connector's isolation level; offsets without a message (control
    records, compacted gaps) are skipped. Fails when the broker gives no progress for
    ``default.api.timeout.ms``."""
    kafka = kafka_library()
    consumer = cached_client("Consumer", reader_settings(config))
    consumer.assign([kafka.TopicPartition(topic, partition, start)])
    timeout = config.timeout_s("default.api.timeout.ms", DEFAULT_API_TIMEOUT_MS)
    position, deadline = start, time.monotonic() + timeout
    last_error, closed = "no records arrived", False
    try:
        while position < end:
            messages = consumer.consume(num_messages=min(end - position, 10_000), timeout=0.2)
            progressed = False
            for message in messages:
                error = message.error()
                if error is not None and error.code() != kafka.KafkaError._PARTITION_EOF:
                    if error.fatal() or not (error.retriable() or error.code() in (
                            kafka.KafkaError._TRANSPORT, kafka.KafkaError._ALL_BROKERS_DOWN)):
                        raise kafka.KafkaException(error)
                    last_error = error.str()  # the client retries until the deadline
                    continue
                if message.topic() != topic or message.partition() != partition:
                    continue  # a message of an earlier assignment still queued
                if error is not None:  # the end of the partition, for now
                    if message.offset() > position:
                        position, progressed = message.offset(), True
                    continue
                if message.offset() >= end:
                    position = end
                    break
                position, progressed = message.offset() + 1, True
                yield message
            if position < end and not progressed:
                reached = consumer.position([kafka.TopicPartition(topic, partition)])[0].offset
                if reached > position:
                    position = reached
                elif time.monotonic() > deadline:
                    raise config.down(f"reading {topic}:{partition} at offset {position} "
                                      f"(up to {end})", "default.api.timeout.ms",
                                      DEFAULT_API_TIMEOUT_MS, last_error)
                continue
            deadline = time.monotonic() + timeout
    except Exception:
        closed = True
        forget_client(consumer)  # its state is unknown: the next read starts afresh
        consumer.close()
        raise
    finally:  # also when the caller stops early
        if not closed:
            consumer.unassign()  # no fetching while the task does other work


class ProducerRecord(NamedTuple):
    """What a KafkaSink's ``to_record`` gives for a record (a tuple of its first three
    fields is one too): its topic, key and value bytes, timestamp (ms; None: the
    producer's time) and headers ((key, value bytes) pairs)."""
    topic: str
    key: Optional[bytes]
    value: Optional[bytes]
    timestamp: Optional[int] = None
    headers: Optional[List[Tuple[str, bytes]]] = None


def produce(producer, topic, key, value, headers, on_delivery, timestamp: int = 0) -> None:
    """``producer.produce(...)``, letting the client send while its queue is full
    (``timestamp`` in ms; 0: the producer's time)."""
    while True:
        try:
            producer.produce(topic, value=value, key=key, headers=headers,
                             on_delivery=on_delivery, timestamp=timestamp)
            return
        except BufferError:  # the client's queue is full: let it send
            producer.poll(0.1)
