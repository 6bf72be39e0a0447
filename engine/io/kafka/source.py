"""The Kafka source: one split per topic partition, whose position is the next offset
to read.

The driver bounds each batch's range by the partition's high watermark (the last stable
offset with ``read_committed``, Flink's default) queried when it plans, so a task's read
is repeatable and the driver knows where the range ends; control records and gaps inside
a range are skipped. The ends of all partitions are asked for in one request, and
each split uses an answer once: the splits of one batch share a request, and a split is
never planned twice with the same answer.
"""
import logging
import re
import time
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

from engine.errors import RecordReadError
from engine.io.kafka.client import (DEFAULT_API_TIMEOUT_MS, KafkaConfig, KafkaUnavailableError,
                                    consume, kafka_library, new_client, reader_settings)
from engine.io.sources import Source, SplitRange

log = logging.getLogger(__name__)

DEFAULT_DISCOVERY_INTERVAL_MS = 5 * 60 * 1000  # Flink's partition.discovery.interval.ms
_INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})


class Offsets(NamedTuple):
    """Where a Kafka source starts or stops (an engine form of KafkaOffsetsInitializer):
    ``kind`` is earliest, latest, committed, timestamp or offsets; ``reset`` (earliest,
    latest or none) applies to partitions without a committed or given offset."""
    kind: str
    timestamp: Optional[int] = None
    offsets: Optional[Dict[Tuple[str, int], int]] = None
    reset: str = "earliest"


class KafkaRecord(NamedTuple):
    """A consumed record with its metadata, for a deserializer of whole records
    (``_deserialize_kafka_record``): ``timestamp`` in ms, ``timestamp_type`` Kafka's
    ``CreateTime`` or ``LogAppendTime``, ``headers`` (key, value) pairs in order."""
    key: Optional[bytes]
    value: Optional[bytes]
    topic: str
    partition: int
    offset: int
    timestamp: int
    timestamp_type: str
    headers: List[Tuple[str, Optional[bytes]]]
    leader_epoch: Optional[int]


_TIMESTAMP_TYPES = {1: "CreateTime", 2: "LogAppendTime"}  # confluent-kafka's codes


def kafka_record(message) -> KafkaRecord:
    """The :class:`KafkaRecord` of a confluent-kafka message."""
    timestamp_type, timestamp = message.timestamp()
    return KafkaRecord(message.key(), message.value(), message.topic(), message.partition(),
                       message.offset(), timestamp,
                       _TIMESTAMP_TYPES.get(timestamp_type, "NoTimestampType"),
                       list(message.headers() or []), message.leader_epoch())


def split_id(topic: str, partition: int) -> str:
    """The split of a topic partition: ``"topic:partition"``."""
    return f"{topic}:{partition}"


def topic_partition(split: str) -> Tuple[str, int]:
    """The ``(topic, partition)`` of a split."""
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
        self._ends: Dict[str, int] = {}  # split -> end offset not used yet
        self._admin = None

    def __getstate__(self):
        state = dict(self.__dict__)
        state["_admin"] = None  # the driver's client stays in the driver
        return state

    # driver ----------------------------------------------------------------------------

    def _driver_client(self):
        if self._admin is None:
            self._admin = new_client(kafka_library().Consumer, reader_settings(self.config))
        return self._admin

    def _query(self, what: str, call: Callable):
        timeout = self.config.timeout_s("default.api.timeout.ms", DEFAULT_API_TIMEOUT_MS)
        try:
            return call(timeout)
        except kafka_library().KafkaException as e:
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
        tp = kafka_library().TopicPartition(*topic_partition(split))
        return self._query(f"the offsets of {split}", lambda t: self._driver_client()
                           .get_watermark_offsets(tp, timeout=t, cached=False))

    def _end(self, split: str) -> int:
        """The partition's end (high watermark, or last stable offset), from one request
        for every known split unless an earlier answer for ``split`` is still unused."""
        if split not in self._ends:
            library = kafka_library()
            wanted = [library.TopicPartition(*topic_partition(s), library.OFFSET_END)
                      for s in dict.fromkeys((self._splits or []) + [split])]

            def ask(timeout: float) -> list:
                found = self._driver_client().offsets_for_times(wanted, timeout=timeout)
                failed = next((tp for tp in found if tp.error is not None), None)
                if failed is not None:  # (answered, for this partition with an error)
                    raise KafkaUnavailableError(
                        f"Kafka at {self.config.properties.get('bootstrap.servers')} gave "
                        f"no end offset for {split_id(failed.topic, failed.partition)}: "
                        f"{failed.error}")
                return found

            found = self._query("the end offsets of " + ", ".join(
                split_id(tp.topic, tp.partition) for tp in wanted), ask)
            self._ends = {split_id(tp.topic, tp.partition): tp.offset for tp in found}
        return self._ends.pop(split)

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
        tp = kafka_library().TopicPartition(*topic_partition(split))
        found = self._query(f"the committed offset of {split}",
                            lambda t: self._driver_client().committed([tp], timeout=t))[0]
        return found.offset if found.offset >= 0 else None

    def _first_at_or_after(self, split: str, timestamp: int) -> int:
        """The offset of the first record with a timestamp >= ``timestamp`` (the end of the
        partition when there is none). Kafka's timestamp index answers exactly; a broker
        that answers with an earlier offset (the start of a record batch) is corrected by
        reading on from it."""
        topic, partition = topic_partition(split)
        tp = kafka_library().TopicPartition(topic, partition, timestamp)
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
        end = min(self._end(split), position + max_records)
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

    def has_input(self, split: str, position: int) -> bool:
        return self._end(split) > position

    # task ------------------------------------------------------------------------------

    def read(self, descriptor) -> Tuple[List[Tuple[int, Any]], int]:
        topic, partition, start, end = descriptor
        # a deserializer of whole records reads keys and tombstones (a None value) too,
        # one of records with their metadata the KafkaRecord
        with_metadata = getattr(self.deserializer, '_deserialize_kafka_record', None)
        whole = getattr(self.deserializer, '_deserialize_record', None)
        deserialize = self.deserializer._deserialize
        records, skipped = [], 0
        for message in consume(self.config, topic, partition, start, end):
            data = message.value()
            if data is None and whole is None and with_metadata is None:
                continue  # a tombstone: no value to read
            try:
                value = with_metadata(kafka_record(message)) if with_metadata else \
                    deserialize(data) if whole is None else whole(message.key(), data)
            except Exception as e:
                raise RecordReadError(split_id(topic, partition), message.offset(), data,
                                      e) from e
            if value is None:
                skipped += 1
                continue
            records.append((message.timestamp()[1], value))
        if skipped:
            self.records_in_errors += skipped
            log.warning("Kafka %s offsets %d-%d: %d records gave no value (unreadable "
                        "records skipped by the format's ignore-parse-errors) ",
                        split_id(topic, partition), start, end - 1, skipped)
        return records, end
