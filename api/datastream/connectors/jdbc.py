"""JDBC sink, as in ``pyflink.datastream.connectors.jdbc``.

Not available yet in this engine: ``JdbcSink.sink(...)`` can be built and configured, and a
job using it fails when it is built. The connection and execution options work.
"""
from typing import Optional

from api.common.typeinfo import RowTypeInfo
from api.unavailable import SINK_ALTERNATIVES

from .base import LegacyConnectorFunction

# Importable from here as in PyFlink.
from api.datastream.functions import SinkFunction  # noqa: E402,F401

__all__ = ['JdbcSink', 'JdbcConnectionOptions', 'JdbcExecutionOptions']


class JdbcSink(LegacyConnectorFunction):
    """A sink running an SQL statement (e.g. an INSERT) for each Row, in batches::

        ds.add_sink(JdbcSink.sink("insert into books (id, title) values (?, ?)",
                                  Types.ROW([Types.INT(), Types.STRING()]),
                                  JdbcConnectionOptions.JdbcConnectionOptionsBuilder()
                                  .with_url("jdbc:postgresql://db:5432/shop").build()))
    """

    _instead = SINK_ALTERNATIVES

    def __init__(self, sql: str, type_info: RowTypeInfo,
                 jdbc_connection_options: 'JdbcConnectionOptions',
                 jdbc_execution_options: 'JdbcExecutionOptions'):
        self._sql = sql
        self._type_info = type_info
        self._connection_options = jdbc_connection_options
        self._execution_options = jdbc_execution_options

    @staticmethod
    def sink(sql: str, type_info: RowTypeInfo,
             jdbc_connection_options: 'JdbcConnectionOptions',
             jdbc_execution_options: 'JdbcExecutionOptions' = None) -> 'JdbcSink':
        """A JdbcSink filling the statement's ``?`` parameters from each Row's fields
        (``type_info`` gives their SQL types); ``jdbc_execution_options`` default to
        ``JdbcExecutionOptions.defaults()``."""
        if not isinstance(type_info, RowTypeInfo):
            raise TypeError(f"JdbcSink.sink: type_info must be a row type (Types.ROW or "
                            f"Types.ROW_NAMED), got {type_info!r}")
        if not isinstance(jdbc_connection_options, JdbcConnectionOptions):
            raise TypeError(f"JdbcSink.sink: jdbc_connection_options must be "
                            f"JdbcConnectionOptions, got {jdbc_connection_options!r}")
        return JdbcSink(sql, type_info, jdbc_connection_options,
                        jdbc_execution_options or JdbcExecutionOptions.defaults())


class JdbcConnectionOptions(object):
    """How to connect to the database: URL, driver class, user name and password."""

    def __init__(self, url: str, driver_name: Optional[str], user_name: Optional[str],
                 password: Optional[str]):
        self._url = url
        self._driver_name = driver_name
        self._user_name = user_name
        self._password = password

    def get_db_url(self) -> str:
        return self._url

    def get_driver_name(self) -> Optional[str]:
        return self._driver_name

    def get_user_name(self) -> Optional[str]:
        return self._user_name

    def get_password(self) -> Optional[str]:
        return self._password

    class JdbcConnectionOptionsBuilder(object):
        """Builds JdbcConnectionOptions; the URL is required."""

        def __init__(self):
            self._url = None
            self._driver_name = None
            self._user_name = None
            self._password = None

        def with_url(self, url: str) -> 'JdbcConnectionOptions.JdbcConnectionOptionsBuilder':
            self._url = url
            return self

        def with_driver_name(self, driver_name: str
                             ) -> 'JdbcConnectionOptions.JdbcConnectionOptionsBuilder':
            self._driver_name = driver_name
            return self

        def with_user_name(self, user_name: str
                           ) -> 'JdbcConnectionOptions.JdbcConnectionOptionsBuilder':
            self._user_name = user_name
            return self

        def with_password(self, password: str
                          ) -> 'JdbcConnectionOptions.JdbcConnectionOptionsBuilder':
            self._password = password
            return self

        def build(self) -> 'JdbcConnectionOptions':
            if self._url is None:
                raise ValueError("No dbURL supplied.")
            return JdbcConnectionOptions(self._url, self._driver_name, self._user_name,
                                         self._password)


class JdbcExecutionOptions(object):
    """How JdbcSink writes: rows per batch, the longest wait before a batch is written (ms,
    0 for no limit) and how often a failed batch is retried."""

    def __init__(self, batch_interval_ms: int, batch_size: int, max_retries: int):
        if max_retries < 0:
            raise ValueError(f"max_retries must not be negative, got {max_retries}")
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        self._batch_interval_ms = batch_interval_ms
        self._batch_size = batch_size
        self._max_retries = max_retries

    def get_batch_interval_ms(self) -> int:
        return self._batch_interval_ms

    def get_batch_size(self) -> int:
        return self._batch_size

    def get_max_retries(self) -> int:
        return self._max_retries

    @staticmethod
    def defaults() -> 'JdbcExecutionOptions':
        """Batches of 5000 rows, no time limit, 3 retries."""
        return JdbcExecutionOptions.builder().build()

    @staticmethod
    def builder() -> 'JdbcExecutionOptions.Builder':
        return JdbcExecutionOptions.Builder()

    class Builder(object):
        """Builds JdbcExecutionOptions; starts from the defaults."""

        def __init__(self):
            self._batch_interval_ms = 0
            self._batch_size = 5000
            self._max_retries = 3

        def with_batch_size(self, size: int) -> 'JdbcExecutionOptions.Builder':
            self._batch_size = size
            return self

        def with_batch_interval_ms(self, interval_ms: int) -> 'JdbcExecutionOptions.Builder':
            self._batch_interval_ms = interval_ms
            return self

        def with_max_retries(self, max_retries: int) -> 'JdbcExecutionOptions.Builder':
            self._max_retries = max_retries
            return self

        def build(self) -> 'JdbcExecutionOptions':
            return JdbcExecutionOptions(self._batch_interval_ms, self._batch_size,
                                        self._max_retries)
