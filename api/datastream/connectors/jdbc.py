"""JDBC sink, as in ``pyflink.datastream.connectors.jdbc``: PostgreSQL and SQLite.

Each batch's rows of a subtask are written in one database transaction, after the batch
commits, together with a row naming the job, sink, subtask and batch in the table
``spark_datastream_commits`` (created when missing): a batch replayed after a crash writes
nothing twice.
"""
from typing import List, Optional

from api.common.typeinfo import (BasicTypeInfo, DateTypeInfo, InstantTypeInfo,
                                 LocalTimeTypeInfo, PrimitiveArrayTypeInfo, RowTypeInfo,
                                 TimestampTypeInfo, TimeTypeInfo, Types)
from api.common.types import Row, RowKind
from engine.io import jdbc as engine_jdbc

# Importable from here as in PyFlink.
from api.datastream.functions import SinkFunction  # noqa: E402,F401

__all__ = ['JdbcSink', 'JdbcConnectionOptions', 'JdbcExecutionOptions']


class JdbcSink(object):
    """A sink running an SQL statement (e.g. an INSERT) for each Row, exactly once::

        ds.add_sink(JdbcSink.sink("insert into books (id, title) values (?, ?)",
                                  Types.ROW([Types.INT(), Types.STRING()]),
                                  JdbcConnectionOptions.JdbcConnectionOptionsBuilder()
                                  .with_url("jdbc:postgresql://db:5432/shop").build()))

    URLs: ``jdbc:postgresql://host[:port]/database`` (needs
    ``pip install 'spark-datastream[postgres]'``) and ``jdbc:sqlite:/path/to.db``.
    """

    def __init__(self, sql: str, type_info: RowTypeInfo,
                 jdbc_connection_options: 'JdbcConnectionOptions',
                 jdbc_execution_options: 'JdbcExecutionOptions'):
        self._sql = sql
        self._type_info = type_info
        self._connection_options = jdbc_connection_options
        self._execution_options = jdbc_execution_options
        self._deletes = (None, None)  # a changelog's DELETE statement, its parameters
        options = jdbc_connection_options
        self._database = engine_jdbc.database_for(
            options.get_db_url(), options.get_driver_name(), options.get_user_name(),
            options.get_password())

    def get_java_function(self):
        """JVM-only: there is no Java function here, so this returns None."""
        return None

    def engine_sink(self, type_info) -> engine_jdbc.JdbcSink:
        """The engine's sink; the statement's parameters come from ``sink``'s ``type_info``
        whatever the stream's type."""
        execution = self._execution_options
        return engine_jdbc.JdbcSink(self._sql, _fields_by_position(self._type_info),
                                    self._database, execution.get_batch_size(),
                                    execution.get_max_retries(), *self._deletes)

    def _deleting(self, sql: str, key: List[int]) -> 'JdbcSink':
        """This sink, running ``sql`` instead for a DELETE Row of a changelog, its ``?``
        parameters the fields at the indices ``key``."""
        types = self._type_info.get_field_types()
        self._deletes = (sql, _DeletedKey(key, _fields_by_position(
            Types.ROW([types[i] for i in key]))))
        return self

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
        unsupported = [t for t in type_info.get_field_types() if not _is_sql_type(t)]
        if unsupported:
            raise ValueError(f"JdbcSink.sink: unsupported field types {unsupported} in "
                             f"{type_info!r}; fields must be basic types, dates, times, "
                             f"timestamps or byte arrays")
        placeholders = engine_jdbc.count_placeholders(sql)
        fields = len(type_info.get_field_types())
        if placeholders != fields:
            raise ValueError(f"JdbcSink.sink: the statement has {placeholders} '?' "
                             f"parameters but {type_info!r} has {fields} fields: {sql!r}")
        return JdbcSink(sql, type_info, jdbc_connection_options,
                        jdbc_execution_options or JdbcExecutionOptions.defaults())


def _fields_by_position(type_info: RowTypeInfo):
    """The statement's parameters of a record: a Row's (or tuple's) fields by position, each
    converted by its field type (whatever the record's field names)."""
    types = type_info.get_field_types()

    def fields(value):
        if not isinstance(value, (Row, tuple, list)):
            raise TypeError(f"JdbcSink expects a Row for {type_info!r}, got "
                            f"{type(value).__name__}")
        if len(value) != len(types):
            raise ValueError(f"JdbcSink expects {len(types)} fields for {type_info!r}, got "
                             f"{len(value)}")
        return [None if v is None else t.convert(v) for t, v in zip(types, value)]
    return fields


class _DeletedKey:
    """The statement's parameters of a DELETE Row: its fields at ``key``; None for
    another Row."""

    def __init__(self, key: List[int], fields):
        self._key = key
        self._fields = fields

    def __call__(self, row):
        if row.get_row_kind() != RowKind.DELETE:
            return None
        return self._fields([row[i] for i in self._key])


def _is_sql_type(type_info) -> bool:
    """Whether a field of this type can be a statement parameter (as Flink's JDBC types)."""
    if isinstance(type_info, PrimitiveArrayTypeInfo):
        return type_info == Types.PRIMITIVE_ARRAY(Types.BYTE())
    return (isinstance(type_info, (BasicTypeInfo, DateTypeInfo, TimeTypeInfo,
                                   TimestampTypeInfo, LocalTimeTypeInfo))
            and not isinstance(type_info, InstantTypeInfo))


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
