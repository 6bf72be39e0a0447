"""Elasticsearch sinks, as in ``pyflink.datastream.connectors.elasticsearch``.

Not available yet in this engine: ``ElasticsearchSink`` can be built with
``Elasticsearch6SinkBuilder`` or ``Elasticsearch7SinkBuilder``, and a job using it fails
when it is built.
"""
import abc
from enum import Enum
from typing import List, Optional, Union

from api.unavailable import SINK_ALTERNATIVES, UnavailableConnector

from .base import DeliveryGuarantee, Sink
from .kafka import _checked

__all__ = ['FlushBackoffType', 'ElasticsearchEmitter', 'Elasticsearch6SinkBuilder',
           'Elasticsearch7SinkBuilder', 'ElasticsearchSink']


class FlushBackoffType(Enum):
    """How the wait between retries of a failed bulk request grows."""

    CONSTANT = 0
    EXPONENTIAL = 1
    NONE = 2


class ElasticsearchEmitter(object):
    """Turns each record (a dict) into an index request."""

    def __init__(self, index: str, key_field: Optional[str], doc_type: Optional[str],
                 dynamic: bool):
        self._index = index
        self._key_field = key_field
        self._doc_type = doc_type
        self._dynamic = dynamic

    @staticmethod
    def static_index(index: str, key_field: str = None, doc_type: str = None
                     ) -> 'ElasticsearchEmitter':
        """Writes every record to ``index``, with the id taken from ``key_field`` (if
        given)."""
        return ElasticsearchEmitter(index, key_field, doc_type, False)

    @staticmethod
    def dynamic_index(index_field: str, key_field: str = None, doc_type: str = None
                      ) -> 'ElasticsearchEmitter':
        """Writes each record to the index named by its field ``index_field``."""
        return ElasticsearchEmitter(index_field, key_field, doc_type, True)


class ElasticsearchSinkBuilderBase(abc.ABC):
    """The settings of the Elasticsearch sink builders; hosts and an emitter are
    required."""

    @abc.abstractmethod
    def __init__(self):
        self._settings = {}

    def get_http_host_class(self):
        """JVM-only: there is no Java HttpHost class here, so this returns None."""
        return None

    def _set(self, key: str, value) -> 'ElasticsearchSinkBuilderBase':
        self._settings[key] = value
        return self

    def set_emitter(self, emitter: ElasticsearchEmitter) -> 'ElasticsearchSinkBuilderBase':
        return self._set('emitter', _checked(emitter, ElasticsearchEmitter, "emitter"))

    def set_hosts(self, hosts: Union[str, List[str]]) -> 'ElasticsearchSinkBuilderBase':
        """The hosts, ``http://host:port``."""
        hosts = hosts if isinstance(hosts, list) else [hosts]
        if not hosts:
            raise ValueError("Hosts cannot be empty.")
        return self._set('hosts', hosts)

    def set_delivery_guarantee(self, delivery_guarantee: DeliveryGuarantee
                               ) -> 'ElasticsearchSinkBuilderBase':
        if delivery_guarantee is DeliveryGuarantee.EXACTLY_ONCE:
            raise ValueError("Elasticsearch sink does not support the EXACTLY_ONCE guarantee.")
        return self._set('delivery_guarantee', _checked(delivery_guarantee, DeliveryGuarantee,
                                                        "delivery_guarantee"))

    def set_bulk_flush_max_actions(self, num_max_actions: int) -> 'ElasticsearchSinkBuilderBase':
        if num_max_actions != -1 and num_max_actions <= 0:
            raise ValueError("Max number of buffered actions must be larger than 0.")
        return self._set('bulk_flush_max_actions', num_max_actions)

    def set_bulk_flush_max_size_mb(self, max_size_mb: int) -> 'ElasticsearchSinkBuilderBase':
        if max_size_mb != -1 and max_size_mb <= 0:
            raise ValueError("Max size of buffered actions must be larger than 0.")
        return self._set('bulk_flush_max_size_mb', max_size_mb)

    def set_bulk_flush_interval(self, interval_millis: int) -> 'ElasticsearchSinkBuilderBase':
        if interval_millis != -1 and interval_millis < 0:
            raise ValueError("Interval (in milliseconds) between each flush must be larger "
                             "than or equal to 0.")
        return self._set('bulk_flush_interval', interval_millis)

    def set_bulk_flush_backoff_strategy(self, flush_backoff_type: FlushBackoffType,
                                        max_retries: int, delay_millis: int
                                        ) -> 'ElasticsearchSinkBuilderBase':
        _checked(flush_backoff_type, FlushBackoffType, "flush_backoff_type")
        if flush_backoff_type is not FlushBackoffType.NONE and max_retries <= 0:
            raise ValueError("Max number of backoff attempts must be larger than 0.")
        return self._set('bulk_flush_backoff', (flush_backoff_type, max_retries, delay_millis))

    def set_connection_username(self, username: str) -> 'ElasticsearchSinkBuilderBase':
        return self._set('connection_username', username)

    def set_connection_password(self, password: str) -> 'ElasticsearchSinkBuilderBase':
        return self._set('connection_password', password)

    def set_connection_path_prefix(self, prefix: str) -> 'ElasticsearchSinkBuilderBase':
        return self._set('connection_path_prefix', prefix)

    def set_connection_request_timeout(self, timeout: int) -> 'ElasticsearchSinkBuilderBase':
        return self._set('connection_request_timeout', timeout)

    def set_connection_timeout(self, timeout: int) -> 'ElasticsearchSinkBuilderBase':
        return self._set('connection_timeout', timeout)

    def set_socket_timeout(self, timeout: int) -> 'ElasticsearchSinkBuilderBase':
        return self._set('socket_timeout', timeout)

    def build(self) -> 'ElasticsearchSink':
        for key in ('hosts', 'emitter'):
            if key not in self._settings:
                raise ValueError(f"Elasticsearch sink: {key} is required but not provided")
        return ElasticsearchSink(dict(self._settings))


class Elasticsearch6SinkBuilder(ElasticsearchSinkBuilderBase):
    """Builds an ElasticsearchSink for Elasticsearch 6."""

    def __init__(self):
        super().__init__()
        self._settings['version'] = 6


class Elasticsearch7SinkBuilder(ElasticsearchSinkBuilderBase):
    """Builds an ElasticsearchSink for Elasticsearch 7."""

    def __init__(self):
        super().__init__()
        self._settings['version'] = 7


class ElasticsearchSink(Sink, UnavailableConnector):
    """A sink indexing each record into Elasticsearch."""

    _instead = SINK_ALTERNATIVES

    def __init__(self, settings: dict):
        self._settings = settings
