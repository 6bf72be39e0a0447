"""Kafka for the engine: a ``Source`` whose splits are topic partitions and a ``Sink``
that produces from the tasks (NONE, AT_LEAST_ONCE) or, for EXACTLY_ONCE, delivers each
committed batch in a Kafka transaction, idempotently.

Source: split ``"topic:partition"``; its position is the next offset to read. The driver
bounds each batch's range by the partition's high watermark (the last stable offset with
``read_committed``, Flink's default) queried when it plans, so a task's read is
repeatable and the driver knows where the range ends; control records and gaps inside a
range are skipped.

Exactly-once sink: a task stages its batch's records (``StagingWriter``); once the
driver has committed the batch, ``KafkaTransactionalCommitter.deliver`` produces them in
one transaction, every record with headers naming the job, sink, subtask, batch and its
sequence number. Before producing, it records the end offsets of the target partitions
in a marker file beside the staged file; a repeated delivery (a retried commit task, a
recovery after a crash) reads the topic from there and produces only the records of that
batch the topic does not hold yet. Aborts alone would do on Apache Kafka; the marker
makes a replay safe also on brokers that show aborted records to ``read_committed``
readers.

Timeouts (Kafka's Java client's property names, read here and not passed to
librdkafka): ``default.api.timeout.ms`` bounds metadata and offset queries and a read
that stops making progress (default 60 s); ``max.block.ms`` bounds starting and
committing a transaction (default 60 s); ``delivery.timeout.ms`` bounds delivering a
produced record (librdkafka's default, 300 s).
"""
import json
import logging
import os
import re
import threading
import time
import uuid
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple

from engine.errors import RecordReadError
from engine.io.sinks import (Committer, Sink, SinkWriter, StagedCommitter,
                          StagingWriter, WriterContext, staged_file)
from engine.io.sources import Source, SplitRange

log = logging.getLogger(__name__)

# librdkafka logs every failed connection attempt; the errors raised here report outages.
CLIENT_LOG = logging.getLogger(__name__ + ".client")
CLIENT_LOG.setLevel(logging.CRITICAL)

DEFAULT_DISCOVERY_INTERVAL_MS = 5 * 60 * 1000  # Flink's partition.discovery.interval.ms
DEFAULT_API_TIMEOUT_MS = 60_000
DEFAULT_MAX_BLOCK_MS = 60_000

# Settings of Flink or of Kafka's Java client that librdkafka does not take.
_NOT_FOR_LIBRDKAFKA = frozenset({
    "partition.discovery.interval.ms", "client.id.prefix", "commit.offsets.on.checkpoint",
    "register.consumer.metrics", "default.api.timeout.ms", "max.block.ms",
    "key.deserializer", "value.deserializer", "key.serializer", "value.serializer",
    "flink.partition-discovery.interval-millis"})
_UNKNOWN_PROPERTY = re.compile(r'No such configuration property: "([^"]+)"')
_INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


def _kafka():
    try:
        import confluent_kafka
    except ImportError:
        raise ImportError("The Kafka connector needs the confluent-kafka client: "
                          "pip install 'spark-datastream[kafka]'") from None
    return confluent_kafka


class KafkaUnavailableError(ConnectionError):
    """The Kafka brokers did not answer within the configured time."""


# --- clients ------------------------------------------------------------------------------

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


def _client(kind: Callable, settings: Dict[str, Any]):
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


def _cached(kind_name: str, settings: Dict[str, Any]):
    """A client per process, thread and settings, kept across batches (tasks run many
    batches in one Python worker)."""
    key = (kind_name, threading.get_ident(), tuple(sorted(settings.items())))
    with _cache_lock:
        client = _clients.get(key)
    if client is None:
        client = _client(getattr(_kafka(), kind_name), settings)
        with _cache_lock:
            _clients[key] = client
    return client


def _forget(client) -> None:
    with _cache_lock:
        for key in [k for k, v in _clients.items() if v is client]:
            del _clients[key]


def _reader_settings(config: KafkaConfig) -> Dict[str, Any]:
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
    kafka = _kafka()
    consumer = _cached("Consumer", _reader_settings(config))
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
        _forget(consumer)  # its state is unknown: the next read starts afresh
        consumer.close()
        raise
    finally:  # also when the caller stops early
        if not closed:
            consumer.unassign()  # no fetching while the task does other work


# --- source -------------------------------------------------------------------------------

class Offsets(NamedTuple):
    """Where a Kafka source starts or stops (an engine form of KafkaOffsetsInitializer):
    ``kind`` is earliest, latest, committed, timestamp or offsets; ``reset`` (earliest,
    latest or none) applies to partitions without a committed or given offset."""
    kind: str
    timestamp: Optional[int] = None
    offsets: Optional[Dict[Tuple[str, int], int]] = None
    reset: str = "earliest"


def split_id(topic: str, partition: int) -> str:
    return f"{topic}:{partition}"


def topic_partition(split: str) -> Tuple[str, int]:
    topic, partition = split.rsplit(":", 1)
    return topic, int(partition)


class KafkaPartitionSource(Source):
    """Reads Kafka partitions: one split per topic partition, the position is the next
    offset. Subscribes to ``topics``, a ``topic_pattern`` (whole-name regular expression)
    or fixed ``partitions``; records are ``(Kafka timestamp ms, value)``."""

    stamps_records = True

    def __init__(self, properties: Dict[str, str], deserializer, starting: Offsets,
                 stopping: Optional[Offsets] = None, bounded: bool = False,
                 topics: Optional[List[str]] = None, topic_pattern: Optional[str] = None,
                 partitions: Optional[List[Tuple[str, int]]] = None):
        if [topics, topic_pattern, partitions].count(None) != 2:
            raise ValueError("Give exactly one of topics, topic_pattern and partitions")
        self.config = KafkaConfig(properties)
        self.deserializer = deserializer
        self.starting = starting
        self.stopping = stopping
        self.bounded = bounded
        self.topics = topics
        self.topic_pattern = None if topic_pattern is None else re.compile(topic_pattern)
        self.partitions = partitions
        interval = -1 if bounded else self.config.millis("partition.discovery.interval.ms",
                                                         DEFAULT_DISCOVERY_INTERVAL_MS)
        self.discovery_interval_s = interval / 1000
        self.splits_change = interval > 0 and partitions is None
        self._splits: Optional[List[str]] = None
        self._initial: set = set()  # splits listed first: they start at `starting`
        self._discovered_at = 0.0
        self._stops: Dict[str, int] = {}
        self._admin = None

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_admin"] = None  # the driver's client stays in the driver
        return state

    # driver ----------------------------------------------------------------------------

    def _driver_client(self):
        if self._admin is None:
            self._admin = _client(_kafka().Consumer, _reader_settings(self.config))
        return self._admin

    def _query(self, what: str, call: Callable):
        timeout = self.config.timeout_s("default.api.timeout.ms", DEFAULT_API_TIMEOUT_MS)
        try:
            return call(timeout)
        except _kafka().KafkaException as e:
            raise self.config.down(what, "default.api.timeout.ms",
                                   DEFAULT_API_TIMEOUT_MS, e) from None

    def _discover(self) -> List[str]:
        if self.partitions is not None:
            return [split_id(t, p) for t, p in self.partitions]
        metadata = self._query("a metadata request",
                               lambda t: self._driver_client().list_topics(timeout=t))
        if self.topics is not None:
            missing = [t for t in self.topics if t not in metadata.topics]
            if missing:
                raise ValueError(f"Kafka topics {missing} do not exist at "
                                 f"{self.config.properties.get('bootstrap.servers')}")
            topics = self.topics
        else:
            topics = [t for t in metadata.topics if t not in _INTERNAL_TOPICS
                      and self.topic_pattern.fullmatch(t)]
        return [split_id(t, p) for t in topics for p in metadata.topics[t].partitions]

    def splits(self, parallelism: int) -> List[str]:
        now = time.monotonic()
        if self._splits is None or (self.splits_change and
                                    now - self._discovered_at >= self.discovery_interval_s):
            found = self._discover()
            if self._splits is None:
                self._splits, self._initial = [], set(found)
            known = set(self._splits)
            new = sorted((s for s in found if s not in known), key=topic_partition)
            for split in new:
                self._stop(split)  # where a split stops is fixed when it is found
            self._splits += new
            self._discovered_at = now
        return list(self._splits)

    def _watermarks(self, split: str) -> Tuple[int, int]:
        tp = _kafka().TopicPartition(*topic_partition(split))
        return self._query(f"the offsets of {split}", lambda t: self._driver_client()
                           .get_watermark_offsets(tp, timeout=t, cached=False))

    def _resolve(self, split: str, offsets: Offsets) -> int:
        """The offset ``offsets`` gives for ``split``."""
        kind = offsets.kind
        if kind == "offsets":
            given = offsets.offsets.get(topic_partition(split))
            if given is not None:
                return given
            kind = "committed"
        if kind == "committed":
            committed = self._committed(split)
            if committed is not None:
                return committed
            if offsets.reset == "none":
                raise ValueError(f"Kafka partition {split} has no committed offset for group "
                                 f"{self.config.properties.get('group.id')!r} and the offset "
                                 f"reset strategy is NONE")
            kind = offsets.reset
        if kind == "timestamp":
            return self._first_at_or_after(split, offsets.timestamp)
        low, high = self._watermarks(split)
        return low if kind == "earliest" else high

    def _committed(self, split: str) -> Optional[int]:
        if "group.id" not in self.config.properties:
            return None
        tp = _kafka().TopicPartition(*topic_partition(split))
        found = self._query(f"the committed offset of {split}",
                            lambda t: self._driver_client().committed([tp], timeout=t))[0]
        return found.offset if found.offset >= 0 else None

    def _first_at_or_after(self, split: str, timestamp: int) -> int:
        """The offset of the first record with a timestamp >= ``timestamp`` (the end of the
        partition when there is none). Kafka's timestamp index answers exactly; a broker
        that answers with an earlier offset (the start of a record batch) is corrected by
        reading on from it."""
        topic, partition = topic_partition(split)
        tp = _kafka().TopicPartition(topic, partition, timestamp)
        offset = self._query(f"the offset of timestamp {timestamp} in {split}",
                             lambda t: self._driver_client().offsets_for_times([tp], timeout=t)
                             )[0].offset
        high = self._watermarks(split)[1]
        if offset < 0:
            return high
        for message in consume(self.config, topic, partition, offset, high):
            if message.timestamp()[1] >= timestamp:
                return message.offset()
        return high

    def start_position(self, split: str) -> int:
        # Partitions found after the job started are read from their beginning, as Flink's.
        return self._resolve(split, self.starting if split in self._initial
                             else Offsets("earliest"))

    def _stop(self, split: str) -> Optional[int]:
        if self.stopping is None:
            return None
        if split not in self._stops:
            self._stops[split] = self._resolve(split, self.stopping)
        return self._stops[split]

    def plan(self, split: str, position: int, max_records: int,
             now_ms: int) -> Optional[SplitRange]:
        end = min(self._watermarks(split)[1], position + max_records)
        stop = self._stop(split)
        if stop is not None:
            end = min(end, stop)
        if end <= position:
            return None
        topic, partition = topic_partition(split)
        return SplitRange(split, (topic, partition, position, end), end)

    def is_finished(self, split: str, position: int) -> bool:
        stop = self._stop(split)
        return stop is not None and position >= stop

    # task ------------------------------------------------------------------------------

    def read(self, descriptor) -> Tuple[List[Tuple[int, Any]], int]:
        topic, partition, start, end = descriptor
        deserialize = self.deserializer._deserialize
        records, skipped = [], 0
        for message in consume(self.config, topic, partition, start, end):
            data = message.value()
            if data is None:
                continue  # a tombstone: no value to read
            try:
                value = deserialize(data)
            except Exception as e:
                raise RecordReadError(split_id(topic, partition), message.offset(), data,
                                      e) from e
            if value is None:
                skipped += 1
                continue
            records.append((message.timestamp()[1], value))
        if skipped:
            log.warning("Kafka %s offsets %d-%d: %d records gave no value (unreadable "
                        "records skipped by the format's ignore-parse-errors) ",
                        split_id(topic, partition), start, end - 1, skipped)
        return records, end


# --- sink ---------------------------------------------------------------------------------

class DirectWriter(SinkWriter):
    """NONE and AT_LEAST_ONCE: produces from the task as records arrive and waits for
    them at the end of the batch; a failed delivery fails the batch (AT_LEAST_ONCE) or is
    logged (NONE)."""

    def __init__(self, config: KafkaConfig, to_record: Callable, fail_on_error: bool):
        self.config = config
        self.to_record = to_record
        self.fail_on_error = fail_on_error
        self.producer = _cached("Producer", config.client_settings())
        self.errors: list = []

    def _delivered(self, error, message) -> None:
        if error is not None:
            self.errors.append(f"{message.topic()}: {error}")

    def write(self, values: list) -> None:
        producer, to_record, delivered = self.producer, self.to_record, self._delivered
        for value in values:
            topic, key, data = to_record(value)
            _produce(producer, topic, key, data, None, delivered)
        producer.poll(0)

    def prepare_commit(self) -> None:
        remaining = self.producer.flush(
            self.config.timeout_s("delivery.timeout.ms", 300_000) + 5)
        if remaining:
            self.errors.append(f"{remaining} records not acknowledged")
        if self.errors:
            message = (f"Kafka at {self.config.properties.get('bootstrap.servers')} did not "
                       f"take {len(self.errors)} records (property delivery.timeout.ms "
                       f"bounds the wait): {self.errors[:3]}")
            if self.fail_on_error:
                raise KafkaUnavailableError(message)
            log.warning(message)
        return None


def _produce(producer, topic, key, value, headers, on_delivery) -> None:
    while True:
        try:
            producer.produce(topic, value=value, key=key, headers=headers,
                             on_delivery=on_delivery)
            return
        except BufferError:  # the client's queue is full: let it send
            producer.poll(0.1)


class _NothingToCommit(Committer):
    def commit(self, batch_id: int, subtask: int, committable: Any) -> None:
        pass


HEADERS = ("sds.job", "sds.sink", "sds.subtask", "sds.batch", "sds.seq")


class KafkaTransactionalCommitter(StagedCommitter):
    """EXACTLY_ONCE: delivers a committed batch's staged records of one subtask in one
    Kafka transaction (id ``<prefix>-<sink>-<subtask>``), idempotently (see the module
    docstring)."""

    def __init__(self, config: KafkaConfig, transactional_id_prefix: str):
        self.config = config
        self.transactional_id_prefix = transactional_id_prefix

    def _marker(self, batch_id: int, subtask: int) -> str:
        return staged_file(self.context.staging_dir, batch_id, subtask)[:-len(".staged")] + \
            ".offsets"

    def _producer(self, subtask: int):
        transactional_id = f"{self.transactional_id_prefix}-{self.context.sink_id}-{subtask}"
        settings = self.config.client_settings(**{"transactional.id": transactional_id})
        key = ("Producer", threading.get_ident(), tuple(sorted(settings.items())))
        with _cache_lock:
            producer = _clients.get(key)
        if producer is None:
            producer = _client(_kafka().Producer, settings)
            # Fences an earlier producer of this id and aborts what it left open.
            self._blocking("starting transactions", producer.init_transactions)
            with _cache_lock:
                _clients[key] = producer
        return producer

    def _blocking(self, what: str, call: Callable) -> None:
        try:
            call(self.config.timeout_s("max.block.ms", DEFAULT_MAX_BLOCK_MS))
        except _kafka().KafkaException as e:
            raise self.config.down(what, "max.block.ms", DEFAULT_MAX_BLOCK_MS, e) from None

    def _end_offsets(self, producer, topics, stable: bool = False) -> List[list]:
        """``[topic, partition, end offset]`` of every partition of ``topics``. ``stable``:
        once no transaction is open before the current end, so that a ``read_committed``
        scan up to it sees every record written so far."""
        timeout = self.config.timeout_s("max.block.ms", DEFAULT_MAX_BLOCK_MS)
        kafka = _kafka()
        reader = _cached("Consumer", _reader_settings(self.config))
        latest = _cached("Consumer", dict(_reader_settings(self.config),
                                          **{"isolation.level": "read_uncommitted"}))
        ends = []
        for topic in sorted(topics):
            try:
                metadata = producer.list_topics(topic, timeout=timeout).topics[topic]
                for partition in sorted(metadata.partitions):
                    tp = kafka.TopicPartition(topic, partition)
                    end = reader.get_watermark_offsets(tp, timeout=timeout, cached=False)[1]
                    if stable:
                        written = latest.get_watermark_offsets(tp, timeout=timeout,
                                                               cached=False)[1]
                        deadline = time.monotonic() + timeout
                        while end < written:  # another subtask's transaction is open
                            if time.monotonic() > deadline:
                                raise kafka.KafkaException(
                                    f"a transaction stays open in {topic}:{partition}")
                            time.sleep(0.05)
                            end = reader.get_watermark_offsets(tp, timeout=timeout,
                                                               cached=False)[1]
                    ends.append([topic, partition, end])
            except kafka.KafkaException as e:
                raise self.config.down(f"the offsets of topic {topic}", "max.block.ms",
                                       DEFAULT_MAX_BLOCK_MS, e) from None
        return ends

    def _delivered_before(self, producer, marker: str, batch_id: int, subtask: int) -> set:
        """The sequence numbers of this batch's records the topics already hold."""
        with open(marker) as f:
            starts = {(t, p): o for t, p, o in json.load(f)}
        wanted = [self.context.job_name, self.context.sink_id, str(subtask), str(batch_id)]
        found = set()
        topics = {t for t, _ in starts}
        for topic, partition, end in self._end_offsets(producer, topics, stable=True):
            for message in consume(self.config, topic, partition,
                                   starts.get((topic, partition), 0), end):
                headers = dict((k, v.decode()) for k, v in message.headers() or ()
                               if k in HEADERS)
                if [headers.get(h) for h in HEADERS[:4]] == wanted:
                    found.add(int(headers[HEADERS[4]]))
        return found

    def deliver(self, batch_id: int, subtask: int, items: list) -> None:
        try:
            self._deliver(batch_id, subtask, items)
        except (_kafka().KafkaException, KafkaUnavailableError):
            # On Spark a subtask's commits run in any worker process: another process's
            # producer of the same transactional id may have fenced this one's cached
            # producer. Once more, with a new producer (delivering again is idempotent).
            self._deliver(batch_id, subtask, items)

    def _deliver(self, batch_id: int, subtask: int, items: list) -> None:
        producer = self._producer(subtask)
        marker = self._marker(batch_id, subtask)
        if os.path.exists(marker):  # delivered (maybe in part) before
            done = self._delivered_before(producer, marker, batch_id, subtask)
        else:
            done = set()
            temporary = f"{marker}.{uuid.uuid4().hex}.tmp"
            with open(temporary, "w") as f:
                json.dump(self._end_offsets(producer, {topic for topic, _, _ in items}), f)
            os.replace(temporary, marker)
        fixed = [("sds.job", self.context.job_name), ("sds.sink", self.context.sink_id),
                 ("sds.subtask", str(subtask)), ("sds.batch", str(batch_id))]
        if len(done) == len(items):
            return
        errors: list = []

        def delivered(error, message):
            if error is not None:
                errors.append(str(error))
        try:
            producer.begin_transaction()
            for seq, (topic, key, value) in enumerate(items):
                if seq not in done:
                    _produce(producer, topic, key, value, fixed + [("sds.seq", str(seq))],
                             delivered)
            self._blocking(f"committing the transaction of batch {batch_id}",
                           producer.commit_transaction)
            if errors:
                raise KafkaUnavailableError(f"Kafka did not take records of batch "
                                            f"{batch_id}: {errors[:3]}")
        except BaseException:
            _forget(producer)  # a new producer fences this one and aborts its transaction
            raise

    def commit(self, batch_id: int, subtask: int, committable: str) -> None:
        super().commit(batch_id, subtask, committable)
        marker = self._marker(batch_id, subtask)
        if os.path.exists(marker):
            os.remove(marker)

    def recover(self, committed_batch: int) -> None:
        super().recover(committed_batch)
        directory = self.context.staging_dir
        if os.path.isdir(directory):  # markers of batches delivered fully before a crash
            for name in os.listdir(directory):
                if name.endswith(".offsets") and not os.path.exists(
                        os.path.join(directory, name[:-len(".offsets")] + ".staged")):
                    os.remove(os.path.join(directory, name))


class KafkaSink(Sink):
    """Writes records to Kafka; ``to_record(value)`` gives ``(topic, key bytes or None,
    value bytes)``; ``guarantee`` is "none", "at_least_once" or "exactly_once"."""

    stages_in_job_directory = True

    def __init__(self, properties: Dict[str, str], to_record: Callable, guarantee: str,
                 transactional_id_prefix: str = "kafka-sink"):
        if guarantee not in ("none", "at_least_once", "exactly_once"):
            raise ValueError(f"Unknown delivery guarantee {guarantee!r}")
        self.config = KafkaConfig(properties)
        self.to_record = to_record
        self.guarantee = guarantee
        self.transactional_id_prefix = transactional_id_prefix

    def create_writer(self, context: WriterContext) -> SinkWriter:
        if self.guarantee == "exactly_once":
            return StagingWriter(context, self.to_record)
        return DirectWriter(self.config, self.to_record, self.guarantee == "at_least_once")

    def create_committer(self) -> Committer:
        if self.guarantee == "exactly_once":
            return KafkaTransactionalCommitter(self.config, self.transactional_id_prefix)
        return _NothingToCommit()
