"""Pulsar connectors, as in ``pyflink.datastream.connectors.pulsar``.

Not available yet in this engine: ``PulsarSource`` and ``PulsarSink`` can be built and
configured, and a job using one fails when it is built.
"""
import warnings
from enum import Enum
from typing import Dict, List, Optional, Union

from api.common.serialization import DeserializationSchema, SerializationSchema
from api.common.time import Duration
from api.unavailable import SINK_ALTERNATIVES, SOURCE_ALTERNATIVES, UnavailableConnector

from .base import DeliveryGuarantee, Sink, Source
from .kafka import _checked

__all__ = ['PulsarSource', 'PulsarSourceBuilder', 'StartCursor', 'StopCursor', 'RangeGenerator',
           'PulsarSink', 'PulsarSinkBuilder', 'MessageDelayer', 'TopicRoutingMode']


class _Choice(object):
    """A named choice with its arguments (a cursor, a range generator, a delayer)."""

    def __init__(self, kind: str, **arguments):
        self._kind = kind
        self._arguments = arguments

    def __eq__(self, other):
        return type(other) is type(self) and \
            (self._kind, self._arguments) == (other._kind, other._arguments)

    def __repr__(self):
        return f"{type(self).__name__}.{self._kind}({self._arguments})"


class StartCursor(_Choice):
    """Where a PulsarSource starts reading each topic partition."""

    @staticmethod
    def default_start_cursor() -> 'StartCursor':
        """The earliest message."""
        return StartCursor.earliest()

    @staticmethod
    def earliest() -> 'StartCursor':
        return StartCursor('earliest')

    @staticmethod
    def latest() -> 'StartCursor':
        return StartCursor('latest')

    @staticmethod
    def from_message_id(message_id: bytes, inclusive: bool = True) -> 'StartCursor':
        """The message with this (serialized) id, included or not."""
        return StartCursor('from_message_id', message_id=message_id, inclusive=inclusive)

    @staticmethod
    def from_publish_time(timestamp: int) -> 'StartCursor':
        """The first message published at or after ``timestamp`` (ms)."""
        return StartCursor('from_publish_time', timestamp=timestamp)


class StopCursor(_Choice):
    """Where a PulsarSource stops reading each topic partition."""

    @staticmethod
    def default_stop_cursor() -> 'StopCursor':
        """Never stops."""
        return StopCursor.never()

    @staticmethod
    def never() -> 'StopCursor':
        return StopCursor('never')

    @staticmethod
    def latest() -> 'StopCursor':
        """The latest message when the source starts."""
        return StopCursor('latest')

    @staticmethod
    def at_event_time(timestamp: int) -> 'StopCursor':
        return StopCursor('at_event_time', timestamp=timestamp)

    @staticmethod
    def after_event_time(timestamp: int) -> 'StopCursor':
        return StopCursor('after_event_time', timestamp=timestamp)

    @staticmethod
    def at_publish_time(timestamp: int) -> 'StopCursor':
        return StopCursor('at_publish_time', timestamp=timestamp)

    @staticmethod
    def after_publish_time(timestamp: int) -> 'StopCursor':
        return StopCursor('after_publish_time', timestamp=timestamp)

    @staticmethod
    def at_message_id(message_id: bytes) -> 'StopCursor':
        return StopCursor('at_message_id', message_id=message_id)

    @staticmethod
    def after_message_id(message_id: bytes) -> 'StopCursor':
        return StopCursor('after_message_id', message_id=message_id)


class RangeGenerator(_Choice):
    """Which key hash ranges a Key_Shared subscription reads."""

    @staticmethod
    def full() -> 'RangeGenerator':
        """Every key."""
        return RangeGenerator('full')

    @staticmethod
    def fixed_key(support_null_key: bool = False,
                  keys: Optional[Union[str, List[str]]] = None,
                  key_bytes: Optional[bytes] = None,
                  ordering_key_bytes: Optional[bytes] = None) -> 'RangeGenerator':
        """Only the messages with these keys (and, with ``support_null_key``, no key)."""
        return RangeGenerator('fixed_key', support_null_key=support_null_key,
                              keys=[keys] if isinstance(keys, str) else keys,
                              key_bytes=key_bytes, ordering_key_bytes=ordering_key_bytes)


class TopicRoutingMode(Enum):
    """How a PulsarSink spreads messages over topic partitions."""

    ROUND_ROBIN = 0
    MESSAGE_KEY_HASH = 1
    CUSTOM = 2


class MessageDelayer(_Choice):
    """How long Pulsar holds a message before consumers see it."""

    @staticmethod
    def never() -> 'MessageDelayer':
        return MessageDelayer('never')

    @staticmethod
    def fixed(duration: Duration) -> 'MessageDelayer':
        return MessageDelayer('fixed', duration=_checked(duration, Duration, "duration"))


class _PulsarBuilder(object):
    """The settings both Pulsar builders share."""

    def __init__(self):
        self._settings = {'config': {}}

    def _set(self, key: str, value):
        self._settings[key] = value
        return self

    def _require(self, *keys: str):
        for key in keys:
            if self._settings.get(key) is None:
                raise ValueError(f"Pulsar: {key} is required but not provided")

    def set_admin_url(self, admin_url: str):
        """The Pulsar admin service URL."""
        return self._set('admin_url', admin_url)

    def set_service_url(self, service_url: str):
        """The Pulsar service URL (``pulsar://host:6650``)."""
        return self._set('service_url', service_url)

    def set_topics(self, topics: Union[str, List[str]]):
        return self._set('topics', topics if isinstance(topics, list) else [topics])

    def set_authentication(self, auth_plugin_class_name: str,
                           auth_params_string: Union[str, Dict[str, str]]):
        """The authentication plugin class and its parameters (a string or a dict)."""
        return self._set('authentication', (auth_plugin_class_name, auth_params_string))

    def set_config(self, key: str, value):
        """A Pulsar client option."""
        self._settings['config'][key] = value
        return self

    def set_properties(self, config: Dict):
        """Pulsar client options, added to those already set."""
        self._settings['config'].update(_checked(config, dict, "config"))
        return self

    def _built_settings(self) -> dict:
        return dict(self._settings, config=dict(self._settings['config']))


class PulsarSource(Source, UnavailableConnector):
    """A source reading Pulsar topics, built with :meth:`builder`."""

    _instead = SOURCE_ALTERNATIVES

    def __init__(self, settings: dict):
        self._settings = settings

    @staticmethod
    def builder() -> 'PulsarSourceBuilder':
        return PulsarSourceBuilder()


class PulsarSourceBuilder(_PulsarBuilder):
    """Builds a PulsarSource: service URL, subscription name, topics (or a topic pattern)
    and a deserialization schema are required."""

    def set_subscription_name(self, subscription_name: str) -> 'PulsarSourceBuilder':
        return self._set('subscription_name', subscription_name)

    def set_topic_pattern(self, topic_pattern: str) -> 'PulsarSourceBuilder':
        """Reads the topics whose names match this regular expression."""
        return self._set('topic_pattern', topic_pattern)

    def set_consumer_name(self, consumer_name: str) -> 'PulsarSourceBuilder':
        return self._set('consumer_name', consumer_name)

    def set_range_generator(self, range_generator: RangeGenerator) -> 'PulsarSourceBuilder':
        return self._set('range_generator', _checked(range_generator, RangeGenerator,
                                                     "range_generator"))

    def set_start_cursor(self, start_cursor: StartCursor) -> 'PulsarSourceBuilder':
        return self._set('start_cursor', _checked(start_cursor, StartCursor, "start_cursor"))

    def set_unbounded_stop_cursor(self, stop_cursor: StopCursor) -> 'PulsarSourceBuilder':
        """Stays unbounded (a streaming source) but stops at this cursor."""
        self._set('bounded', False)
        return self._set('stop_cursor', _checked(stop_cursor, StopCursor, "stop_cursor"))

    def set_bounded_stop_cursor(self, stop_cursor: StopCursor) -> 'PulsarSourceBuilder':
        """Makes the source bounded, ending at this cursor."""
        self._set('bounded', True)
        return self._set('stop_cursor', _checked(stop_cursor, StopCursor, "stop_cursor"))

    def set_deserialization_schema(self, deserialization_schema: DeserializationSchema
                                   ) -> 'PulsarSourceBuilder':
        return self._set('deserialization_schema', _checked(
            deserialization_schema, DeserializationSchema, "deserialization_schema"))

    def set_config_with_dict(self, config: Dict) -> 'PulsarSourceBuilder':
        """Deprecated: use ``set_properties``."""
        warnings.warn("set_config_with_dict is deprecated. Use set_properties instead.",
                      DeprecationWarning, stacklevel=2)
        return self.set_properties(config)

    def build(self) -> 'PulsarSource':
        self._require('service_url', 'subscription_name', 'deserialization_schema')
        if self._settings.get('topics') is None and self._settings.get('topic_pattern') is None:
            raise ValueError("Pulsar: topics or a topic pattern is required but not provided")
        return PulsarSource(self._built_settings())


class PulsarSink(Sink, UnavailableConnector):
    """A sink writing to Pulsar topics, built with :meth:`builder`."""

    _instead = SINK_ALTERNATIVES

    def __init__(self, settings: dict):
        self._settings = settings

    @staticmethod
    def builder() -> 'PulsarSinkBuilder':
        return PulsarSinkBuilder()


class PulsarSinkBuilder(_PulsarBuilder):
    """Builds a PulsarSink: service URL, topics and a serialization schema are required."""

    def set_producer_name(self, producer_name: str) -> 'PulsarSinkBuilder':
        return self._set('producer_name', producer_name)

    def set_delivery_guarantee(self, delivery_guarantee: DeliveryGuarantee
                               ) -> 'PulsarSinkBuilder':
        return self._set('delivery_guarantee', _checked(delivery_guarantee, DeliveryGuarantee,
                                                        "delivery_guarantee"))

    def set_topic_routing_mode(self, topic_routing_mode: TopicRoutingMode
                               ) -> 'PulsarSinkBuilder':
        return self._set('topic_routing_mode', _checked(topic_routing_mode, TopicRoutingMode,
                                                        "topic_routing_mode"))

    def set_topic_router(self, topic_router_class_name: str) -> 'PulsarSinkBuilder':
        """A custom topic router, by Java class name."""
        return self._set('topic_router', topic_router_class_name)

    def set_serialization_schema(self, serialization_schema: SerializationSchema
                                 ) -> 'PulsarSinkBuilder':
        return self._set('serialization_schema', _checked(
            serialization_schema, SerializationSchema, "serialization_schema"))

    def delay_sending_message(self, message_delayer: MessageDelayer) -> 'PulsarSinkBuilder':
        return self._set('message_delayer', _checked(message_delayer, MessageDelayer,
                                                     "message_delayer"))

    def build(self) -> 'PulsarSink':
        self._require('service_url', 'topics', 'serialization_schema')
        return PulsarSink(self._built_settings())
