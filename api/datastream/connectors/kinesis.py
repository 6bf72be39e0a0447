"""Amazon Kinesis connectors, as in ``pyflink.datastream.connectors.kinesis``.

Not available yet in this engine: ``FlinkKinesisConsumer``, ``KinesisStreamsSink`` and
``KinesisFirehoseSink`` can be built and configured, and a job using one fails when it is
built.
"""
from typing import Dict, List, Union

from api.common.serialization import DeserializationSchema, SerializationSchema
from api.unavailable import SINK_ALTERNATIVES, SOURCE_ALTERNATIVES, UnavailableConnector

from .base import LegacyConnectorFunction, Sink
from .kafka import _checked, _string_properties

__all__ = ['KinesisShardAssigner', 'KinesisDeserializationSchema', 'WatermarkTracker',
           'PartitionKeyGenerator', 'FlinkKinesisConsumer', 'KinesisStreamsSink',
           'KinesisStreamsSinkBuilder', 'KinesisFirehoseSink', 'KinesisFirehoseSinkBuilder']


class KinesisShardAssigner(object):
    """How FlinkKinesisConsumer spreads shards over its parallel instances."""

    def __init__(self, kind: str):
        self._kind = kind

    @staticmethod
    def default_shard_assigner() -> 'KinesisShardAssigner':
        """By the hash of the shard."""
        return KinesisShardAssigner('default')

    @staticmethod
    def uniform_shard_assigner() -> 'KinesisShardAssigner':
        """Evenly, by the shards' hash key ranges."""
        return KinesisShardAssigner('uniform')


class KinesisDeserializationSchema(object):
    """Turns a Kinesis record (with its stream, shard and sequence number) into a record."""


class WatermarkTracker(object):
    """Shares watermarks between the consumer's instances so that shards stay aligned."""

    def __init__(self, aggregate_name: str, log_accumulator_interval_millis: int):
        self._aggregate_name = aggregate_name
        self._log_accumulator_interval_millis = log_accumulator_interval_millis

    @staticmethod
    def job_manager_watermark_tracker(aggregate_name: str,
                                      log_accumulator_interval_millis: int = -1
                                      ) -> 'WatermarkTracker':
        return WatermarkTracker(aggregate_name, log_accumulator_interval_millis)


class FlinkKinesisConsumer(LegacyConnectorFunction):
    """A source function reading Kinesis data streams."""

    _instead = SOURCE_ALTERNATIVES

    def __init__(self, streams: Union[str, List[str]],
                 deserializer: Union[DeserializationSchema, KinesisDeserializationSchema],
                 config_props: Dict):
        self._streams = [streams] if isinstance(streams, str) else list(streams)
        self._deserializer = _checked(deserializer, (DeserializationSchema,
                                                     KinesisDeserializationSchema),
                                      "deserializer")
        self._config_props = _string_properties(config_props, "config_props")
        self._shard_assigner = None
        self._periodic_watermark_assigner = None
        self._watermark_tracker = None

    def set_shard_assigner(self, shard_assigner: KinesisShardAssigner
                           ) -> 'FlinkKinesisConsumer':
        self._shard_assigner = _checked(shard_assigner, KinesisShardAssigner, "shard_assigner")
        return self

    def set_periodic_watermark_assigner(self, periodic_watermark_assigner
                                        ) -> 'FlinkKinesisConsumer':
        """Assigns watermarks per shard."""
        self._periodic_watermark_assigner = periodic_watermark_assigner
        return self

    def set_watermark_tracker(self, watermark_tracker: WatermarkTracker
                              ) -> 'FlinkKinesisConsumer':
        self._watermark_tracker = _checked(watermark_tracker, WatermarkTracker,
                                           "watermark_tracker")
        return self


class PartitionKeyGenerator(object):
    """Chooses the partition key of each record a KinesisStreamsSink writes."""

    def __init__(self, kind: str):
        self._kind = kind

    @staticmethod
    def fixed() -> 'PartitionKeyGenerator':
        """One key per sink instance, so that each instance writes to one shard."""
        return PartitionKeyGenerator('fixed')

    @staticmethod
    def random() -> 'PartitionKeyGenerator':
        """A random key per record."""
        return PartitionKeyGenerator('random')


class _AsyncSinkBuilder(object):
    """The batching settings of the Kinesis sinks' builders."""

    _REQUIRED: tuple = ()

    def __init__(self):
        self._settings = {}

    def _set(self, key: str, value):
        self._settings[key] = value
        return self

    def _required_settings(self) -> dict:
        for key in self._REQUIRED:
            if self._settings.get(key) is None:
                raise ValueError(f"{type(self).__name__}: {key} is required but not provided")
        return dict(self._settings)

    def set_serialization_schema(self, serialization_schema: SerializationSchema):
        return self._set('serialization_schema', _checked(
            serialization_schema, SerializationSchema, "serialization_schema"))

    def set_fail_on_error(self, fail_on_error: bool):
        """Fails the job when a write fails (default: retries it)."""
        return self._set('fail_on_error', fail_on_error)

    def set_max_batch_size(self, max_batch_size: int):
        return self._set('max_batch_size', max_batch_size)

    def set_max_in_flight_requests(self, max_in_flight_requests: int):
        return self._set('max_in_flight_requests', max_in_flight_requests)

    def set_max_buffered_requests(self, max_buffered_requests: int):
        return self._set('max_buffered_requests', max_buffered_requests)

    def set_max_batch_size_in_bytes(self, max_batch_size_in_bytes: int):
        return self._set('max_batch_size_in_bytes', max_batch_size_in_bytes)

    def set_max_time_in_buffer_ms(self, max_time_in_buffer_ms: int):
        return self._set('max_time_in_buffer_ms', max_time_in_buffer_ms)

    def set_max_record_size_in_bytes(self, max_record_size_in_bytes: int):
        return self._set('max_record_size_in_bytes', max_record_size_in_bytes)


class KinesisStreamsSink(Sink, UnavailableConnector):
    """A sink writing to a Kinesis data stream, built with :meth:`builder`."""

    _instead = SINK_ALTERNATIVES

    def __init__(self, settings: dict):
        self._settings = settings

    @staticmethod
    def builder() -> 'KinesisStreamsSinkBuilder':
        return KinesisStreamsSinkBuilder()


class KinesisStreamsSinkBuilder(_AsyncSinkBuilder):
    """Builds a KinesisStreamsSink: stream name, serialization schema and partition key
    generator are required."""

    _REQUIRED = ('stream_name', 'serialization_schema', 'partition_key_generator')

    def set_stream_name(self, stream_name: Union[str, List[str]]) -> 'KinesisStreamsSinkBuilder':
        return self._set('stream_name', stream_name)

    def set_partition_key_generator(self, partition_key_generator: PartitionKeyGenerator
                                    ) -> 'KinesisStreamsSinkBuilder':
        return self._set('partition_key_generator', _checked(
            partition_key_generator, PartitionKeyGenerator, "partition_key_generator"))

    def set_kinesis_client_properties(self, kinesis_client_properties: Dict
                                      ) -> 'KinesisStreamsSinkBuilder':
        """AWS client properties (region, credentials, ...)."""
        return self._set('kinesis_client_properties', _string_properties(
            kinesis_client_properties, "kinesis_client_properties"))

    def build(self) -> 'KinesisStreamsSink':
        return KinesisStreamsSink(self._required_settings())


class KinesisFirehoseSink(Sink, UnavailableConnector):
    """A sink writing to a Kinesis Data Firehose delivery stream, built with
    :meth:`builder`."""

    _instead = SINK_ALTERNATIVES

    def __init__(self, settings: dict):
        self._settings = settings

    @staticmethod
    def builder() -> 'KinesisFirehoseSinkBuilder':
        return KinesisFirehoseSinkBuilder()


class KinesisFirehoseSinkBuilder(_AsyncSinkBuilder):
    """Builds a KinesisFirehoseSink: delivery stream name and serialization schema are
    required."""

    _REQUIRED = ('delivery_stream_name', 'serialization_schema')

    def set_delivery_stream_name(self, delivery_stream_name: str
                                 ) -> 'KinesisFirehoseSinkBuilder':
        return self._set('delivery_stream_name', delivery_stream_name)

    def set_firehose_client_properties(self, firehose_client_properties: Dict
                                       ) -> 'KinesisFirehoseSinkBuilder':
        """AWS client properties (region, credentials, ...)."""
        return self._set('firehose_client_properties', _string_properties(
            firehose_client_properties, "firehose_client_properties"))

    def build(self) -> 'KinesisFirehoseSink':
        return KinesisFirehoseSink(self._required_settings())
