"""Cassandra sink, as in ``pyflink.datastream.connectors.cassandra``.

Not available yet in this engine: ``CassandraSink.add_sink(ds)`` returns a builder that
records its settings, and its ``build()`` (which adds the sink to the job) fails.
"""
from enum import Enum

from api.common.time import Duration
from api.unavailable import SINK_ALTERNATIVES, UnavailableConnector, check_available

from .kafka import _checked

__all__ = ['CassandraSink', 'ConsistencyLevel', 'MapperOptions', 'ClusterBuilder',
           'CassandraCommitter', 'CassandraFailureHandler']


class ConsistencyLevel(Enum):
    """How many Cassandra replicas must acknowledge a write."""

    ANY = 0
    ONE = 1
    TWO = 2
    THREE = 3
    QUORUM = 4
    ALL = 5
    LOCAL_QUORUM = 6
    EACH_QUORUM = 7
    SERIAL = 8
    LOCAL_SERIAL = 9
    LOCAL_ONE = 10


class MapperOptions(object):
    """Options of the object mapper writing POJOs."""

    def __init__(self):
        self._settings = {}

    def _set(self, key: str, value) -> 'MapperOptions':
        self._settings[key] = value
        return self

    def ttl(self, ttl: int) -> 'MapperOptions':
        """Time to live of the written rows, in seconds."""
        return self._set('ttl', ttl)

    def timestamp(self, timestamp: int) -> 'MapperOptions':
        return self._set('timestamp', timestamp)

    def consistency_level(self, cl: ConsistencyLevel) -> 'MapperOptions':
        return self._set('consistency_level', _checked(cl, ConsistencyLevel, "cl"))

    def tracing(self, enabled: bool) -> 'MapperOptions':
        return self._set('tracing', enabled)

    def save_null_fields(self, enabled: bool) -> 'MapperOptions':
        return self._set('save_null_fields', enabled)

    def if_not_exists(self, enabled: bool) -> 'MapperOptions':
        return self._set('if_not_exists', enabled)


class ClusterBuilder(object):
    """Builds the connection to the Cassandra cluster (in PyFlink, a Java ClusterBuilder)."""

    def __init__(self, cluster_builder):
        self._cluster_builder = cluster_builder


class CassandraCommitter(object):
    """Records which checkpoints the write-ahead log committed, in a Cassandra table."""

    def __init__(self, builder: ClusterBuilder, key_space: str):
        self._builder = builder
        self._key_space = key_space

    @staticmethod
    def default_checkpoint_committer(builder: ClusterBuilder, key_space: str = None
                                     ) -> 'CassandraCommitter':
        return CassandraCommitter(_checked(builder, ClusterBuilder, "builder"), key_space)


class CassandraFailureHandler(object):
    """What to do when a write fails."""

    def __init__(self, kind: str):
        self._kind = kind

    @staticmethod
    def no_op() -> 'CassandraFailureHandler':
        """Fails the job."""
        return CassandraFailureHandler('no_op')


class CassandraSink(UnavailableConnector):
    """A sink writing tuples, rows or POJOs to Cassandra: ``CassandraSink.add_sink(ds)``
    returns a builder whose ``build()`` adds the sink to the job."""

    _instead = SINK_ALTERNATIVES

    def __init__(self, settings: dict):
        self._settings = settings

    def name(self, name: str) -> 'CassandraSink':
        self._settings['name'] = name
        return self

    def uid(self, uid: str) -> 'CassandraSink':
        self._settings['uid'] = uid
        return self

    def set_uid_hash(self, uid_hash: str) -> 'CassandraSink':
        self._settings['uid_hash'] = uid_hash
        return self

    def set_parallelism(self, parallelism: int) -> 'CassandraSink':
        self._settings['parallelism'] = parallelism
        return self

    def disable_chaining(self) -> 'CassandraSink':
        self._settings['chaining'] = False
        return self

    def slot_sharing_group(self, slot_sharing_group: str) -> 'CassandraSink':
        self._settings['slot_sharing_group'] = slot_sharing_group
        return self

    @staticmethod
    def add_sink(input) -> 'CassandraSink.CassandraSinkBuilder':
        """Starts a Cassandra sink for the stream ``input``."""
        return CassandraSink.CassandraSinkBuilder(input)

    class CassandraSinkBuilder(object):
        """Records the query, hosts or cluster builder and options of a CassandraSink."""

        def __init__(self, input):
            self._settings = {'input': input}

        def _set(self, key: str, value) -> 'CassandraSink.CassandraSinkBuilder':
            self._settings[key] = value
            return self

        def set_query(self, query: str) -> 'CassandraSink.CassandraSinkBuilder':
            """The CQL insert statement, with a ``?`` per field."""
            return self._set('query', query)

        def set_host(self, host: str, port: int = 9042) -> 'CassandraSink.CassandraSinkBuilder':
            return self._set('host', (host, port))

        def set_cluster_builder(self, builder: ClusterBuilder
                                ) -> 'CassandraSink.CassandraSinkBuilder':
            return self._set('cluster_builder', _checked(builder, ClusterBuilder, "builder"))

        def enable_write_ahead_log(self, committer: CassandraCommitter = None
                                   ) -> 'CassandraSink.CassandraSinkBuilder':
            """Writes exactly once, through a write-ahead log committed on checkpoints."""
            return self._set('write_ahead_log', committer or True)

        def set_mapper_options(self, options: MapperOptions
                               ) -> 'CassandraSink.CassandraSinkBuilder':
            return self._set('mapper_options', _checked(options, MapperOptions, "options"))

        def set_failure_handler(self, failure_handler: CassandraFailureHandler
                                ) -> 'CassandraSink.CassandraSinkBuilder':
            return self._set('failure_handler', _checked(
                failure_handler, CassandraFailureHandler, "failure_handler"))

        def set_max_concurrent_requests(self, max_concurrent_requests: int,
                                        duration: Duration = None
                                        ) -> 'CassandraSink.CassandraSinkBuilder':
            """At most this many writes in flight, waiting up to ``duration`` for a slot."""
            return self._set('max_concurrent_requests', (max_concurrent_requests, duration))

        def enable_ignore_null_fields(self) -> 'CassandraSink.CassandraSinkBuilder':
            return self._set('ignore_null_fields', True)

        def build(self) -> 'CassandraSink':
            """Adds the sink to the job: fails, as Cassandra is not available yet."""
            sink = CassandraSink(dict(self._settings))
            check_available(sink)
            return sink
