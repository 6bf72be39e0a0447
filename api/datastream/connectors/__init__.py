"""Connectors, as in ``pyflink.datastream.connectors``: the base classes here, each connector
in its module (``kafka``, ``file_system``, ``jdbc``, ...), and PyFlink's shortcuts to the
common ones. See ``api.unavailable`` for the connectors this engine cannot run yet."""
from .base import DeliveryGuarantee, Sink, Source
# PyFlink's shortcuts to the common connectors (importable, not in __all__, as in PyFlink).
from .datagen import DataGeneratorSource
from .dynamic_kafka import (DynamicKafkaSource, DynamicKafkaSourceBuilder,
                            KafkaMetadataService, KafkaRecordDeserializationSchema,
                            KafkaStreamSetSubscriber, KafkaStreamSubscriber,
                            SingleClusterTopicMetadataService, StreamPatternSubscriber)
from .file_system import (BucketAssigner, DefaultRollingPolicy, FileEnumeratorProvider,
                          FileSink, FileSource, FileSourceBuilder, FileSplitAssignerProvider,
                          OnCheckpointRollingPolicy, OutputFileConfig, RollingPolicy,
                          StreamFormat, StreamingFileSink)
from .jdbc import JdbcConnectionOptions, JdbcExecutionOptions, JdbcSink
from .kafka import FlinkKafkaConsumer, FlinkKafkaProducer, KafkaSource, Semantic
from .number_seq import NumberSequenceSource
from .pulsar import PulsarSource, PulsarSourceBuilder, StartCursor, StopCursor
from .rabbitmq import RMQConnectionConfig, RMQSink, RMQSource

__all__ = ['Sink', 'Source', 'DeliveryGuarantee']
