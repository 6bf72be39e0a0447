"""Table and GroupedTable, as in ``pyflink.table``: a table is a Spark DataFrame
here, made when its rows are first needed; the Table API's relational methods build Spark
SQL over the DataFrames of their inputs. In STREAMING mode a projection or filter of a
table of a stream (``select``, ``where``, ``add_columns``, ...) runs on the stream itself,
as SQL's does (``stream_sql.on_stream``)."""
from typing import Callable, Dict, List, Optional, Sequence, Union

import sqlglot

from api.common.types import Row
from .changelog import GroupAggregate, group_aggregate
from .data_frames import Columns, collect_rows, columns_of, to_data_frame
from .expressions import (Expression, col, column_name, declared_type, is_aggregate,
                          order_sql, quote, to_expression, to_sql, unaliased)
from .stream_sql import is_calc, on_stream
from .table_result import TableResult, insert_rows
from .table_schema import TableSchema
from .types import DataType

__all__ = ['Table', 'GroupedTable', 'GroupWindowedTable', 'WindowGroupedTable']

# Table methods of PyFlink that need what this engine does not have (table functions,
# pandas)
_UNAVAILABLE = {'map', 'flat_map', 'aggregate', 'flat_aggregate',
                'join_lateral', 'left_outer_join_lateral', 'to_pandas', 'explain',
                'print_explain', 'to_changelog', 'from_changelog', 'insert_into'}


class Table:
    """A table of named, typed columns: made by ``t_env.from_data_stream(ds)``,
    ``t_env.from_path(name)`` or ``t_env.sql_query(...)``; transformed by the Table API
    (``table.where(col('a') > 1).select(col('b'))``) or SQL; turned back into a DataStream
    with ``t_env.to_data_stream(table)``.

    ``str(table)`` registers the table under a generated name and returns that name, so
    it can be embedded in SQL: ``t_env.sql_query(f"SELECT * FROM {table}")``.
    """

    def __init__(self, t_env, columns: Columns, make_data_frame: Callable,
                 updating: bool = False, schema_notes: Optional[Dict[str, str]] = None,
                 schema_lines: Sequence[str] = ()):
        self._t_env = t_env
        self._columns = columns
        self._make_data_frame = make_data_frame
        self._updating = updating      # its changelog would update rows in STREAMING mode
        self._schema_notes = schema_notes or {}  # print_schema: column -> what follows
        self._schema_lines = list(schema_lines)  # print_schema: watermark, primary key
        self._watermark_specs = []  # a Schema's watermarks, for streaming queries
        self._rowtime = None  # the column that is the rowtime attribute, if one is
        self._stream_rows = None  # a table of a DataStream's records: its StreamRows
        self._changelog = None  # a streaming GROUP BY: its GroupAggregate
        self._frame = None
        self._empty = None
        self._name = None

    def _data_frame(self):
        """The table's Spark DataFrame (a bounded stream's job runs the first time)."""
        if self._frame is None:
            self._frame = self._make_data_frame()
        return self._frame

    def _rows(self) -> List[Row]:
        return collect_rows(self._data_frame(), self._columns)

    # --- schema ---------------------------------------------------------------------------
    def get_schema(self) -> TableSchema:
        """The table's column names and types."""
        return TableSchema(self._columns)

    def print_schema(self) -> None:
        """Prints the schema: ``(`a` INT, ...)``, one column per line."""
        lines = ['`%s` %s%s%s' % (n, t, ' *ROWTIME*' if n == self._rowtime else '',
                                  self._schema_notes.get(n, '')) for n, t in self._columns]
        lines += self._schema_lines
        print('(\n%s\n)' % ',\n'.join('  ' + line for line in lines))

    def __getattr__(self, name) -> Expression:
        """The column ``name`` as an expression: ``tab.select(tab.a)``."""
        if name.startswith('_'):
            raise AttributeError(name)
        if name in _UNAVAILABLE:
            raise NotImplementedError(
                f"Table.{name}() is not available here: use select/where/group_by/join of "
                "the Table API, or SQL (t_env.sql_query(f\"SELECT ... FROM {table}\"))")
        names = [n for n, _ in self._columns]
        if name not in names:
            raise AttributeError("The current table has no column named '%s', available "
                                 "columns: [%s]" % (name, ', '.join(names)))
        return col(name)

    def __str__(self):
        if self._name is None:
            self._name = self._t_env._register_unnamed(self)
        return self._name

    # --- relational operations ------------------------------------------------------------
    def select(self, *fields: Union[Expression, str]) -> 'Table':
        """A projection, like SQL's SELECT: ``tab.select(col('a'), (col('b') + 1).alias('c'))``.
        Aggregates without ``group_by`` aggregate the whole table."""
        expressions = [to_expression(f) for f in fields]
        aggregating = any(is_aggregate(e) for e in expressions)
        return self._query('SELECT %s FROM {t}' % self._select_items(expressions),
                           updating=self._updating or aggregating,
                           types=[self._declared_type(e) for e in expressions],
                           rowtime=None if aggregating else self._rowtime_of(expressions))

    def alias(self, field: str, *fields: str) -> 'Table':
        """Renames the columns from the first on: ``tab.alias('a', 'b', 'c')``."""
        names = (field,) + fields
        if len(names) > len(self._columns):
            raise ValueError(f"alias(): {len(names)} names for {len(self._columns)} columns")
        return self._project([(c, n) for (c, _), n in
                              zip(self._columns, names + tuple(
                                  c for c, _ in self._columns[len(names):]))])

    def filter(self, predicate: Expression) -> 'Table':
        """The rows where ``predicate`` holds, like SQL's WHERE."""
        return self._same_columns('SELECT * FROM {t} WHERE %s'
                                  % self._sql(to_expression(predicate)))

    where = filter

    def add_columns(self, *fields: Expression) -> 'Table':
        """The table with more columns: ``tab.add_columns((col('a') + 1).alias('a1'))``;
        a name the table has already fails."""
        expressions = [to_expression(f) for f in fields]
        names = self._names_of(expressions, start=len(self._columns))
        taken = [n for n in names if n in dict(self._columns)]
        if taken:
            raise ValueError(f"add_columns(): the table has columns named {taken} already; "
                             "use add_or_replace_columns() to replace them")
        return self._with_columns(expressions, names)

    def add_or_replace_columns(self, *fields: Expression) -> 'Table':
        """The table with more columns; a column of an existing name replaces that
        column (of several added with one name, the last counts)."""
        expressions = [to_expression(f) for f in fields]
        return self._with_columns(expressions, self._names_of(expressions,
                                                              start=len(self._columns)))

    def rename_columns(self, *fields: Expression) -> 'Table':
        """Renames columns: ``tab.rename_columns(col('a').alias('a1'))``."""
        renames = {}
        for field in (to_expression(f) for f in fields):
            inner = unaliased(field)
            if field._name != 'as' or inner._name != 'field':
                raise ValueError(f"rename_columns() takes col('a').alias('b'), got {field}")
            self._check_names([inner._args[0]], 'rename_columns')
            renames[inner._args[0]] = field._args[1]
        return self._project([(n, renames.get(n, n)) for n, _ in self._columns])

    def drop_columns(self, *fields: Expression) -> 'Table':
        """The table without the named columns: ``tab.drop_columns(col('a'))``."""
        dropped = []
        for field in (to_expression(f) for f in fields):
            if field._name != 'field':
                raise ValueError(f"drop_columns() takes columns, col('a'), got {field}")
            dropped.append(field._args[0])
        self._check_names(dropped, 'drop_columns')
        return self._project([(n, n) for n, _ in self._columns if n not in dropped])

    def group_by(self, *fields: Expression) -> 'GroupedTable':
        """Groups rows by the values of ``fields``; ``select`` then aggregates each group."""
        return GroupedTable(self, [to_expression(f) for f in fields])

    def window(self, window) -> 'GroupWindowedTable':
        """The table in group windows (``Tumble``, ``Slide``, ``Session`` of
        ``api.table.window``) of its rowtime attribute, to ``group_by`` the window's alias
        (and keys) and ``select`` aggregates and the window's properties:
        ``tab.window(Tumble.over(lit(10).seconds).on(col('ts')).alias('w'))
        .group_by(col('w'), col('k')).select(col('k'), col('w').start, col('v').sum)``."""
        from .window import GroupWindow
        if not isinstance(window, GroupWindow):
            raise TypeError("window() takes a group window, e.g. Tumble.over(lit(10).seconds)"
                            f".on(col('ts')).alias('w'), got {window!r}")
        return GroupWindowedTable(self, window)

    def over_window(self, *over_windows) -> 'Table':
        """Over windows (``Over.partition_by(...).order_by(...).preceding(...)``): not
        available here, failing when called."""
        raise NotImplementedError(
            "Table.over_window() is not available here: OVER windows (of the Table API and "
            "SQL's OVER clause) are not supported; aggregate in group windows "
            "(table.window(Tumble...)) or with group_by instead")

    def distinct(self) -> 'Table':
        """The table without duplicate rows."""
        return self._query('SELECT DISTINCT * FROM {t}', updating=True,
                           types=[t for _, t in self._columns])

    def join(self, right: 'Table', join_predicate: Expression = None) -> 'Table':
        """The inner join with ``right``, of rows where ``join_predicate`` holds (every
        pair without one: then filter with ``where``). Column names must differ: rename
        them with ``alias`` first."""
        return self._join('JOIN', right, join_predicate, updating=False)

    def left_outer_join(self, right: 'Table', join_predicate: Expression = None) -> 'Table':
        """The left outer join with ``right``: every row of this table, with NULLs where
        no row of ``right`` matches."""
        return self._join('LEFT OUTER JOIN', right, join_predicate)

    def right_outer_join(self, right: 'Table', join_predicate: Expression) -> 'Table':
        """The right outer join with ``right``."""
        return self._join('RIGHT OUTER JOIN', right, join_predicate)

    def full_outer_join(self, right: 'Table', join_predicate: Expression) -> 'Table':
        """The full outer join with ``right``."""
        return self._join('FULL OUTER JOIN', right, join_predicate)

    def union_all(self, right: 'Table') -> 'Table':
        """The rows of both tables (of the same column types), duplicates kept."""
        return self._set_operation('UNION ALL', right, updating=False)

    def union(self, right: 'Table') -> 'Table':
        """The distinct rows of both tables."""
        return self._set_operation('UNION', right)

    def intersect(self, right: 'Table') -> 'Table':
        """The distinct rows that are in both tables."""
        return self._set_operation('INTERSECT', right)

    def intersect_all(self, right: 'Table') -> 'Table':
        """The rows that are in both tables, as often as in both."""
        return self._set_operation('INTERSECT ALL', right)

    def minus(self, right: 'Table') -> 'Table':
        """The distinct rows of this table that are not in ``right``."""
        return self._set_operation('EXCEPT', right)

    def minus_all(self, right: 'Table') -> 'Table':
        """The rows of this table not in ``right``, each as often as more here."""
        return self._set_operation('EXCEPT ALL', right)

    def order_by(self, *fields: Expression) -> 'Table':
        """The rows sorted by ``fields`` (``col('a').desc``): ascending with NULLs last,
        descending NULLs first, as Flink sorts. In BATCH mode only."""
        if self._t_env._is_streaming():
            raise NotImplementedError(
                "Sort on a non-time-attribute field is not supported. (order_by needs "
                "BATCH mode here: EnvironmentSettings.in_batch_mode())")
        keys = ', '.join(order_sql(to_expression(f), self._sql) for f in fields)
        return self._same_columns('SELECT * FROM {t} ORDER BY %s' % keys)

    def offset(self, offset: int) -> 'Table':
        """The rows after the first ``offset`` (of an ordered table)."""
        return self._same_columns('SELECT * FROM {t} OFFSET %d' % offset)

    def fetch(self, fetch: int) -> 'Table':
        """The first ``fetch`` rows (of an ordered table)."""
        return self._same_columns('SELECT * FROM {t} LIMIT %d' % fetch)

    def limit(self, fetch: int, offset: int = 0) -> 'Table':
        """The first ``fetch`` rows after ``offset`` rows (of an ordered table)."""
        return self._same_columns('SELECT * FROM {t} LIMIT %d OFFSET %d' % (fetch, offset))

    # --- results ---------------------------------------------------------------------------
    def execute(self) -> TableResult:
        """Computes the table; ``collect()`` gives its rows (positional Rows of kind INSERT,
        ``<Row('a', 1)>``), ``print()`` prints them as Flink's tableau."""
        self._check_executable('execute')
        if self._changelog is None and self._stream_rows is not None and \
                not self._stream_rows.bounded():  # its rows as they come, as a query's
            return self.select(*[col(name) for name, _ in self._columns]).execute()
        if self._changelog is not None:
            return TableResult(self._columns, self._t_env._changelog_rows(self), True)
        return TableResult(self._columns, insert_rows(self._rows()),
                           self._t_env._is_streaming())

    def execute_insert(self, table_path_or_descriptor: str,
                       overwrite: bool = False) -> TableResult:
        """Writes the table's rows to the sink table ``table_path_or_descriptor`` (made by
        ``CREATE TABLE ... WITH ('connector' = ...)``) and returns when they are written."""
        return self._t_env._insert(table_path_or_descriptor, self, overwrite)

    # --- helpers ---------------------------------------------------------------------------
    def _update_plan(self):
        """The plan of the table's changelog where it updates rows (-U/+U/-D), else None."""
        changelog = self._changelog
        return changelog if changelog is not None and changelog.updating else None

    def _check_executable(self, method: str) -> None:
        """Fails for a changelog that updates rows in STREAMING mode, other than a GROUP BY
        aggregate of a DataStream's columns: not available here."""
        if self._t_env._is_streaming() and self._updating and self._changelog is None:
            raise NotImplementedError(
                f"{method}(): in STREAMING mode this table is a changelog that updates its "
                "rows (an aggregation, distinct, outer join or set operation), and changelog "
                "results (-U/+U) are not available here. Use BATCH mode "
                "(EnvironmentSettings.in_batch_mode()) for its final rows.")

    def _sql(self, expression: Expression) -> str:
        """Spark SQL of ``expression`` over this table's columns, its braces doubled for
        the templates of ``_query``."""
        text = to_sql(expression, self._type_of, self._t_env._function_name)
        return text.replace('{', '{{').replace('}', '}}')

    def _empty_frame(self):
        """An empty DataFrame of the table's columns: what queries are planned against."""
        if self._empty is None:
            self._empty = to_data_frame(self._t_env._spark(), self._columns, [])
        return self._empty

    def _type_of(self, sql: str) -> DataType:
        return columns_of(self._empty_frame().selectExpr(sql))[0][1]

    def _check_names(self, names: Sequence[str], method: str) -> None:
        known = [n for n, _ in self._columns]
        missing = [n for n in names if n not in known]
        if missing:
            raise ValueError(f"{method}(): the table has no column(s) {missing}; its columns "
                             f"are {known}")

    def _names_of(self, expressions: List[Expression], start: int = 0) -> List[str]:
        """Column names of select items: the alias, a field's name, ``EXPR$<n>`` for the
        n-th aggregate of a list with aggregates, else ``_c<position>``."""
        names, aggregates = [], 0
        for position, expression in enumerate(expressions):
            name = column_name(expression)
            if is_aggregate(expression):
                name = name or 'EXPR$%d' % aggregates
                aggregates += 1
            names.append(name or '_c%d' % (start + position))
        return names

    def _select_items(self, expressions: List[Expression]) -> str:
        names = self._names_of(expressions)
        return ', '.join('%s AS %s' % (self._sql(e), quote(n))
                         for e, n in zip(expressions, names))

    def _with_columns(self, expressions: List[Expression], names: List[str]) -> 'Table':
        added = dict(zip(names, expressions))  # the last of equal names counts
        replaced = [unaliased(added[n]).alias(n) if n in added else col(n)
                    for n, _ in self._columns]
        new = [unaliased(e).alias(n) for n, e in added.items() if n not in dict(self._columns)]
        return self.select(*replaced, *new)

    def _project(self, items: List[tuple]) -> 'Table':
        """SELECT of (column, new name) items: the columns keep their types (and rowtime)."""
        types = dict(self._columns)
        text = ', '.join('%s AS %s' % (quote(c), quote(n)) for c, n in items)
        return self._query('SELECT %s FROM {t}' % text, updating=self._updating,
                           types=[types[c] for c, _ in items],
                           rowtime=next((n for c, n in items if c == self._rowtime), None))

    def _same_columns(self, template: str) -> 'Table':
        """The table of a query of all of this table's columns, as they are."""
        return self._query(template, updating=self._updating,
                           types=[t for _, t in self._columns], rowtime=self._rowtime)

    def _join(self, kind: str, right: 'Table', predicate, updating: bool = True) -> 'Table':
        _check_same_environment(self, right, 'join')
        shared = set(dict(self._columns)) & set(dict(right._columns))
        if shared:
            raise ValueError(f"join: both tables have columns named {sorted(shared)}; "
                             "rename them first (alias(...) or rename_columns(...))")
        both = Table(self._t_env, self._columns + right._columns, None)
        condition = 'TRUE' if predicate is None else both._sql(to_expression(predicate))
        if self._t_env._is_streaming() and \
                None not in (self._stream_rows, right._stream_rows):  # on the streams
            return self._t_env.sql_query('SELECT * FROM %s %s %s ON %s' % (
                self, kind, right, condition.replace('{{', '{').replace('}}', '}')))
        return self._query('SELECT * FROM {t} %s {r} ON %s' % (kind, condition), right,
                           updating=updating or self._updating or right._updating,
                           types=[t for _, t in self._columns + right._columns])

    def _set_operation(self, operation: str, right: 'Table', updating: bool = True):
        _check_same_environment(self, right, operation.lower())
        if len(self._columns) != len(right._columns):
            raise ValueError(f"{operation}: the tables have {len(self._columns)} and "
                             f"{len(right._columns)} columns; they must have the same")
        return self._query('SELECT * FROM {t} %s SELECT * FROM {r}' % operation, right,
                           updating=updating or self._updating or right._updating,
                           types=[t for _, t in self._columns])

    def _query(self, template: str, right: 'Table' = None, updating: bool = False,
               types: Sequence[Optional[DataType]] = (), rowtime: str = None) -> 'Table':
        """The table of Spark SQL ``template`` over this table (``{t}``) and ``right``
        (``{r}``). Column types are Spark's, or where Spark holds them alike, ``types``
        (the declared types of Flink, per column); ``rowtime`` names its time attribute."""
        session = self._t_env._spark()
        inputs = [self] + ([right] if right is not None else [])
        names = ['t', 'r'][:len(inputs)]

        def frame(frames):
            return session.sql(template, **dict(zip(names, frames)))
        planned = columns_of(frame([t._empty_frame() for t in inputs]))
        types = list(types) + [None] * (len(planned) - len(types))
        table = Table(self._t_env,
                      [(n, keep_declared(t, d)) for (n, t), d in zip(planned, types)],
                      lambda: frame([t._data_frame() for t in inputs]), updating)
        table._rowtime = rowtime
        if self._t_env._is_streaming() and right is None and (
                self._update_plan() is not None or self._stream_rows is not None and
                not updating):  # a Calc: on the stream (or changelog), where it can be
            tree = sqlglot.parse_one(template.format(t='t'), read='spark')
            if is_calc(tree):
                return on_stream(table, self, tree, template, strict=False)
        return table

    def _declared_type(self, expression: Expression) -> Optional[DataType]:
        """The type Flink declares for a select item: a column reference's column type, a
        CAST's target type, ...; None where Spark's type is Flink's."""
        inner = unaliased(expression)
        if inner._name == 'field' and inner._args[0] in dict(self._columns):
            return dict(self._columns)[inner._args[0]]
        return declared_type(expression)

    def _rowtime_of(self, expressions: List[Expression]) -> Optional[str]:
        """The column of ``expressions`` that selects this table's rowtime attribute."""
        names = self._names_of(expressions)
        for name, expression in zip(names, expressions):
            inner = unaliased(expression)
            if self._rowtime and inner._name == 'field' and inner._args[0] == self._rowtime:
                return name
        return None


def keep_declared(planned: DataType, declared: Optional[DataType]) -> DataType:
    """``declared`` with the planned nullability, where Spark holds both alike."""
    from .data_frames import spark_type
    if declared is None or spark_type(declared) != spark_type(planned):
        return planned
    return declared.nullable() if planned._nullable else declared.not_null()


def _check_same_environment(left: Table, right: Table, method: str) -> None:
    if not isinstance(right, Table):
        raise TypeError(f"{method}() takes a Table, got {type(right).__name__}")
    if right._t_env is not left._t_env:
        raise ValueError(f"{method}(): the tables belong to different table environments")


class GroupedTable:
    """A table grouped by keys (``table.group_by(...)``): ``select`` aggregates each
    group, one row per group."""

    def __init__(self, table: Table, keys: List[Expression]):
        self._table = table
        self._keys = keys

    def select(self, *fields: Union[Expression, str]) -> Table:
        """One row per group: ``.select(col('k'), col('v').sum.alias('total'))``. In
        STREAMING mode, over a table of a DataStream, a changelog: each group's first
        result as +I, each change of it as -U (old) and +U (new)."""
        table = self._table
        expressions = [to_expression(f) for f in fields]
        keys = ', '.join(table._sql(k) for k in self._keys)
        result = table._query('SELECT %s FROM {t} GROUP BY %s'
                              % (table._select_items(expressions), keys),
                              updating=True, types=[table._declared_type(e) for e in expressions])
        source = table._update_plan()
        if table._t_env._is_streaming() and (source is not None or not table._updating):
            result._changelog = group_aggregate(table._stream_rows, table._columns,
                                                self._keys, expressions, source)
            if isinstance(result._changelog, GroupAggregate):
                result._columns = result._changelog.typed(result._columns)
        return result


class GroupWindowedTable:
    """A table in group windows (``table.window(...)``): ``group_by`` the window's alias."""

    def __init__(self, table: Table, window):
        self._table = table
        self._window = window

    def group_by(self, *fields: Expression) -> 'WindowGroupedTable':
        """Groups rows by the window (its alias, ``col('w')``) and more keys."""
        return WindowGroupedTable(self._table, self._window,
                                  [to_expression(f) for f in fields])


class WindowGroupedTable:
    """A table grouped by a window and keys: ``select`` aggregates each window's groups."""

    def __init__(self, table: Table, window, keys: List[Expression]):
        self._table = table
        self._window = window
        self._keys = keys

    def select(self, *fields: Union[Expression, str]) -> Table:
        """One row per window and group, of the keys, aggregates and the window's
        properties (``col('w').start``, ``.end``, ``.rowtime``); in STREAMING mode the rows
        append when the watermark passes the window's end."""
        from .group_windows import window_aggregate
        return window_aggregate(self._table, self._window, self._keys,
                                [to_expression(f) for f in fields])
