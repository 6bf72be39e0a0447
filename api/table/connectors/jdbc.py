"""The ``jdbc`` SQL connector, on JdbcSink (exactly once: each batch in one database
transaction) and a bounded scan of the table, with Flink's options 'url', 'table-name',
'username', 'password', 'driver' (accepted; the URL chooses the driver) and
'sink.buffer-flush.max-rows'. With a primary key the sink writes upserts (``INSERT ... ON
CONFLICT (key) DO UPDATE``), drops ``-U`` rows and deletes the row of a ``-D``'s key, in
the changelog's order. URLs: ``jdbc:postgresql://host[:port]/database`` and
``jdbc:sqlite:/path``."""
from typing import Callable, Optional

from api.common.typeinfo import Types
from api.common.types import RowKind
from api.common.watermark_strategy import WatermarkStrategy
from api.datastream.connectors.base import Source
from api.datastream.connectors.jdbc import (JdbcConnectionOptions, JdbcExecutionOptions,
                                            JdbcSink)
from api.datastream.data_stream import DataStream
from engine.io import jdbc as engine_jdbc
from ..ddl import TableDefinition
from .options import SqlConnector, check_options, row_type

__all__ = ['JDBC']

_OPTIONS = ('url', 'table-name', 'username', 'password', 'driver', 'sink.buffer-flush.max-rows',
            'sink.buffer-flush.interval', 'sink.max-retries', 'sink.parallelism')


def _check(definition: TableDefinition) -> None:
    check_options('jdbc', definition.options, _OPTIONS, required=['url', 'table-name'])
    _connection(definition)


def _connection(definition: TableDefinition) -> JdbcConnectionOptions:
    options = definition.options
    builder = JdbcConnectionOptions.JdbcConnectionOptionsBuilder().with_url(options['url'])
    for key, setter in (('driver', builder.with_driver_name),
                        ('username', builder.with_user_name),
                        ('password', builder.with_password)):
        if key in options:
            setter(options[key])
    return builder.build()


def _quoted(name: str) -> str:
    return '"%s"' % name.replace('"', '""')


def jdbc_source(env, definition: TableDefinition, parallelism: Optional[int]) -> DataStream:
    """The bounded stream of the rows of the table 'table-name' (read once, in the order
    of its columns)."""
    names = ', '.join(_quoted(n) for n, _ in definition.physical_columns())
    order = ', '.join(str(i + 1) for i in range(len(definition.physical_columns())))
    connection = _connection(definition)
    database = engine_jdbc.database_for(
        connection.get_db_url(), connection.get_driver_name(), connection.get_user_name(),
        connection.get_password())
    rows = row_type(definition)
    scan = _Scan(engine_jdbc.JdbcQuerySource(database, f"SELECT {names} FROM "
                                             f"{definition.options['table-name']} "
                                             f"ORDER BY {order}"), rows)
    return env.from_source(scan, WatermarkStrategy.no_watermarks(), definition.name) \
        .map(rows.convert, rows)


def jdbc_sink(definition: TableDefinition,
              parallelism: Optional[int] = None) -> Callable[[DataStream], object]:
    """What writes a stream of the table's rows into 'table-name': INSERTs, or upserts on
    the primary key."""
    options = definition.options
    columns = [n for n, _ in definition.physical_columns()]
    sql = 'INSERT INTO %s (%s) VALUES (%s)' % (options['table-name'],
                                               ', '.join(_quoted(n) for n in columns),
                                               ', '.join('?' * len(columns)))
    key = definition.schema._primary_key
    if key is not None:
        others = [n for n in columns if n not in key[1]]
        sql += ' ON CONFLICT (%s) DO %s' % (
            ', '.join(_quoted(n) for n in key[1]),
            'UPDATE SET ' + ', '.join('%s = EXCLUDED.%s' % (_quoted(n), _quoted(n))
                                      for n in others) if others else 'NOTHING')
    execution = JdbcExecutionOptions.builder() \
        .with_batch_size(int(options.get('sink.buffer-flush.max-rows', 100))) \
        .with_max_retries(int(options.get('sink.max-retries', 3))).build()
    sink = JdbcSink.sink(sql, row_type(definition), _connection(definition), execution)
    if key is not None:
        sink._deleting('DELETE FROM %s WHERE %s' % (options['table-name'], ' AND '.join(
            '%s = ?' % _quoted(n) for n in key[1])), [columns.index(n) for n in key[1]])
    parallelism = int(options.get('sink.parallelism', parallelism or 0)) or None

    def write(stream: DataStream):
        written = stream.filter(_upsert).add_sink(sink)
        return written if parallelism is None else written.set_parallelism(parallelism)
    return write


def _upsert(row) -> bool:
    """Whether a changelog row is written (not a -U)."""
    return row.get_row_kind() != RowKind.UPDATE_BEFORE


def _check_updates(definition: TableDefinition) -> None:
    """Fails for a table without a primary key, as Flink's planner does for a changelog
    that updates."""
    if definition.schema._primary_key is None:
        raise ValueError(f"jdbc table '{definition.name}': please declare primary key for "
                         "sink table when query contains update/delete record.")


class _Scan(Source):
    """The bounded scan of a JDBC table: its rows as tuples."""

    def __init__(self, engine_source, rows):
        self._engine_source = engine_source
        self._rows = rows

    def get_produced_type(self):
        return Types.TUPLE(self._rows.get_field_types())

    def engine_source(self):
        return self._engine_source


JDBC = SqlConnector(_check, source=jdbc_source, sink=jdbc_sink, upserts=True,
                    check_updates=_check_updates)
