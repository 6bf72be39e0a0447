"""Table, TableSchema and TableResult, as in ``pyflink.table``: a table is a Spark DataFrame
here, made when its rows are first needed."""
from typing import Callable, Iterator, List, Union

from api.common.types import Row
from .data_frames import Columns, collect_rows
from .types import DataType

__all__ = ['Table', 'TableResult', 'TableSchema', 'CONNECTORS_INSTEAD']

CONNECTORS_INSTEAD = (
    "Tables here are Spark DataFrames over bounded DataStreams, without Flink's table "
    "connectors. Read external systems with a DataStream source (env.from_source(...) with "
    "a FileSource, KafkaSource, NumberSequenceSource or DataGeneratorSource, or "
    "env.from_collection(...)) and make a table of it with t_env.from_data_stream(ds); "
    "write a table with t_env.to_data_stream(table) and a DataStream sink (sink_to(FileSink"
    "...), sink_to(KafkaSink...), add_sink(JdbcSink.sink(...)), print())")

# The Table API's relational methods: this engine offers SQL (Spark SQL) instead.
_TABLE_API = {'select', 'where', 'filter', 'group_by', 'distinct', 'join', 'left_outer_join',
              'right_outer_join', 'full_outer_join', 'join_lateral', 'left_outer_join_lateral',
              'minus', 'minus_all', 'union', 'union_all', 'intersect', 'intersect_all',
              'order_by', 'offset', 'fetch', 'limit', 'window', 'over_window', 'add_columns',
              'add_or_replace_columns', 'rename_columns', 'drop_columns', 'map', 'flat_map',
              'aggregate', 'flat_aggregate', 'alias', 'explain', 'to_pandas'}


class TableSchema:
    """The names and types of a table's columns (``table.get_schema()``)."""

    def __init__(self, columns: Columns):
        self._columns = list(columns)

    def get_field_names(self) -> List[str]:
        return [n for n, _ in self._columns]

    def get_field_data_types(self) -> List[DataType]:
        return [t for _, t in self._columns]

    def get_field_count(self) -> int:
        return len(self._columns)

    def get_field_name(self, field_index: int) -> str:
        return self._columns[field_index][0]

    def get_field_data_type(self, field: Union[int, str]) -> DataType:
        """The type of the field at an index or of a name."""
        if isinstance(field, int):
            return self._columns[field][1]
        return dict(self._columns)[field]

    def __str__(self):
        return 'root\n' + ''.join(' |-- %s: %s\n' % c for c in self._columns)

    def __eq__(self, other):
        return isinstance(other, TableSchema) and self._columns == other._columns


class Table:
    """A table of named, typed columns: made by ``t_env.from_data_stream(ds)`` or
    ``t_env.sql_query(...)``; queried with SQL, turned back into a DataStream with
    ``t_env.to_data_stream(table)``.

    ``str(table)`` registers the table under a generated name and returns that name, so
    it can be embedded in SQL: ``t_env.sql_query(f"SELECT * FROM {table}")``.
    """

    def __init__(self, t_env, columns: Columns, make_data_frame: Callable):
        self._t_env = t_env
        self._columns = columns
        self._make_data_frame = make_data_frame
        self._frame = None
        self._name = None

    def _data_frame(self):
        """The table's Spark DataFrame (a bounded stream's job runs the first time)."""
        if self._frame is None:
            self._frame = self._make_data_frame()
        return self._frame

    def _rows(self) -> List[Row]:
        return collect_rows(self._data_frame(), self._columns)

    def get_schema(self) -> TableSchema:
        """The table's column names and types."""
        return TableSchema(self._columns)

    def print_schema(self) -> None:
        """Prints the schema: ``(`a` INT, ...)``, one column per line."""
        print('(\n%s\n)' % ',\n'.join('  `%s` %s' % c for c in self._columns))

    def execute(self) -> 'TableResult':
        """Computes the table; its rows come from ``collect()`` of the result (positional
        Rows, ``<Row('a', 1)>``, as PyFlink's are)."""
        return TableResult(self._columns, [Row(*row) for row in self._rows()])

    def execute_insert(self, table_path_or_descriptor, overwrite: bool = False):
        """Not available: tables have no connectors here (fails, saying what to use)."""
        raise NotImplementedError(
            f"execute_insert({table_path_or_descriptor!r}) cannot run: "
            + CONNECTORS_INSTEAD + ".")

    def __getattr__(self, name):
        if name in _TABLE_API:
            raise NotImplementedError(
                f"Table.{name}() (the Table API's relational operations) is not available: "
                "query tables with SQL instead, t_env.sql_query(f\"SELECT ... FROM {table}\") "
                "(Spark SQL).")
        raise AttributeError(f"'Table' object has no attribute {name!r}")

    def __str__(self):
        if self._name is None:
            self._name = self._t_env._register_unnamed(self)
        return self._name


class TableResult:
    """The result of ``table.execute()`` or of a query in ``execute_sql``."""

    def __init__(self, columns: Columns, rows: List[Row]):
        self._columns = columns
        self._rows = rows

    def get_table_schema(self) -> TableSchema:
        return TableSchema(self._columns)

    def wait(self, timeout_ms: int = None) -> None:
        """Returns at once: the result is complete when ``execute`` returns."""

    def collect(self) -> 'CloseableResultIterator':
        """The result's rows (each a Row of kind INSERT), in a closeable iterator:
        ``with result.collect() as rows: ...``."""
        return CloseableResultIterator(iter(self._rows))


class CloseableResultIterator:
    """An iterator over a result's rows that can be closed (also in a ``with`` block)."""

    def __init__(self, rows: Iterator[Row]):
        self._rows = rows

    def __iter__(self):
        return self

    def __next__(self) -> Row:
        return next(self._rows)

    def next(self) -> Row:
        return self.__next__()

    def close(self) -> None:
        self._rows = iter(())

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()
