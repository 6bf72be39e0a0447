"""RabbitMQ connectors, as in ``pyflink.datastream.connectors.rabbitmq``.

Not available yet in this engine: ``RMQSource`` and ``RMQSink`` can be built, and a job
using one fails when it is built. ``RMQConnectionConfig`` works.
"""
from typing import Optional

from api.common.serialization import DeserializationSchema, SerializationSchema
from api.unavailable import SINK_ALTERNATIVES, SOURCE_ALTERNATIVES

from .base import LegacyConnectorFunction
from .kafka import _checked

# Importable from here as in PyFlink.
from api.datastream.functions import SinkFunction  # noqa: E402,F401

__all__ = ['RMQConnectionConfig', 'RMQSource', 'RMQSink']

_CONNECTION_SETTINGS = ('host', 'port', 'virtual_host', 'user_name', 'password', 'uri',
                        'network_recovery_interval', 'automatic_recovery',
                        'topology_recovery', 'connection_timeout', 'requested_channel_max',
                        'requested_frame_max', 'requested_heartbeat', 'prefetch_count')


class RMQConnectionConfig(object):
    """How to connect to RabbitMQ: a URI, or host, port, virtual host, user name and
    password. A getter gives None for what was not set."""

    def __init__(self, settings: dict):
        self._settings = settings

    def get_host(self) -> Optional[str]:
        return self._settings['host']

    def get_port(self) -> Optional[int]:
        return self._settings['port']

    def get_virtual_host(self) -> Optional[str]:
        return self._settings['virtual_host']

    def get_user_name(self) -> Optional[str]:
        return self._settings['user_name']

    def get_password(self) -> Optional[str]:
        return self._settings['password']

    def get_uri(self) -> Optional[str]:
        return self._settings['uri']

    def get_network_recovery_interval(self) -> Optional[int]:
        return self._settings['network_recovery_interval']

    def is_automatic_recovery(self) -> Optional[bool]:
        return self._settings['automatic_recovery']

    def is_topology_recovery(self) -> Optional[bool]:
        return self._settings['topology_recovery']

    def get_connection_timeout(self) -> Optional[int]:
        return self._settings['connection_timeout']

    def get_requested_channel_max(self) -> Optional[int]:
        return self._settings['requested_channel_max']

    def get_requested_frame_max(self) -> Optional[int]:
        return self._settings['requested_frame_max']

    def get_requested_heartbeat(self) -> Optional[int]:
        return self._settings['requested_heartbeat']

    class Builder(object):
        """Builds an RMQConnectionConfig from a URI or from host, port, virtual host, user
        name and password."""

        def __init__(self):
            self._settings = dict.fromkeys(_CONNECTION_SETTINGS)

        def _set(self, key: str, value) -> 'RMQConnectionConfig.Builder':
            self._settings[key] = value
            return self

        def set_port(self, port: int) -> 'RMQConnectionConfig.Builder':
            return self._set('port', port)

        def set_host(self, host: str) -> 'RMQConnectionConfig.Builder':
            return self._set('host', host)

        def set_virtual_host(self, vhost: str) -> 'RMQConnectionConfig.Builder':
            return self._set('virtual_host', vhost)

        def set_user_name(self, user_name: str) -> 'RMQConnectionConfig.Builder':
            return self._set('user_name', user_name)

        def set_password(self, password: str) -> 'RMQConnectionConfig.Builder':
            return self._set('password', password)

        def set_uri(self, uri: str) -> 'RMQConnectionConfig.Builder':
            """A connection URI (``amqp://user:password@host:port/vhost``), instead of host,
            port, virtual host, user name and password."""
            return self._set('uri', uri)

        def set_topology_recovery_enabled(self, topology_recovery_enabled: bool
                                          ) -> 'RMQConnectionConfig.Builder':
            return self._set('topology_recovery', topology_recovery_enabled)

        def set_requested_heartbeat(self, requested_heartbeat: int
                                    ) -> 'RMQConnectionConfig.Builder':
            return self._set('requested_heartbeat', requested_heartbeat)

        def set_requested_frame_max(self, requested_frame_max: int
                                    ) -> 'RMQConnectionConfig.Builder':
            return self._set('requested_frame_max', requested_frame_max)

        def set_requested_channel_max(self, requested_channel_max: int
                                      ) -> 'RMQConnectionConfig.Builder':
            return self._set('requested_channel_max', requested_channel_max)

        def set_network_recovery_interval(self, network_recovery_interval: int
                                          ) -> 'RMQConnectionConfig.Builder':
            return self._set('network_recovery_interval', network_recovery_interval)

        def set_connection_timeout(self, connection_timeout: int
                                   ) -> 'RMQConnectionConfig.Builder':
            return self._set('connection_timeout', connection_timeout)

        def set_automatic_recovery(self, automatic_recovery: bool
                                   ) -> 'RMQConnectionConfig.Builder':
            return self._set('automatic_recovery', automatic_recovery)

        def set_prefetch_count(self, prefetch_count: int) -> 'RMQConnectionConfig.Builder':
            """How many unacknowledged messages the source may hold."""
            return self._set('prefetch_count', prefetch_count)

        def build(self) -> 'RMQConnectionConfig':
            if self._settings['uri'] is None:
                for key in ('host', 'port', 'virtual_host', 'user_name', 'password'):
                    if self._settings[key] is None:
                        raise ValueError(f"RMQConnectionConfig: {key} can not be null (set it, "
                                         f"or set a URI)")
            return RMQConnectionConfig(dict(self._settings))


class RMQSource(LegacyConnectorFunction):
    """A source reading messages from a RabbitMQ queue (with ``use_correlation_id``,
    exactly once by deduplicating on correlation ids)."""

    _instead = SOURCE_ALTERNATIVES

    def __init__(self, connection_config: 'RMQConnectionConfig', queue_name: str,
                 use_correlation_id: bool, deserialization_schema: DeserializationSchema):
        self._connection_config = _checked(connection_config, RMQConnectionConfig,
                                           "connection_config")
        self._queue_name = queue_name
        self._use_correlation_id = use_correlation_id
        self._deserialization_schema = _checked(deserialization_schema, DeserializationSchema,
                                                "deserialization_schema")


class RMQSink(LegacyConnectorFunction):
    """A sink publishing each record to a RabbitMQ queue."""

    _instead = SINK_ALTERNATIVES

    def __init__(self, connection_config: 'RMQConnectionConfig', queue_name: str,
                 serialization_schema: SerializationSchema):
        self._connection_config = _checked(connection_config, RMQConnectionConfig,
                                           "connection_config")
        self._queue_name = queue_name
        self._serialization_schema = _checked(serialization_schema, SerializationSchema,
                                              "serialization_schema")
