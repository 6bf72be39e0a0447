"""Tables of DataStreams (``from_data_stream``): columns from the stream's type, chosen or
renamed by a field string or declared by a :class:`Schema` (physical, computed and
'rowtime' metadata columns, watermarks); the stream's job runs, alone, when the table's
rows are first needed (then it must be bounded). A table of the stream's fields keeps its
``StreamRows``, for streaming GROUP BYs (``changelog.py``)."""
import datetime
from typing import List, Optional

import sqlglot

from api.common.typeinfo import ExternalTypeInfo, RowTypeInfo, TupleTypeInfo, TypeInformation
from api.datastream.data_stream import DataStream
from api.datastream.functions import ProcessFunction
from .changelog import RowOf, StreamRows, check_bounded
from .data_frames import Columns, to_data_frame
from .expressions import col, to_sql
from .row_expressions import compile_expression
from .sql_parser import parse_expression
from .stream_sql import column_resolver
from .schema import ComputedColumn, MetadataColumn, PhysicalColumn, Schema
from .table import Table
from .types import data_type_of

__all__ = ['table_of_stream']


def table_of_stream(t_env, data_stream: DataStream, fields_or_schema: tuple) -> Table:
    """The table of a stream (``StreamTableEnvironment.from_data_stream``): its rows are
    collected when first needed."""
    if not isinstance(data_stream, DataStream):
        raise TypeError(f"from_data_stream() takes a DataStream, got "
                        f"{type(data_stream).__name__}")
    stream_type = data_stream.get_type()
    if isinstance(stream_type, ExternalTypeInfo):
        stream_type = stream_type._type_info
    try:
        columns = _columns_of_type(stream_type)
    except ValueError as e:
        raise ValueError(f"from_data_stream(): {e}") from None
    if len(fields_or_schema) == 0 or isinstance(fields_or_schema[0], Schema):
        picks = list(range(len(columns)))
    elif len(fields_or_schema) == 1 and isinstance(fields_or_schema[0], str):
        picks, columns = _select_fields(fields_or_schema[0], columns)
    else:
        raise ValueError("Invalid arguments for 'fields': %r (give one string of field "
                         "names, e.g. 'a, b, c')" % (fields_or_schema,))
    atomic = not isinstance(stream_type, (RowTypeInfo, TupleTypeInfo))
    rowtimes = _rowtime_columns(fields_or_schema)
    if rowtimes:  # the records' timestamps, read by a ProcessFunction of the table's job
        stamped = []
        data_stream._env._apart(lambda: stamped.append(data_stream.process(_Timestamped())))
        data_stream = stamped[0]
        columns = columns + [(c.name, c.data_type) for c in rowtimes]

    def make_data_frame():
        check_bounded(data_stream, 'from_data_stream', "a table here is a Spark DataFrame "
                      "of a stream's complete (bounded) input")
        with data_stream._collect("from_data_stream", alone=True) as records:
            rows = [_table_row(r, atomic, picks, len(rowtimes)) for r in records]
        return to_data_frame(t_env._spark(), columns, rows)
    table = Table(t_env, columns, make_data_frame)
    if not rowtimes:
        table._stream_rows = StreamRows(data_stream, RowOf(tuple(picks), atomic),
                                        [n for n, _ in columns])
    if fields_or_schema and isinstance(fields_or_schema[0], Schema):
        if len(fields_or_schema) > 1:
            raise ValueError("from_data_stream(): give one Schema")
        table = _with_schema(table, fields_or_schema[0])
    return table


class _Timestamped(ProcessFunction):
    """(the record's timestamp, the record), for a Schema's 'rowtime' metadata column."""

    def process_element(self, value, ctx):
        yield ctx.timestamp(), value


def _rowtime_columns(fields_or_schema: tuple) -> List[MetadataColumn]:
    """The metadata columns of a Schema among ``fields_or_schema``: of a DataStream, only
    its records' timestamps ('rowtime') are."""
    if not fields_or_schema or not isinstance(fields_or_schema[0], Schema):
        return []
    columns = [c for c in fields_or_schema[0]._columns if isinstance(c, MetadataColumn)]
    for column in columns:
        key = column.metadata_key or column.name
        if key != 'rowtime':
            raise ValueError(f"Invalid metadata key '{key}' in column '{column.name}'. The "
                             "metadata of a DataStream is 'rowtime' (its records' "
                             "timestamps, TIMESTAMP_LTZ(3))")
        if column.data_type._root not in ('TIMESTAMP', 'TIMESTAMP_LTZ'):
            raise ValueError(f"the metadata column '{column.name}' of 'rowtime' must be a "
                             f"TIMESTAMP_LTZ(3), not {column.data_type}")
    return columns


def _with_schema(table: Table, schema: Schema) -> Table:
    """The table of a stream's columns as ``schema`` declares them."""
    rows = table._stream_rows
    declared = [c for c in schema._columns if isinstance(c, PhysicalColumn)]
    metadata = [c for c in schema._columns if isinstance(c, MetadataColumn)]
    # Flink shows computed columns and the watermark in the schema of a table of all the
    # stream's fields; one of some of them is a projection that shows neither
    physical = [n for n, _ in table._columns][:len(table._columns) - len(metadata)]
    projected = declared and [c.name for c in declared] != physical
    if declared:
        table._check_names([c.name for c in declared], 'from_data_stream')
        table = table.select(*[col(c.name).cast(c.data_type).alias(c.name) for c in declared],
                             *[col(c.name) for c in metadata])
        table._columns = [(c.name, c.data_type) for c in declared + metadata]  # as declared
    notes = {c.name: c.metadata_note() for c in metadata}
    for column in schema._columns:
        if isinstance(column, ComputedColumn):
            expression = column.expression
            table = table.add_columns(expression.alias(column.name))
            notes[column.name] = ' AS ' + (expression._args[0] if expression._name == 'sql'
                                           else str(expression))
    lines = []
    for spec in schema._watermark_specs:
        names = [n for n, _ in table._columns]
        if spec.column_name not in names:
            raise ValueError(f"Invalid column name '{spec.column_name}' for rowtime attribute "
                             f"in watermark declaration. Available columns are: "
                             f"[{', '.join(names)}]")
        rowtime_type = dict(table._columns)[spec.column_name]
        if rowtime_type._root not in ('TIMESTAMP', 'TIMESTAMP_LTZ'):
            raise ValueError(f"Invalid data type of time field for watermark definition. The "
                             f"field must be of type TIMESTAMP(p) or TIMESTAMP_LTZ(p), but "
                             f"{spec.column_name!r} is {rowtime_type}")
        if str(spec.expression).upper() != '[SOURCE_WATERMARK()]':  # the stream's own
            table._type_of(to_sql(spec.expression, table._type_of,
                                  table._t_env._function_name))
        table._rowtime = spec.column_name
        expression = spec.expression
        lines.append('WATERMARK FOR `%s`: %s AS %s' % (
            spec.column_name, rowtime_type,
            expression._args[0] if expression._name == 'sql' else expression))
    if schema._primary_key is not None:
        name, key = schema._primary_key
        table._check_names(key, 'primary_key')
        lines.append('CONSTRAINT `%s` PRIMARY KEY (%s) NOT ENFORCED'
                     % (name, ', '.join('`%s`' % k for k in key)))
    if projected:
        notes, lines = {}, []
    result = Table(table._t_env, table._columns, table._data_frame, schema_notes=notes,
                   schema_lines=lines)
    result._watermark_specs = list(schema._watermark_specs)
    result._rowtime = table._rowtime
    result._stream_rows = _schema_rows(rows, schema, [n for n, _ in result._columns])
    return result


def _schema_rows(rows: Optional[StreamRows], schema: Schema,
                 names: List[str]) -> Optional[StreamRows]:
    """The rows of a Schema's table from its stream's rows: the declared physical columns,
    then the computed ones (None where a column is not computed here per record)."""
    if rows is None:
        return None
    declared = [c.name for c in schema._columns if isinstance(c, PhysicalColumn)]
    computed = [c for c in schema._columns if isinstance(c, ComputedColumn)]
    picks = [rows.names.index(n) for n in declared] if declared else \
        list(range(len(rows.names)))
    physical = [rows.names[i] for i in picks]
    try:
        expressions = tuple(compile_expression(
            parse_expression(c.expression._args[0]) if c.expression._name == 'sql' else
            sqlglot.parse_one(to_sql(c.expression, _no_types, _no_functions), read='spark'),
            column_resolver(physical, str(c.expression)), str(c.expression))
            for c in computed)
    except (NotImplementedError, ValueError):
        return None
    return StreamRows(rows.data_stream, RowOf(tuple(rows.row_of.picks[i] for i in picks),
                                              rows.row_of.atomic, expressions), names)


def _no_types(sql: str):
    raise ValueError("a computed column of a Schema is typed by Spark, not here")


def _no_functions(function):
    raise ValueError("a computed column calling a Python function runs on Spark here")


def _columns_of_type(stream_type: TypeInformation) -> Columns:
    data_type = data_type_of(stream_type)
    if isinstance(stream_type, (RowTypeInfo, TupleTypeInfo)):
        return list(data_type._args)  # a composite type is flattened into columns
    return [('f0', data_type)]


def _select_fields(fields: str, columns: Columns):
    """(indices of the input columns, the table's columns) for a field string: names of
    the input's fields (with optional ``as`` aliases) select and reorder them; other names
    rename all fields by position. Named this way, columns take Flink's legacy types
    (nullable)."""
    items = [f.strip() for f in fields.split(',')]
    parsed = []
    for item in items:
        parts = item.split()
        if '.' in item or not (len(parts) == 1 or len(parts) == 3 and parts[1].lower() == 'as'):
            raise ValueError(f"from_data_stream(): cannot read the field {item!r} of "
                             f"{fields!r}: give names, or 'name as alias'. Time attributes "
                             "(.rowtime, .proctime) are not available: keep the time in a "
                             "TIMESTAMP column and use it in the SQL query.")
        parsed.append((parts[0], parts[-1]))
    names = [n for n, _ in columns]
    if all(source in names for source, _ in parsed):
        picks = [names.index(source) for source, _ in parsed]
    elif all(source == alias for source, alias in parsed) and len(parsed) == len(columns):
        picks = list(range(len(columns)))
    else:
        raise ValueError(f"from_data_stream(): the field names {fields!r} neither name "
                         f"fields of the stream ({', '.join(names)}) nor rename all "
                         f"{len(columns)} fields by position")
    return picks, [(alias, columns[i][1].nullable()) for i, (_, alias) in zip(picks, parsed)]


_NO_TIMESTAMP = -(1 << 63)  # what ctx.timestamp() gives for a record without one


def _table_row(record, atomic: bool, picks: List[int], rowtimes: int) -> tuple:
    """A table row of a collected record (of a (timestamp, record) pair when the table has
    ``rowtimes`` rowtime columns)."""
    timestamp, record = record if rowtimes else (None, record)
    values = (record,) if atomic else tuple(record)
    if rowtimes and timestamp == _NO_TIMESTAMP:
        raise ValueError("Could not find timestamp in DataStream API record. Make sure that "
                         "timestamps have been assigned before and the event-time "
                         "characteristic is enabled.")
    instant = () if not rowtimes else (datetime.datetime.fromtimestamp(timestamp // 1000)
                                       .replace(microsecond=timestamp % 1000 * 1000),)
    return tuple(values[i] for i in picks) + instant * rowtimes
