"""Kafka connectors, as in ``pyflink.datastream.connectors.kafka``: ``KafkaSource`` and
``KafkaSink`` and the legacy ``FlinkKafkaConsumer`` and ``FlinkKafkaProducer``. The builders
record the settings and make Flink's checks; ``engine.io.kafka`` runs them (a topic
partition is a split; EXACTLY_ONCE delivers each committed batch in a Kafka transaction).
They need the confluent-kafka client: ``pip install 'spark-datastream[kafka]'``.
"""
import warnings
from abc import ABC, abstractmethod
from enum import Enum
from typing import Any, Callable, Dict, List, Optional, Set, Tuple, Union

from api.common.serialization import DeserializationSchema, SerializationSchema
from api.common.typeinfo import TypeInformation
from engine.io.kafka.sink import KafkaSink as EngineKafkaSink
from engine.io.kafka.source import KafkaPartitionSource, Offsets

from .base import DeliveryGuarantee, Sink, Source, StreamTransformer, SupportsPreprocessing

# Importable from here as in PyFlink.
from api.common.typeinfo import Types  # noqa: E402,F401
from api.common.types import Row  # noqa: E402,F401
from api.datastream.functions import SinkFunction  # noqa: E402,F401

__all__ = ['FlinkKafkaConsumer', 'FlinkKafkaProducer', 'KafkaSource', 'KafkaSourceBuilder',
           'KafkaSink', 'KafkaSinkBuilder', 'Semantic', 'KafkaTopicPartition',
           'KafkaOffsetsInitializer', 'KafkaOffsetResetStrategy',
           'KafkaRecordSerializationSchema', 'KafkaRecordSerializationSchemaBuilder',
           'KafkaTopicSelector']

BOOTSTRAP_SERVERS = 'bootstrap.servers'
GROUP_ID = 'group.id'
CLIENT_ID_PREFIX = 'client.id.prefix'


def _checked(value, expected, what: str):
    if not isinstance(value, expected):
        names = getattr(expected, '__name__', None) or ' or '.join(t.__name__ for t in expected)
        raise TypeError(f"{what} must be a {names}, got {type(value).__name__}: {value!r:.100}")
    return value


def _string_properties(properties: Dict, what: str) -> Dict[str, str]:
    _checked(properties, dict, what)
    return {str(k): str(v) for k, v in properties.items()}


# --- legacy consumer and producer ------------------------------------------------------

class _LegacyFunction(ABC):

    def get_java_function(self):
        """JVM-only: there is no Java function here, so this returns None."""
        return None


class FlinkKafkaConsumerBase(_LegacyFunction):
    """The settings of the legacy Kafka consumer (see :class:`FlinkKafkaConsumer`)."""

    def __init__(self, topics: Union[str, List[str]],
                 deserialization_schema: DeserializationSchema, properties: Dict):
        self._topics = topics if isinstance(topics, list) else [topics]
        self._deserialization_schema = _checked(deserialization_schema, DeserializationSchema,
                                                "deserialization_schema")
        self._properties = _string_properties(properties, "properties")
        self._start_from = ('group_offsets', None)
        self._commit_offsets_on_checkpoints = True
        self._filter_restored_partitions = True

    def set_commit_offsets_on_checkpoints(self, commit_on_checkpoints: bool
                                          ) -> 'FlinkKafkaConsumerBase':
        """Whether offsets are committed back to Kafka on checkpoints (default: yes)."""
        self._commit_offsets_on_checkpoints = commit_on_checkpoints
        return self

    def set_start_from_earliest(self) -> 'FlinkKafkaConsumerBase':
        """Starts from the earliest offset of every partition."""
        self._start_from = ('earliest', None)
        return self

    def set_start_from_latest(self) -> 'FlinkKafkaConsumerBase':
        """Starts from the latest offset of every partition."""
        self._start_from = ('latest', None)
        return self

    def set_start_from_timestamp(self, startup_offsets_timestamp: int
                                 ) -> 'FlinkKafkaConsumerBase':
        """Starts from the first record with a timestamp at or after the given one (ms)."""
        self._start_from = ('timestamp', startup_offsets_timestamp)
        return self

    def set_start_from_group_offsets(self) -> 'FlinkKafkaConsumerBase':
        """Starts from the consumer group's committed offsets (the default)."""
        self._start_from = ('group_offsets', None)
        return self

    def disable_filter_restored_partitions_with_subscribed_topics(
            self) -> 'FlinkKafkaConsumerBase':
        """On restore, keeps partitions of topics no longer subscribed."""
        self._filter_restored_partitions = False
        return self

    def get_produced_type(self) -> TypeInformation:
        """The type of the records, from the deserialization schema."""
        return self._deserialization_schema._produced_type()

    def engine_source(self) -> KafkaPartitionSource:
        kind, timestamp = self._start_from
        reset = self._properties.get('auto.offset.reset', 'latest')
        starting = Offsets(
            'committed' if kind == 'group_offsets' else kind, timestamp=timestamp,
            reset='earliest' if reset in ('earliest', 'smallest', 'beginning') else 'latest')
        properties = dict(self._properties)
        # The legacy consumer finds new partitions only when told to.
        properties['partition.discovery.interval.ms'] = properties.pop(
            'flink.partition-discovery.interval-millis', '-1')
        return KafkaPartitionSource(properties, self._deserialization_schema,
                                    starting, topics=list(self._topics))


class FlinkKafkaConsumer(FlinkKafkaConsumerBase):
    """The legacy Kafka source function (deprecated since Flink 1.16: use KafkaSource)."""

    def __init__(self, topics: Union[str, List[str]],
                 deserialization_schema: DeserializationSchema, properties: Dict):
        warnings.warn('Deprecated in 1.16. Use KafkaSource instead.', DeprecationWarning)
        super().__init__(topics, deserialization_schema, properties)


class Semantic(Enum):
    """The delivery semantic of the legacy FlinkKafkaProducer."""

    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1
    NONE = 2


class FlinkKafkaProducerBase(_LegacyFunction):
    """The settings of the legacy Kafka producer (see :class:`FlinkKafkaProducer`)."""

    def __init__(self, topic: str, serialization_schema: SerializationSchema,
                 producer_config: Dict):
        self._topic = topic
        self._serialization_schema = _checked(serialization_schema, SerializationSchema,
                                              "serialization_schema")
        self._producer_config = _string_properties(producer_config, "producer_config")
        self._log_failures_only = False
        self._flush_on_checkpoint = True
        self._write_timestamp_to_kafka = False

    def set_log_failures_only(self, log_failures_only: bool) -> 'FlinkKafkaProducerBase':
        """Only logs write failures instead of failing the job."""
        self._log_failures_only = log_failures_only
        return self

    def set_flush_on_checkpoint(self, flush_on_checkpoint: bool) -> 'FlinkKafkaProducerBase':
        """Waits for pending records to be acknowledged on checkpoints (default: yes)."""
        self._flush_on_checkpoint = flush_on_checkpoint
        return self

    def set_write_timestamp_to_kafka(self, write_timestamp_to_kafka: bool
                                     ) -> 'FlinkKafkaProducerBase':
        """Writes each record's timestamp into Kafka."""
        self._write_timestamp_to_kafka = write_timestamp_to_kafka
        return self


class FlinkKafkaProducer(FlinkKafkaProducerBase):
    """The legacy Kafka sink function (use KafkaSink)."""

    def __init__(self, topic: str, serialization_schema: SerializationSchema,
                 producer_config: Dict, kafka_producer_pool_size: int = 5,
                 semantic=Semantic.AT_LEAST_ONCE):
        super().__init__(topic, serialization_schema, producer_config)
        self._kafka_producer_pool_size = kafka_producer_pool_size
        self._semantic = _checked(semantic, Semantic, "semantic")
        self._ignore_failures_after_transaction_timeout = False

    def ignore_failures_after_transaction_timeout(self) -> 'FlinkKafkaProducer':
        """Ignores transactions that timed out while recovering."""
        self._ignore_failures_after_transaction_timeout = True
        return self

    def engine_sink(self, type_info: TypeInformation) -> EngineKafkaSink:
        guarantee = {Semantic.EXACTLY_ONCE: 'exactly_once', Semantic.AT_LEAST_ONCE:
                     'at_least_once', Semantic.NONE: 'none'}[self._semantic]
        if self._log_failures_only and guarantee == 'at_least_once':
            guarantee = 'none'  # failed deliveries are logged, not raised
        return EngineKafkaSink(self._producer_config,
                               _TopicRecord(self._topic, self._serialization_schema),
                               guarantee, 'flink-kafka-producer')


class _TopicRecord:
    """A legacy producer's record: its one topic, no key, the schema's value bytes."""

    def __init__(self, topic: str, schema: SerializationSchema):
        self.topic = topic
        self.schema = schema

    def __call__(self, value) -> Tuple[str, None, bytes]:
        return self.topic, None, self.schema._serialize(value)


# --- KafkaSource --------------------------------------------------------------------------

class KafkaTopicPartition(object):
    """A partition of a Kafka topic."""

    def __init__(self, topic: str, partition: int):
        self._topic = topic
        self._partition = partition

    def __eq__(self, other):
        return isinstance(other, KafkaTopicPartition) and \
            (self._topic, self._partition) == (other._topic, other._partition)

    def __hash__(self):
        return 31 * (31 + self._partition) + hash(self._topic)

    def __repr__(self):
        return f"KafkaTopicPartition({self._topic!r}, {self._partition})"


class KafkaOffsetResetStrategy(Enum):
    """Where to start when a partition has no committed offset."""

    LATEST = 0
    EARLIEST = 1
    NONE = 2


class KafkaOffsetsInitializer(object):
    """Which offsets a KafkaSource starts from (or stops at, when bounded)."""

    def __init__(self, kind: str, **settings):
        self._kind = kind
        self._settings = settings

    def __repr__(self):
        return f"KafkaOffsetsInitializer.{self._kind}({self._settings})"

    @staticmethod
    def committed_offsets(
            offset_reset_strategy: KafkaOffsetResetStrategy = KafkaOffsetResetStrategy.NONE
    ) -> 'KafkaOffsetsInitializer':
        """The consumer group's committed offsets; ``offset_reset_strategy`` where none."""
        return KafkaOffsetsInitializer('committed_offsets', offset_reset_strategy=_checked(
            offset_reset_strategy, KafkaOffsetResetStrategy, "offset_reset_strategy"))

    @staticmethod
    def timestamp(timestamp: int) -> 'KafkaOffsetsInitializer':
        """The first record with a timestamp at or after ``timestamp`` (ms)."""
        return KafkaOffsetsInitializer('timestamp', timestamp=timestamp)

    @staticmethod
    def earliest() -> 'KafkaOffsetsInitializer':
        return KafkaOffsetsInitializer('earliest')

    @staticmethod
    def latest() -> 'KafkaOffsetsInitializer':
        return KafkaOffsetsInitializer('latest')

    @staticmethod
    def offsets(offsets: Dict['KafkaTopicPartition', int],
                offset_reset_strategy: KafkaOffsetResetStrategy =
                KafkaOffsetResetStrategy.EARLIEST) -> 'KafkaOffsetsInitializer':
        """The given offset per partition; ``offset_reset_strategy`` for other partitions
        or offsets out of range."""
        for partition in _checked(offsets, dict, "offsets"):
            _checked(partition, KafkaTopicPartition, "a key of offsets")
        return KafkaOffsetsInitializer('offsets', offsets=dict(offsets),
                                       offset_reset_strategy=_checked(
                                           offset_reset_strategy, KafkaOffsetResetStrategy,
                                           "offset_reset_strategy"))


class KafkaSource(Source):
    """A source reading Kafka topics, built with :meth:`builder`::

        KafkaSource.builder().set_bootstrap_servers("broker:9092").set_topics("input")
            .set_group_id("my-group").set_value_only_deserializer(SimpleStringSchema())
            .build()
    """

    def __init__(self, properties: Dict[str, str], subscription: Tuple[str, Any],
                 starting_offsets: KafkaOffsetsInitializer,
                 stopping_offsets: Optional[KafkaOffsetsInitializer], bounded: bool,
                 deserializer: DeserializationSchema):
        self._properties = properties
        self._subscription = subscription
        self._starting_offsets = starting_offsets
        self._stopping_offsets = stopping_offsets
        self._bounded = bounded
        self._deserializer = deserializer

    @staticmethod
    def builder() -> 'KafkaSourceBuilder':
        return KafkaSourceBuilder()

    def get_produced_type(self) -> TypeInformation:
        """The type of the records, from the deserializer."""
        return self._deserializer._produced_type()

    def engine_source(self) -> KafkaPartitionSource:
        subscriber, value = self._subscription
        subscription = {'TopicListSubscriber': 'topics',
                        'TopicPatternSubscriber': 'topic_pattern',
                        'PartitionSetSubscriber': 'partitions'}[subscriber]
        if subscriber == 'PartitionSetSubscriber':
            value = sorted((p._topic, p._partition) for p in value)
        stopping = self._stopping_offsets
        return KafkaPartitionSource(
            self._properties, self._deserializer, _engine_offsets(self._starting_offsets),
            None if stopping is None else _engine_offsets(stopping), self._bounded,
            **{subscription: value})


def _engine_offsets(initializer: KafkaOffsetsInitializer) -> Offsets:
    settings = initializer._settings
    reset = settings.get('offset_reset_strategy')
    offsets = settings.get('offsets')
    return Offsets(
        {'committed_offsets': 'committed'}.get(initializer._kind, initializer._kind),
        timestamp=settings.get('timestamp'),
        offsets=None if offsets is None else {(p._topic, p._partition): o
                                              for p, o in offsets.items()},
        reset='earliest' if reset is None else reset.name.lower())


class KafkaSourceBuilder(object):
    """Builds a KafkaSource. Bootstrap servers, one way to subscribe (topics, a topic
    pattern or partitions) and a deserializer are required; it starts from the earliest
    offsets and is unbounded unless told otherwise."""

    def __init__(self):
        self._properties: Dict[str, str] = {}
        self._subscription: Optional[Tuple[str, Any]] = None
        self._starting_offsets = KafkaOffsetsInitializer.earliest()
        self._stopping_offsets: Optional[KafkaOffsetsInitializer] = None
        self._bounded = False
        self._deserializer: Optional[DeserializationSchema] = None

    def build(self) -> 'KafkaSource':
        if BOOTSTRAP_SERVERS not in self._properties:
            raise ValueError(f"Property {BOOTSTRAP_SERVERS} is required but not provided")
        if self._subscription is None:
            raise ValueError("No subscribe mode is specified, should be one of topics, topic "
                             "pattern and partition set.")
        if self._deserializer is None:
            raise ValueError("Deserialization schema is required but not provided.")
        committed = self._starting_offsets._kind == 'committed_offsets'
        if committed and GROUP_ID not in self._properties:
            raise ValueError(f"Property {GROUP_ID} is required when using committed offset "
                             f"for offsets initializer")
        return KafkaSource(dict(self._properties), self._subscription, self._starting_offsets,
                           self._stopping_offsets, self._bounded, self._deserializer)

    def set_bootstrap_servers(self, bootstrap_servers: str) -> 'KafkaSourceBuilder':
        """The Kafka brokers to connect to, ``host:port[,host:port...]``."""
        return self.set_property(BOOTSTRAP_SERVERS, bootstrap_servers)

    def set_group_id(self, group_id: str) -> 'KafkaSourceBuilder':
        """The consumer group id."""
        return self.set_property(GROUP_ID, group_id)

    def _subscribe(self, mode: str, subscriber: str, value) -> 'KafkaSourceBuilder':
        if self._subscription is not None:
            raise ValueError(f"Cannot use {mode} for consumption because a "
                             f"{self._subscription[0]} is already set for consumption.")
        self._subscription = (subscriber, value)
        return self

    def set_topics(self, *topics: str) -> 'KafkaSourceBuilder':
        """Reads these topics."""
        return self._subscribe('topics', 'TopicListSubscriber', list(topics))

    def set_topic_pattern(self, topic_pattern: str) -> 'KafkaSourceBuilder':
        """Reads the topics whose names match this regular expression."""
        return self._subscribe('topic pattern', 'TopicPatternSubscriber', topic_pattern)

    def set_partitions(self, partitions: Set['KafkaTopicPartition']) -> 'KafkaSourceBuilder':
        """Reads these partitions."""
        for partition in partitions:
            _checked(partition, KafkaTopicPartition, "a partition")
        return self._subscribe('partitions', 'PartitionSetSubscriber', set(partitions))

    def set_starting_offsets(self, starting_offsets_initializer: 'KafkaOffsetsInitializer'
                             ) -> 'KafkaSourceBuilder':
        """Where reading starts (default: the earliest offsets)."""
        self._starting_offsets = _checked(starting_offsets_initializer,
                                          KafkaOffsetsInitializer, "starting offsets")
        return self

    def set_unbounded(self, stopping_offsets_initializer: 'KafkaOffsetsInitializer'
                      ) -> 'KafkaSourceBuilder':
        """Stays unbounded (a streaming source) but stops at these offsets."""
        self._stopping_offsets = _checked(stopping_offsets_initializer,
                                          KafkaOffsetsInitializer, "stopping offsets")
        self._bounded = False
        return self

    def set_bounded(self, stopping_offsets_initializer: 'KafkaOffsetsInitializer'
                    ) -> 'KafkaSourceBuilder':
        """Makes the source bounded, ending at these offsets (usable in BATCH mode)."""
        self._stopping_offsets = _checked(stopping_offsets_initializer,
                                          KafkaOffsetsInitializer, "stopping offsets")
        self._bounded = True
        return self

    def set_value_only_deserializer(self, deserialization_schema: DeserializationSchema
                                    ) -> 'KafkaSourceBuilder':
        """Reads each record's value with this schema (keys and headers are ignored)."""
        self._deserializer = _checked(deserialization_schema, DeserializationSchema,
                                      "deserialization_schema")
        return self

    def set_client_id_prefix(self, prefix: str) -> 'KafkaSourceBuilder':
        """The prefix of the Kafka consumers' client ids."""
        return self.set_property(CLIENT_ID_PREFIX, prefix)

    def set_property(self, key: str, value: str) -> 'KafkaSourceBuilder':
        """A Kafka consumer property."""
        self._properties[key] = value
        return self

    def set_properties(self, props: Dict) -> 'KafkaSourceBuilder':
        """Kafka consumer properties, added to those already set."""
        self._properties.update(_string_properties(props, "props"))
        return self


# --- KafkaSink ------------------------------------------------------------------------------

class KafkaTopicSelector(ABC):
    """Chooses the topic of each record a KafkaSink writes."""

    @abstractmethod
    def apply(self, data) -> str:
        """The topic of ``data``."""


class _CallableTopicSelector(KafkaTopicSelector):

    def __init__(self, function: Callable[[Any], str]):
        self._function = function

    def apply(self, data) -> str:
        return self._function(data)


class KafkaRecordSerializationSchema(SerializationSchema):
    """Turns a record into a Kafka record: its topic, key and value (built with
    :meth:`builder`)."""

    def __init__(self, topic: Optional[str], topic_selector: Optional[KafkaTopicSelector],
                 key_serialization_schema: Optional[SerializationSchema],
                 value_serialization_schema: SerializationSchema):
        self._topic = topic
        self._topic_selector = topic_selector
        self._key_serialization_schema = key_serialization_schema
        self._value_serialization_schema = value_serialization_schema

    @staticmethod
    def builder() -> 'KafkaRecordSerializationSchemaBuilder':
        return KafkaRecordSerializationSchemaBuilder()

    def _record(self, value) -> Tuple[str, Optional[bytes], bytes]:
        """The topic, key bytes (None without a key schema) and value bytes of ``value``."""
        topic = self._topic if self._topic_selector is None else self._topic_selector.apply(value)
        key_schema = self._key_serialization_schema
        return (topic, None if key_schema is None else key_schema._serialize(value),
                self._value_serialization_schema._serialize(value))

    def _serialize(self, value) -> bytes:
        return self._value_serialization_schema._serialize(value)


class KafkaRecordSerializationSchemaBuilder(object):
    """Builds a KafkaRecordSerializationSchema: a topic (or topic selector) and a value
    schema are required, a key schema is optional."""

    def __init__(self):
        self._topic: Optional[str] = None
        self._topic_selector: Optional[KafkaTopicSelector] = None
        self._key_serialization_schema: Optional[SerializationSchema] = None
        self._value_serialization_schema: Optional[SerializationSchema] = None

    def build(self) -> 'KafkaRecordSerializationSchema':
        if self._value_serialization_schema is None:
            raise ValueError("No value serializer is configured.")
        if self._topic is None and self._topic_selector is None:
            raise ValueError("No topic selector is configured.")
        return KafkaRecordSerializationSchema(self._topic, self._topic_selector,
                                              self._key_serialization_schema,
                                              self._value_serialization_schema)

    def _check_no_topic(self):
        if self._topic is not None or self._topic_selector is not None:
            raise ValueError("Topic selector already set.")

    def set_topic(self, topic: str) -> 'KafkaRecordSerializationSchemaBuilder':
        """Writes every record to ``topic``."""
        self._check_no_topic()
        self._topic = _checked(topic, str, "topic")
        return self

    def set_topic_selector(self, topic_selector: Union[Callable[[Any], str],
                                                       'KafkaTopicSelector']
                           ) -> 'KafkaRecordSerializationSchemaBuilder':
        """Writes each record to the topic ``topic_selector`` gives for it (a
        KafkaTopicSelector or a function)."""
        if not isinstance(topic_selector, KafkaTopicSelector) and not callable(topic_selector):
            raise TypeError('topic_selector must be KafkaTopicSelector or a callable')
        self._check_no_topic()
        if not isinstance(topic_selector, KafkaTopicSelector):
            topic_selector = _CallableTopicSelector(topic_selector)
        self._topic_selector = topic_selector
        return self

    def set_key_serialization_schema(self, key_serialization_schema: SerializationSchema
                                     ) -> 'KafkaRecordSerializationSchemaBuilder':
        """Writes a key, made by this schema from each record."""
        if self._key_serialization_schema is not None:
            raise ValueError("Key serializer already set.")
        self._key_serialization_schema = _checked(
            key_serialization_schema, SerializationSchema, "key_serialization_schema")
        return self

    def set_value_serialization_schema(self, value_serialization_schema: SerializationSchema
                                       ) -> 'KafkaRecordSerializationSchemaBuilder':
        """Writes the value made by this schema from each record."""
        if self._value_serialization_schema is not None:
            raise ValueError("Value serializer already set.")
        self._value_serialization_schema = _checked(
            value_serialization_schema, SerializationSchema, "value_serialization_schema")
        return self


class KafkaSink(Sink, SupportsPreprocessing):
    """A sink writing to Kafka, built with :meth:`builder`::

        KafkaSink.builder().set_bootstrap_servers("broker:9092")
            .set_record_serializer(KafkaRecordSerializationSchema.builder()
                                   .set_topic("output")
                                   .set_value_serialization_schema(SimpleStringSchema())
                                   .build())
            .build()
    """

    def __init__(self, properties: Dict[str, str], delivery_guarantee: DeliveryGuarantee,
                 transactional_id_prefix: str,
                 record_serializer: KafkaRecordSerializationSchema):
        self._properties = properties
        self._delivery_guarantee = delivery_guarantee
        self._transactional_id_prefix = transactional_id_prefix
        self._record_serializer = record_serializer

    @staticmethod
    def builder() -> 'KafkaSinkBuilder':
        return KafkaSinkBuilder()

    def get_transformer(self) -> Optional[StreamTransformer]:
        """None: the record serializer chooses each record's topic itself."""
        return None

    def engine_sink(self, type_info: TypeInformation) -> EngineKafkaSink:
        return EngineKafkaSink(self._properties, self._record_serializer._record,
                               self._delivery_guarantee.name.lower(),
                               self._transactional_id_prefix)


class KafkaSinkBuilder(object):
    """Builds a KafkaSink. Bootstrap servers and a record serializer are required; the
    delivery guarantee is NONE unless set."""

    def __init__(self):
        self._properties: Dict[str, str] = {}
        self._delivery_guarantee = DeliveryGuarantee.NONE
        self._transactional_id_prefix = 'kafka-sink'
        self._record_serializer: Optional[KafkaRecordSerializationSchema] = None

    def build(self) -> 'KafkaSink':
        if BOOTSTRAP_SERVERS not in self._properties:
            raise ValueError("bootstrapServers must be set")
        if self._record_serializer is None:
            raise ValueError("recordSerializer must be set")
        return KafkaSink(dict(self._properties), self._delivery_guarantee,
                         self._transactional_id_prefix, self._record_serializer)

    def set_bootstrap_servers(self, bootstrap_servers: str) -> 'KafkaSinkBuilder':
        """The Kafka brokers to connect to, ``host:port[,host:port...]``."""
        return self.set_property(BOOTSTRAP_SERVERS, bootstrap_servers)

    def set_delivery_guarantee(self, delivery_guarantee: DeliveryGuarantee
                               ) -> 'KafkaSinkBuilder':
        """EXACTLY_ONCE writes in Kafka transactions; AT_LEAST_ONCE flushes on checkpoints."""
        self._delivery_guarantee = _checked(delivery_guarantee, DeliveryGuarantee,
                                            "delivery_guarantee")
        return self

    def set_transactional_id_prefix(self, transactional_id_prefix: str) -> 'KafkaSinkBuilder':
        """The prefix of the transactional ids of EXACTLY_ONCE writes (default
        ``kafka-sink``)."""
        self._transactional_id_prefix = _checked(transactional_id_prefix, str,
                                                 "transactional_id_prefix")
        return self

    def set_record_serializer(self, record_serializer: 'KafkaRecordSerializationSchema'
                              ) -> 'KafkaSinkBuilder':
        """How records become Kafka records."""
        self._record_serializer = _checked(record_serializer, KafkaRecordSerializationSchema,
                                           "record_serializer")
        return self

    def set_property(self, key: str, value: str) -> 'KafkaSinkBuilder':
        """A Kafka producer property."""
        self._properties[key] = value
        return self
