"""The streams an insert into a SQL connector table writes (``execute_insert``, ``INSERT
INTO``, statement sets): a table of a stream (a connector table, or a projection and filter
of one) is written from the stream itself, record by record, bounded or not, so its
checkpoints carry the source's positions and the sink's commits; a streaming GROUP BY
writes its changelog to a sink that takes updates, a window aggregate or interval join its
appended rows; any other table is computed (bounded) and its rows written, cast to the
sink's column types."""
from dataclasses import dataclass
from typing import Callable, Tuple

from api.common.types import Row
from api.util.exceptions import TableException
from .changelog import RowOf
from .connectors import SqlConnector
from .connectors.options import row_type
from .ddl import TableDefinition
from .expressions import col

__all__ = ['insert_stream']


def insert_stream(t_env, table, definition: TableDefinition,
                  connector: SqlConnector) -> Callable:
    """What makes the DataStream of the rows ``table`` writes to the sink table
    ``definition`` (called while the insert's job is defined): Rows named by the sink's
    columns, of their row kinds."""
    name = definition.name
    columns = definition.persisted_columns()
    if len(columns) != len(table._columns):
        raise ValueError(
            f"Column types of query result and sink for '{name}' do not match: the query "
            f"has {len(table._columns)} columns, the sink {len(columns)}")
    sink_type = row_type(definition, persisted=True)
    same_types = all(t._root == s._root for (_, t), (_, s) in zip(table._columns, columns))
    rows = table._stream_rows
    if table._changelog is not None and (table._changelog.updating or rows is None):
        if table._changelog.updating and not connector.upserts:
            raise TableException(
                f"Table sink 'default_catalog.default_database.{name}' doesn't support "
                f"consuming update changes which is produced by node "
                f"{table._changelog.node()}")
        if table._changelog.updating and connector.check_updates is not None:
            connector.check_updates(definition)
        if not same_types:
            raise ValueError(f"Column types of query result and sink for '{name}' do not "
                             f"match: {table._columns} and {columns}")
        return lambda: t_env._changelog_stream(table).map(
            _SinkRow(RowOf(tuple(range(len(columns))), False), tuple(sink_type.get_field_names()),
                     keep_kind=True), sink_type)
    if rows is None or not same_types:
        table._check_executable('execute_insert')
        cast = table.select(*[col(n).cast(t).alias(sink_name)
                              for (n, _), (sink_name, t) in zip(table._columns, columns)])
        rows = cast._stream_rows  # (in STREAMING mode, cast on the stream where it can be)
        if rows is None:
            return lambda: t_env._stream_env().from_collection(cast._rows(), sink_type)
    return lambda: rows.data_stream.map(
        _SinkRow(rows.row_of, tuple(sink_type.get_field_names())), sink_type)


@dataclass(frozen=True)
class _SinkRow:
    """A sink's Row of a stream's record: its values at ``row_of``'s picks, named by the
    sink's columns (``keep_kind``: of the record's row kind)."""
    row_of: RowOf
    names: Tuple[str, ...]
    keep_kind: bool = False

    def __call__(self, record) -> Row:
        row = Row(*self.row_of(record))
        row.set_field_names(list(self.names))
        if self.keep_kind:
            row.set_row_kind(record.get_row_kind())
        return row
