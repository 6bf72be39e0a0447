"""TableEnvironment and StreamTableEnvironment, as in ``pyflink.table``: DataStreams
become tables (Spark DataFrames) that SQL queries (Spark SQL) read, and tables become
DataStreams again."""
import datetime
import decimal
import re
from typing import Iterable, List

from api.common.types import Row
from api.common.typeinfo import RowTypeInfo, TupleTypeInfo, Types, TypeInformation
from api.datastream.data_stream import DataStream
from api.datastream.execution_mode import RuntimeExecutionMode
from api.datastream.job_settings import job_settings
from api.datastream.stream_execution_environment import StreamExecutionEnvironment
from engine.driver.job import spark_session
from api.util.exceptions import TableException
from .changelog import RetractMessages, is_bounded
from .connectors import connector_of
from .data_frames import Columns, columns_of, spark_type, to_data_frame
from .ddl import parse_create_table
from .inserts import insert_stream
from .sql_parser import parse_query, table_names, to_spark_sql
from .sql_typing import ColumnType, column_types, flink_type, integer_division
from .statement_set import StatementSet
from .stream_sql import plan_streaming_query
from .stream_tables import table_of_stream
from .table import Table, keep_declared
from .table_config import TableConfig
from .table_result import CloseableResultIterator, ResultKind, TableResult
from .types import DataType, DataTypes, data_type_of, type_info_of
from .udf import UserDefinedFunctionWrapper

__all__ = ['EnvironmentSettings', 'StreamTableEnvironment', 'TableEnvironment']

_QUERY_KEYWORDS = ('SELECT', 'WITH', 'VALUES')
# Spark plan nodes whose results Flink's STREAMING mode would update (-U/+U, -D)
_UPDATING_PLAN = re.compile(r'^[\s:+\-]*(Aggregate|Distinct|Deduplicate|Except|Intersect|'
                            r'Sort|Join (LeftOuter|RightOuter|FullOuter))\b', re.M)
_OK = TableResult([('result', DataTypes.STRING())], [Row('OK')],
                  result_kind=ResultKind.SUCCESS, printed='OK')
_COMMENTS = re.compile(r'(--[^\n]*|/\*.*?\*/|\s)+', re.S)


class EnvironmentSettings:
    """Settings of a table environment: ``EnvironmentSettings.in_streaming_mode()`` or
    ``in_batch_mode()``. In STREAMING mode results print with their row kind (``op``); a
    GROUP BY of a stream's columns is Flink's changelog (+I, -U/+U) as records arrive,
    other results Flink would update (distinct, outer joins, ...) cannot be executed.
    Otherwise a table here is computed over its whole bounded input."""

    def __init__(self, streaming: bool):
        self._streaming = streaming

    @staticmethod
    def in_streaming_mode() -> 'EnvironmentSettings':
        return EnvironmentSettings(True)

    @staticmethod
    def in_batch_mode() -> 'EnvironmentSettings':
        return EnvironmentSettings(False)

    def is_streaming_mode(self) -> bool:
        return self._streaming


class TableEnvironment:
    """Registers tables as temporary views and runs SQL queries over them, in Spark SQL
    (not Flink SQL: Spark's functions and syntax apply)."""

    def __init__(self, session_provider, environment_settings: EnvironmentSettings,
                 env: StreamExecutionEnvironment = None):
        self._session_provider = session_provider
        self._env = env           # made on first use without a StreamTableEnvironment
        self._sinks = {}          # name -> TableDefinition of a sink table
        self._session = None
        self._settings = environment_settings
        self._views = {}          # name -> Table, in this environment
        self._unnamed = 0
        self._operators = 0       # streaming GROUP BY operators made
        self._data_stream_sinks = 0  # to_data_stream calls, numbered in Flink's messages
        self._config = TableConfig()
        self._functions = {}      # name -> UserDefinedFunctionWrapper, registered in Spark
        self._function_names = {}  # id of an unregistered wrapper called directly -> name

    @staticmethod
    def create(environment_settings: EnvironmentSettings) -> 'TableEnvironment':
        """A table environment for SQL over VALUES and registered tables, on the Spark
        session of this process (a new local one if there is none)."""
        def session():
            from engine.executor.spark import get_spark_session
            return get_spark_session("local[*]", {})
        return TableEnvironment(session, environment_settings)

    def _spark(self):
        if self._session is None:
            self._session = self._session_provider()
            for name, function in self._functions.items():
                _register(self._session, name, function)
        return self._session

    def _is_streaming(self) -> bool:
        return self._settings.is_streaming_mode()

    def get_config(self) -> TableConfig:
        """The environment's TableConfig (``parallelism.default`` sets the parallelism of
        SQL connector tables' sources and sinks)."""
        return self._config

    # --- functions -------------------------------------------------------------------------
    def create_temporary_function(self, path: str, function: UserDefinedFunctionWrapper):
        """Registers a Python scalar function (made by ``udf``) under ``path``, for
        ``call(path, ...)`` and SQL."""
        if not isinstance(function, UserDefinedFunctionWrapper):
            raise TypeError(f"create_temporary_function() takes a function made by udf(...), "
                            f"got {function!r}")
        name = _simple_name(path)
        self._functions[name] = function
        if self._session is not None:
            _register(self._session, name, function)

    create_temporary_system_function = create_temporary_function

    def drop_temporary_function(self, path: str) -> bool:
        """Drops a temporary function; True if it existed."""
        name = _simple_name(path)
        if name not in self._functions:
            return False
        del self._functions[name]
        if self._session is not None:
            self._session.sql('DROP TEMPORARY FUNCTION IF EXISTS `%s`' % name)
        return True

    drop_temporary_system_function = drop_temporary_function

    def _function_name(self, function: UserDefinedFunctionWrapper) -> str:
        """The Spark name of a function called directly (``add_one(col('a'))``)."""
        name = self._function_names.get(id(function))
        if name is None:
            name = '__udf_%d_%s' % (len(self._function_names), re.sub(r'\W', '_',
                                                                      function._name))
            self._function_names[id(function)] = name
            _register(self._spark(), name, function)
        return name

    # --- views ---------------------------------------------------------------------------
    def create_temporary_view(self, view_path: str, table_or_data_stream, *fields_or_schema):
        """Registers a Table (or a DataStream, as ``from_data_stream`` makes it a
        table) under ``view_path``, for SQL queries of this environment."""
        if isinstance(table_or_data_stream, DataStream):
            table = self.from_data_stream(table_or_data_stream, *fields_or_schema)
        elif isinstance(table_or_data_stream, Table):
            if fields_or_schema:
                raise ValueError("create_temporary_view(): field names apply to a DataStream, "
                                 "not to a Table")
            table = table_or_data_stream
        else:
            raise TypeError("create_temporary_view() takes a Table or a DataStream, got "
                            f"{type(table_or_data_stream).__name__}")
        name = _simple_name(view_path)
        if name in self._views:
            raise ValueError(f"Temporary table '{name}' already exists")
        self._views[name] = table

    def drop_temporary_view(self, view_path: str) -> bool:
        """Drops a temporary view; True if it existed."""
        table = self._views.pop(_simple_name(view_path), None)
        if table is not None:
            self._spark().catalog.dropTempView(_simple_name(view_path))
        return table is not None

    def list_temporary_views(self) -> List[str]:
        return sorted(n for n in self._views if not n.startswith('UnnamedTable_'))

    def from_path(self, path: str) -> Table:
        """The table registered under ``path``: a view, or a table of CREATE TABLE."""
        name = _simple_name(path)
        if name in self._sinks and name not in self._views:
            definition = self._sinks[name]
            return _unreadable(self, definition, (
                f"Connector '{definition.options['connector']}' can only be used as a sink. "
                "It cannot be used as a source."))
        table = self._views.get(name)
        if table is None:
            raise ValueError(f"Table '{path}' was not found.")
        return table

    def from_elements(self, elements: Iterable, schema=None,
                      verify_schema: bool = True) -> Table:
        """A table of Python values: tuples, lists or Rows, one per row. ``schema`` is a
        ``DataTypes.ROW([...])``, or column names (``['id', 'data']``) with types taken from
        the values as PyFlink takes them (int: BIGINT, float: DOUBLE, str: STRING, ...);
        without it, a Row's field names or ``_1``, ``_2``, ..."""
        rows = [tuple(e) for e in elements]
        if isinstance(schema, DataType) and schema._root == 'ROW':
            columns = list(schema._args)
        elif schema is None or isinstance(schema, (list, tuple)):
            first = next(iter(elements), None)
            names = list(schema or getattr(first, '_fields', None) or
                         ['_%d' % (i + 1) for i in range(len(rows[0]) if rows else 0)])
            columns = [(name, _inferred_type([r[i] for r in rows], name))
                       for i, name in enumerate(names)]
        else:
            raise ValueError(f"from_elements(): the schema must be a DataTypes.ROW([...]) or "
                             f"column names, got {schema!r}")
        if any(len(r) != len(columns) for r in rows):
            raise ValueError(f"from_elements(): every element must have {len(columns)} fields")
        return Table(self, columns, lambda: to_data_frame(self._spark(), columns, rows))

    def _register_unnamed(self, table: Table) -> str:
        name = f"UnnamedTable_{self._unnamed}"
        self._unnamed += 1
        self._views[name] = table
        return name

    # --- SQL -----------------------------------------------------------------------------
    def sql_query(self, query: str) -> Table:
        """The table of a SELECT query (Flink SQL, parsed and run as Spark SQL) over this
        environment's views. In STREAMING mode a GROUP BY, a windowing table function or
        an interval join over views of streams runs on the streams' own operators."""
        if _statement_keyword(query) not in _QUERY_KEYWORDS:
            raise ValueError(_not_a_query(query, "sql_query"))
        tree = parse_query(query)
        if self._is_streaming():
            table = plan_streaming_query(self, tree, query)
            if table is not None:
                return table
        return self._spark_query(tree, query)

    def _spark_query(self, tree, query: str) -> Table:
        """The table of a parsed query run as Spark SQL; it is planned over the views'
        empty tables (no stream runs until its rows are needed)."""
        views = {n: self._views[n] for n in table_names(tree) if n in self._views}
        column_type = column_types(v._columns for v in views.values())
        session = self._spark()
        spark_sql = to_spark_sql(integer_division(tree, column_type), query)

        def frame(planning: bool):
            for name, view in views.items():  # a view's stream runs only when queried
                (view._empty_frame() if planning else view._data_frame()) \
                    .createOrReplaceTempView(name)
            return session.sql(spark_sql)
        planned = frame(True)
        updating = self._is_streaming() and bool(_UPDATING_PLAN.search(
            planned._jdf.queryExecution().analyzed().toString()))
        table = Table(self, _flink_columns(tree, columns_of(planned), column_type),
                      lambda: frame(False), updating)
        table._rowtime = _rowtime_of(tree, views)
        return table

    def execute_sql(self, stmt: str) -> TableResult:
        """Runs a statement and returns its result: a query (SELECT, WITH, VALUES: Spark
        SQL), ``CREATE TABLE ... WITH ('connector' = ...)`` (see ``api.table.connectors``),
        ``DROP TABLE`` or ``INSERT INTO sink SELECT ...``."""
        keyword = _statement_keyword(stmt)
        if keyword in _QUERY_KEYWORDS:
            return self.sql_query(stmt).execute()
        if keyword == 'CREATE' and re.match(r'\s*CREATE\s+(TEMPORARY\s+)?TABLE\b', stmt, re.I):
            return self._create_table(stmt)
        drop = re.match(r'\s*DROP\s+(TEMPORARY\s+)?TABLE\s+(IF\s+EXISTS\s+)?(\S+?)\s*;?\s*$',
                        stmt, re.I)
        if drop:
            name = _simple_name(drop.group(3))
            dropped = [self._sinks.pop(name, None), self._views.pop(name, None)]
            if dropped == [None, None] and not drop.group(2):
                raise ValueError(f"Table with identifier '{name}' does not exist.")
            return _OK
        if keyword == 'INSERT':
            return self._insert(*self._insert_statement(stmt))
        if keyword in ('CREATE', 'ALTER', 'DROP', 'EXECUTE', 'BEGIN'):
            raise NotImplementedError(f"execute_sql(): {_head(stmt)} cannot run here: the "
                                      "statements here are queries, CREATE TABLE, DROP TABLE "
                                      "and INSERT INTO")
        raise ValueError(_not_a_query(stmt, "execute_sql"))

    # --- connector tables ------------------------------------------------------------------
    def _stream_env(self) -> StreamExecutionEnvironment:
        """The environment of the streams of connector tables and inserts."""
        if self._env is None:
            self._env = StreamExecutionEnvironment.get_execution_environment()
        return self._env

    def _create_table(self, stmt: str) -> TableResult:
        definition = parse_create_table(stmt)
        name = definition.name
        if name in self._views or name in self._sinks:
            if definition.if_not_exists:
                return _OK
            raise ValueError(f"Could not execute CreateTable in path `{name}`: a table of "
                             "that name exists")
        connector = connector_of(definition)  # its options are checked now, as Flink does
        if connector.sink is not None:
            self._sinks[name] = definition
        if definition.options['connector'] == 'datagen' and not self._is_streaming() and \
                'number-of-rows' not in definition.options:  # Flink's BATCH mode: unbounded
            self._views[name] = _unreadable(self, definition, (
                f"Querying an unbounded table 'default_catalog.default_database.{name}' in "
                "batch mode is not allowed. The table source is unbounded."))
        elif connector.source is not None:
            try:
                stream = connector.source(self._stream_env(), definition,
                                          self._config._parallelism())
            except ValueError as e:  # (e.g. a sink's options): fails when read, as in Flink
                self._views[name] = _unreadable(self, definition, str(e))
                return _OK
            self._views[name] = table_of_stream(self, stream, (definition.source_schema(),))
            if connector.changelog is not None:  # upserts and deletes: a changelog
                self._views[name]._changelog = connector.changelog(stream, definition)
                self._views[name]._updating = True
        return _OK

    def _insert(self, table_path: str, table: Table, overwrite: bool) -> TableResult:
        """Writes ``table`` to a sink table (``Table.execute_insert``)."""
        return self._execute_inserts([(table_path, table, overwrite)])

    def _execute_inserts(self, inserts: List[tuple]) -> TableResult:
        """Runs one job writing each (sink table path, table, overwrite) of ``inserts``."""
        writes = []
        for path, table, overwrite in inserts:
            name = _simple_name(path)
            definition = self._sinks.get(name)
            if definition is None:
                raise ValueError(f"Table '{path}' was not found." if name not in self._views
                                 else f"Table '{path}' is not a sink table (its connector "
                                 "only reads)")
            if overwrite:
                raise ValueError(f"INSERT OVERWRITE: the table '{name}' of connector "
                                 f"'{definition.options['connector']}' cannot be overwritten")
            connector = connector_of(definition)
            write = connector.sink(definition, self._config._parallelism())  # checks first
            writes.append((name, insert_stream(self, table, definition, connector), write))
        env = self._stream_env()

        def define():
            for _, rows, write in writes:
                write(rows())
        env._execute_apart(define, 'insert-into_' + ','.join(
            'default_catalog.default_database.' + name for name, _, _ in writes))
        return TableResult([('default_catalog.default_database.' + name,
                             DataTypes.BIGINT(False)) for name, _, _ in writes],
                           [Row(*[-1] * len(writes))], printed=' '.join(['-1'] * len(writes)))

    def create_statement_set(self) -> StatementSet:
        """A StatementSet: inserts added to it run together in one job."""
        return StatementSet(self)

    def _insert_statement(self, stmt: str) -> tuple:
        """(sink table path, table, overwrite) of ``INSERT INTO|OVERWRITE name query``."""
        insert = re.match(r'\s*INSERT\s+(INTO|OVERWRITE)\s+(?:TABLE\s+)?(`[^`]+`|[\w.$]+)'
                          r'\s*(\(([^)]*)\)\s*)?(.*)$', stmt, re.I | re.S)
        if insert is None:
            raise ValueError(f"cannot read {_head(stmt)} as INSERT INTO table SELECT ...")
        if insert.group(3):
            raise NotImplementedError("INSERT INTO with a column list is not available here: "
                                      "select the sink's columns in order")
        return (insert.group(2), self.sql_query(insert.group(5)),
                insert.group(1).upper() == 'OVERWRITE')


class StreamTableEnvironment(TableEnvironment):
    """The bridge between DataStreams and tables, as ``pyflink.table.StreamTableEnvironment``:
    ``from_data_stream`` makes a table of a stream; ``to_data_stream``,
    ``to_changelog_stream``, ``to_append_stream`` and ``to_retract_stream`` make a
    DataStream of a table.

    ::

        >>> t_env = StreamTableEnvironment.create(env)
        >>> t_env.create_temporary_view("orders", ds, "user, amount")
        >>> totals = t_env.sql_query("SELECT user, SUM(amount) FROM orders GROUP BY user")
        >>> t_env.to_changelog_stream(totals).print()  # +I[alice,3] -U[alice,3] +U[alice,7]
    """

    def __init__(self, env: StreamExecutionEnvironment,
                 environment_settings: EnvironmentSettings):
        super().__init__(lambda: _job_session(env), environment_settings, env)

    @staticmethod
    def create(stream_execution_environment: StreamExecutionEnvironment = None,
               table_config=None,
               environment_settings: EnvironmentSettings = None) -> 'StreamTableEnvironment':
        """A StreamTableEnvironment of ``stream_execution_environment``; its SQL runs on the
        Spark session the environment's jobs use."""
        if stream_execution_environment is None:
            raise ValueError("StreamTableEnvironment.create() needs the param "
                             "'stream_execution_environment' here (a table environment "
                             "without one: TableEnvironment.create(environment_settings))")
        if table_config is not None:
            raise ValueError("StreamTableEnvironment.create(): a TableConfig has no effect "
                             "here (tables are Spark DataFrames; configure Spark with "
                             "'spark.*' options of the StreamExecutionEnvironment)")
        if environment_settings is None:  # the environment's runtime mode, as it is now
            environment_settings = EnvironmentSettings(
                stream_execution_environment._runtime_mode != RuntimeExecutionMode.BATCH)
        return StreamTableEnvironment(stream_execution_environment, environment_settings)

    def from_data_stream(self, data_stream: DataStream, *fields_or_schema) -> Table:
        """The table of a DataStream. Columns come from the stream's type: the
        fields of a ROW (by name) or TUPLE (``f0``, ``f1``, ...), or one column ``f0`` of an
        atomic type. ``fields_or_schema`` may be one string of field names: ``'a, b, c'``
        renames the fields by position; names of the input's fields select, reorder and
        (with ``as``) rename them: ``'f1 as name, f0'``. Or a :class:`Schema`: its physical
        columns pick fields by name (converted to the declared types), its computed
        columns are added, and its watermark is declared (recorded on the table).

        The stream's job runs when a query, ``execute`` or ``to_data_stream`` first needs
        the table's rows (of a bounded stream); only the stream runs in it: the
        environment's sinks and other operators run in its next job. In STREAMING mode a
        GROUP BY of the table's columns runs on the stream itself (bounded or not), as
        DataStream operators: see ``to_changelog_stream``.
        """
        return table_of_stream(self, data_stream, fields_or_schema)

    def to_data_stream(self, table: Table) -> DataStream:
        """A DataStream of the table's rows: Rows named by column
        (``Types.ROW_NAMED``), of kind INSERT. Fails for a table Flink updates (a GROUP BY
        in STREAMING mode: see ``to_changelog_stream``), as Flink does."""
        self._data_stream_sinks += 1
        if isinstance(table, Table) and table._changelog is not None and \
                not table._changelog.updating:  # it appends
            return self._changelog_stream(table)
        if isinstance(table, Table) and table._changelog is not None:
            raise TableException(
                "Table sink '*anonymous_datastream_sink$%d*' doesn't support consuming update "
                "changes which is produced by node %s"
                % (self._data_stream_sinks, table._changelog.node()))
        _check_own(self, table, "to_data_stream")
        return self._env.from_collection(table._rows(), _row_type_info(table._columns))

    def to_changelog_stream(self, table: Table) -> DataStream:
        """A DataStream of the table's changelog: Rows named by column, each of its kind
        (``get_row_kind()``: +I, and -U/+U for a changed aggregate in STREAMING mode)."""
        _check_own(self, table, "to_changelog_stream")
        if table._changelog is not None:
            return self._changelog_stream(table)
        return self.to_data_stream(table)

    def _changelog_stream(self, table: Table) -> DataStream:
        """The changelog of a streaming GROUP BY. Its operator's uid is the n-th of the
        environment, as Flink's planner names operators (``<n>_group-aggregate``), so a
        program resumed from a savepoint finds its state."""
        self._operators += 1
        return table._changelog.changelog_stream(_row_type_info(table._columns),
                                                 '%d_group-aggregate' % self._operators)

    def _changelog_rows(self, table: Table):
        """The changelog of a streaming query, computed by a job of its own
        (``table.execute()``): positional Rows of their kinds; of an unbounded stream, an
        iterator of them as the job's batches complete (closing it cancels the job)."""
        streams = []
        self._env._apart(lambda: streams.append(self._changelog_stream(table)))
        rows = streams[0]._collect("collect", alone=True)
        if not is_bounded(streams[0]):
            return CloseableResultIterator(map(_positional, rows), rows.close)
        with rows:
            return [_positional(r) for r in rows]

    def to_append_stream(self, table: Table, type_info: TypeInformation) -> DataStream:
        """A DataStream of the table's rows as ``type_info`` (a ROW or TUPLE type: fields
        mapped by position, types must match; an atomic type for a one-column table).
        Fails for a table Flink updates (a GROUP BY in STREAMING mode), as Flink does."""
        if isinstance(table, Table) and table._changelog is not None and \
                table._changelog.updating:
            raise TableException("toAppendStream doesn't support consuming update changes "
                                 "which is produced by node " + table._changelog.node())
        _check_own(self, table, "to_append_stream")
        _check_fields_match(table._columns, type_info, "to_append_stream")
        if table._changelog is not None:  # an appending plan of the engine's operators
            return self._changelog_stream(table).map(_record_of(type_info), type_info)
        return self._env.from_collection(_records(table, type_info), type_info)

    def to_retract_stream(self, table: Table, type_info: TypeInformation) -> DataStream:
        """A DataStream of ``(True, record)`` (add) and ``(False, record)`` (retract)
        messages, the records as in ``to_append_stream``: in STREAMING mode a GROUP BY
        retracts a group's old row before adding its new one; in BATCH mode there are only
        the final rows."""
        _check_own(self, table, "to_retract_stream")
        _check_fields_match(table._columns, type_info, "to_retract_stream")
        if table._changelog is not None:
            return self.to_changelog_stream(table).map(
                RetractMessages(_record_of(type_info)),
                Types.TUPLE([Types.BOOLEAN(), type_info]))
        return self._env.from_collection([(True, r) for r in _records(table, type_info)],
                                         Types.TUPLE([Types.BOOLEAN(), type_info]))


def _flink_columns(tree, columns: Columns, column_type: ColumnType) -> Columns:
    """The planned ``columns`` of a query as Flink names and types them: an unnamed item
    that is not a column is ``EXPR$<position>``; an item's type is Flink's where it differs
    from Spark's only in what it shows (a column's declared type, a CAST's precision, a
    string literal's CHAR(n): ``sql_typing.flink_type``)."""
    items = tree.expressions if tree.key == 'select' else []
    if len(items) != len(columns):
        return columns
    flink_columns = []
    for position, ((name, planned), item) in enumerate(zip(columns, items)):
        inner = item.this if item.key == 'alias' else item
        if inner.key != 'column' and item.key != 'alias':
            name = 'EXPR$%d' % position
        flink_columns.append((name, keep_declared(planned, flink_type(item, column_type))))
    return flink_columns


def _rowtime_of(tree, views: dict):
    """The select item that is the rowtime attribute of the one view a query projects."""
    if tree.key != 'select' or len(views) != 1 or tree.args.get('group') is not None:
        return None
    rowtime = next(iter(views.values()))._rowtime
    for item in tree.expressions:
        if item.key == 'star' and rowtime:
            return rowtime
        inner = item.this if item.key == 'alias' else item
        if inner.key == 'column' and inner.name == rowtime:
            return item.alias_or_name
    return None


def _inferred_type(values: list, name: str) -> DataType:
    """The column type PyFlink gives Python values (of the first that is not None)."""
    value = next((v for v in values if v is not None), None)
    if value is None:
        raise ValueError(f"from_elements(): the column '{name}' has only None values; give "
                         "its type in a schema, DataTypes.ROW([...])")
    for python_type, data_type in _INFERRED:
        if isinstance(value, python_type):
            return data_type
    if isinstance(value, list):
        return DataTypes.ARRAY(_inferred_type(value, name))
    if isinstance(value, dict):
        return DataTypes.MAP(_inferred_type(list(value), name).not_null(),
                             _inferred_type(list(value.values()), name))
    raise TypeError(f"from_elements(): not supported type: {type(value)}")


# Python types -> column types, as PyFlink infers them (bool before int: a bool is an int)
_INFERRED = [(bool, DataTypes.BOOLEAN()), (int, DataTypes.BIGINT()),
             (float, DataTypes.DOUBLE()), (str, DataTypes.STRING()),
             (decimal.Decimal, DataTypes.DECIMAL(38, 18)),
             (datetime.datetime, DataTypes.TIMESTAMP_LTZ(6)), (datetime.date, DataTypes.DATE())]


def _unreadable(t_env: TableEnvironment, definition, message: str) -> Table:
    """A table of ``definition``'s columns that fails with ``message`` when queried, as
    Flink's planner fails."""
    def fail():
        raise ValueError(message)
    return Table(t_env, definition.physical_columns(), fail)


def _row_type_info(columns: Columns) -> TypeInformation:
    """The type of a DataStream of a table's rows: Rows named by column."""
    return Types.ROW_NAMED([n for n, _ in columns], [type_info_of(t) for _, t in columns])


def _register(session, name: str, function: UserDefinedFunctionWrapper) -> None:
    from pyspark.sql.functions import udf as spark_udf
    spark_function = spark_udf(function.python_function(), spark_type(function._result_type),
                               useArrow=False)  # row at a time, as Flink's general functions
    session.udf.register(name, spark_function if function._deterministic else
                         spark_function.asNondeterministic())


def _job_session(env: StreamExecutionEnvironment):
    """The Spark session the environment's jobs run on."""
    return spark_session(job_settings(env, []))


def _check_own(t_env: TableEnvironment, table: Table, method: str) -> None:
    if not isinstance(table, Table):
        raise TypeError(f"{method}() takes a Table, got {type(table).__name__}")
    if table._t_env is not t_env:
        raise ValueError(f"{method}(): the table belongs to another table environment")
    table._check_executable(method)


def _check_fields_match(columns: Columns, type_info: TypeInformation, method: str) -> None:
    if isinstance(type_info, (RowTypeInfo, TupleTypeInfo)):
        requested = type_info.get_field_types()
    else:
        requested = [type_info]
    column_text = ', '.join('%s %s' % c for c in columns)
    if len(requested) != len(columns):
        raise ValueError(f"{method}(): the table has {len(columns)} column(s) "
                         f"({column_text}), the requested type {type_info!r} has "
                         f"{len(requested)} field(s)")
    for (name, data_type), field_type in zip(columns, requested):
        try:
            wanted = data_type_of(field_type)
        except ValueError as e:
            raise ValueError(f"{method}(): {e}") from None
        if wanted._root != data_type._root:
            raise ValueError(f"{method}(): field types must match, but column {name!r} is "
                             f"{data_type} and the requested field is {field_type!r} "
                             f"({wanted}). Table columns: {column_text}. CAST the column in "
                             "the query or request another type.")


def _records(table: Table, type_info: TypeInformation) -> list:
    """The table's rows as values of ``type_info``: fields by position."""
    return [_record_of(type_info)(r) for r in table._rows()]


def _record_of(type_info: TypeInformation):
    """A row as a value of ``type_info``: a tuple of its fields, or its one field."""
    if isinstance(type_info, (RowTypeInfo, TupleTypeInfo)):
        return tuple
    return _first_field


def _positional(row: Row) -> Row:
    """A Row of a changelog as collected results are: positional, of its kind."""
    return Row.of_kind(row.get_row_kind(), *row)


def _first_field(row):
    return row[0]


def _simple_name(path: str) -> str:
    if not re.fullmatch(r'`?[A-Za-z_][\w]*`?', path.strip()):
        raise ValueError(f"{path!r}: views here have simple names (letters, digits, _), "
                         "without catalog or database")
    return path.strip().strip('`')


def _statement_keyword(stmt: str) -> str:
    body = _COMMENTS.sub(' ', stmt).lstrip(' (')
    return body.split(None, 1)[0].upper() if body.strip() else ''


def _head(stmt: str) -> str:
    text = ' '.join(stmt.split())
    return repr(text if len(text) <= 60 else text[:57] + '...')


def _not_a_query(stmt: str, method: str) -> str:
    return (f"{method}(): {_head(stmt)} is not a query. Here {method} runs SELECT, WITH and "
            "VALUES queries (Spark SQL) over the views of this environment; register views "
            "with t_env.create_temporary_view(name, table_or_stream)")
