"""Dynamic Kafka source, as in ``pyflink.datastream.connectors.dynamic_kafka``: reads streams
whose topics and clusters a metadata service names and may change while the job runs.

Not available yet in this engine: ``DynamicKafkaSource`` can be built and configured, and a
job using it fails when it is built.
"""
from typing import Dict, Set

from api.common.serialization import DeserializationSchema
from api.common.typeinfo import TypeInformation
from api.unavailable import SOURCE_ALTERNATIVES, UnavailableConnector

from .base import Source
from .kafka import KafkaOffsetsInitializer, _checked, _string_properties

__all__ = ['DynamicKafkaSource', 'DynamicKafkaSourceBuilder', 'KafkaMetadataService',
           'KafkaRecordDeserializationSchema', 'KafkaStreamSetSubscriber',
           'KafkaStreamSubscriber', 'StreamPatternSubscriber',
           'SingleClusterTopicMetadataService']


class KafkaMetadataService(object):
    """Tells a DynamicKafkaSource which clusters and topics make up each stream."""


class SingleClusterTopicMetadataService(KafkaMetadataService):
    """Every stream is the topic of the same name on one Kafka cluster."""

    def __init__(self, kafka_cluster_id: str, properties: Dict[str, str]):
        self._kafka_cluster_id = kafka_cluster_id
        self._properties = _string_properties(properties, "properties")


class KafkaStreamSubscriber(object):
    """Chooses the streams a DynamicKafkaSource reads."""


class KafkaStreamSetSubscriber(KafkaStreamSubscriber):
    """Reads the streams with these ids."""

    def __init__(self, stream_ids: Set[str]):
        self._stream_ids = set(stream_ids)


class StreamPatternSubscriber(KafkaStreamSubscriber):
    """Reads the streams whose ids match this regular expression."""

    def __init__(self, stream_pattern: str):
        self._stream_pattern = stream_pattern


class KafkaRecordDeserializationSchema(DeserializationSchema):
    """Turns a Kafka record into a record; ``value_only`` reads just the value."""

    def __init__(self, value_schema: DeserializationSchema):
        self._value_schema = value_schema

    @staticmethod
    def value_only(deserialization_schema: DeserializationSchema
                   ) -> 'KafkaRecordDeserializationSchema':
        """Reads each record's value with ``deserialization_schema``."""
        return KafkaRecordDeserializationSchema(_checked(
            deserialization_schema, DeserializationSchema, "deserialization_schema"))

    def _deserialize(self, message: bytes):
        return self._value_schema._deserialize(message)

    def _produced_type(self) -> TypeInformation:
        return self._value_schema._produced_type()


class DynamicKafkaSource(Source, UnavailableConnector):
    """A source reading Kafka streams across clusters, built with :meth:`builder`."""

    _instead = SOURCE_ALTERNATIVES

    def __init__(self, settings: dict):
        self._settings = settings

    @staticmethod
    def builder() -> 'DynamicKafkaSourceBuilder':
        return DynamicKafkaSourceBuilder()


class DynamicKafkaSourceBuilder(object):
    """Builds a DynamicKafkaSource: streams (ids, a pattern or a subscriber), a metadata
    service and a deserializer are required."""

    def __init__(self):
        self._settings = {'subscriber': None, 'metadata_service': None, 'deserializer': None,
                          'starting_offsets': KafkaOffsetsInitializer.earliest(),
                          'stopping_offsets': None, 'properties': {}}

    def build(self) -> DynamicKafkaSource:
        for key, what in (('subscriber', "Kafka stream subscriber"),
                          ('metadata_service', "Kafka metadata service"),
                          ('deserializer', "Deserialization schema")):
            if self._settings[key] is None:
                raise ValueError(f"{what} is required but not provided.")
        return DynamicKafkaSource(dict(self._settings,
                                       properties=dict(self._settings['properties'])))

    def set_stream_ids(self, stream_ids: Set[str]) -> 'DynamicKafkaSourceBuilder':
        return self.set_kafka_stream_subscriber(KafkaStreamSetSubscriber(stream_ids))

    def set_stream_pattern(self, stream_pattern: str) -> 'DynamicKafkaSourceBuilder':
        return self.set_kafka_stream_subscriber(StreamPatternSubscriber(stream_pattern))

    def set_kafka_stream_subscriber(self, kafka_stream_subscriber: KafkaStreamSubscriber
                                    ) -> 'DynamicKafkaSourceBuilder':
        self._settings['subscriber'] = _checked(kafka_stream_subscriber, KafkaStreamSubscriber,
                                                "kafka_stream_subscriber")
        return self

    def set_kafka_metadata_service(self, kafka_metadata_service: KafkaMetadataService
                                   ) -> 'DynamicKafkaSourceBuilder':
        self._settings['metadata_service'] = _checked(
            kafka_metadata_service, KafkaMetadataService, "kafka_metadata_service")
        return self

    def set_deserializer(self, deserializer: KafkaRecordDeserializationSchema
                         ) -> 'DynamicKafkaSourceBuilder':
        self._settings['deserializer'] = _checked(deserializer, KafkaRecordDeserializationSchema,
                                                  "deserializer")
        return self

    def set_value_only_deserializer(self, deserialization_schema: DeserializationSchema
                                    ) -> 'DynamicKafkaSourceBuilder':
        return self.set_deserializer(
            KafkaRecordDeserializationSchema.value_only(deserialization_schema))

    def set_starting_offsets(self, starting_offsets_initializer: KafkaOffsetsInitializer
                             ) -> 'DynamicKafkaSourceBuilder':
        self._settings['starting_offsets'] = _checked(
            starting_offsets_initializer, KafkaOffsetsInitializer, "starting offsets")
        return self

    def set_bounded(self, stopping_offsets_initializer: KafkaOffsetsInitializer
                    ) -> 'DynamicKafkaSourceBuilder':
        """Makes the source bounded, ending at these offsets."""
        self._settings['stopping_offsets'] = _checked(
            stopping_offsets_initializer, KafkaOffsetsInitializer, "stopping offsets")
        return self

    def set_properties(self, props: Dict[str, str]) -> 'DynamicKafkaSourceBuilder':
        """Kafka consumer properties, added to those already set."""
        self._settings['properties'].update(_string_properties(props, "props"))
        return self

    def set_property(self, key: str, value: str) -> 'DynamicKafkaSourceBuilder':
        self._settings['properties'][key] = value
        return self

    def set_group_id(self, group_id: str) -> 'DynamicKafkaSourceBuilder':
        return self.set_property('group.id', group_id)

    def set_client_id_prefix(self, prefix: str) -> 'DynamicKafkaSourceBuilder':
        return self.set_property('client.id.prefix', prefix)
