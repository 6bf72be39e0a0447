"""Windowing table functions in STREAMING mode (``TABLE(TUMBLE|HOP|CUMULATE|SESSION(TABLE
t, DESCRIPTOR(ts), ...))``) over a view whose time attribute a Schema's watermark declares,
planned onto the engine's event-time windows: the view's rows are stamped with their
rowtime and the watermark of the Schema's expression; a GROUP BY window_start, window_end
(and keys) is a keyed window whose rows append when the watermark passes its end; a
plain select of the function appends each row once per window, with its window columns."""
import datetime
from typing import List

from sqlglot import exp

from api.common.time import Duration
from api.common.typeinfo import Types
from api.common.watermark_strategy import TimestampAssigner, WatermarkStrategy
from api.datastream.functions import ProcessWindowFunction
from engine.time.windows import (EventTimeSessionWindows, SlidingEventTimeWindows,
                                 TimeWindow, TumblingEventTimeWindows, WindowAssigner)
from .changelog import Aggregate, AppendingQuery, Calc, accumulate, aggregate_result
from .row_expressions import compile_expression, interval_millis
from .sql_parser import WindowFunction, parse_expression, unsupported
from .sql_typing import AGGREGATE_NODES, flink_aggregate_type
from .stream_sql import aggregate_argument, column_resolver, select_items
from .table import keep_declared
from .types import DataTypes

__all__ = ['plan_window_query', 'CumulativeEventTimeWindows']

WINDOW_COLUMNS = ('window_start', 'window_end', 'window_time')
_EPOCH = datetime.datetime(1970, 1, 1)


class CumulativeEventTimeWindows(WindowAssigner):
    """Windows that start every ``max_size`` (from the epoch plus ``offset``) and end every
    ``step`` after their start, up to ``max_size`` (Flink SQL's CUMULATE): an element is in
    each such window it precedes the end of."""

    def __init__(self, step: int, max_size: int, offset: int = 0):
        if step <= 0 or max_size % step:
            raise ValueError("CUMULATE: the max size must be a multiple of the step")
        self._step = step
        self._max_size = max_size
        self._offset = offset

    def assign_windows(self, element, timestamp: int, context) -> List[TimeWindow]:
        start = TimeWindow.get_window_start_with_offset(timestamp, self._offset,
                                                        self._max_size)
        return [TimeWindow(start, end) for end in range(
            start + self._step, start + self._max_size + 1, self._step) if end > timestamp]

    def get_default_trigger(self, env):
        return TumblingEventTimeWindows.of(self._max_size).get_default_trigger(env)

    def is_event_time(self) -> bool:
        return True


def epoch_millis(value: datetime.datetime) -> int:
    """The milliseconds of a rowtime (a TIMESTAMP, or a TIMESTAMP_LTZ in local time)."""
    return (value - _EPOCH) // datetime.timedelta(milliseconds=1)


def timestamp_of(millis: int) -> datetime.datetime:
    """The TIMESTAMP(3) of milliseconds (of a window's bounds)."""
    return _EPOCH + datetime.timedelta(milliseconds=millis)


class _Rowtime(TimestampAssigner):
    def __init__(self, index: int):
        self._index = index

    def extract_timestamp(self, value, record_timestamp: int) -> int:
        return epoch_millis(value[self._index])


def stamped_rows(view, sql: str):
    """The DataStream of a view's rows (tuples) with their rowtime as timestamps and the
    watermark of the view's Schema (``WATERMARK FOR ts AS ts - INTERVAL ...``)."""
    if view._stream_rows is None or not view._rowtime or not view._watermark_specs:
        raise unsupported("Time attributes of views other than a Schema's watermarked "
                          "column of a DataStream", sql)
    names = [n for n, _ in view._columns]
    spec = view._watermark_specs[0].expression
    watermark = parse_expression(spec._args[0]) if spec._name == 'sql' else \
        parse_expression(str(spec))
    delay = 0
    if isinstance(watermark, exp.Sub) and isinstance(watermark.this, exp.Column):
        delay, watermark = interval_millis(watermark.expression, sql), watermark.this
    if not isinstance(watermark, exp.Column) or watermark.name != view._rowtime:
        raise unsupported(f"Watermarks other than 'rowtime - INTERVAL' ({spec})", sql)
    # Flink SQL's watermark is the largest rowtime less the delay; the engine's bounded
    # out-of-orderness strategy is 1 ms behind that
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(delay - 1)) \
        if delay else WatermarkStrategy.for_monotonous_timestamps()
    return view._stream_rows.rows().assign_timestamps_and_watermarks(
        strategy.with_timestamp_assigner(_Rowtime(names.index(view._rowtime))))


def _assigner(function: WindowFunction, sql: str):
    """The kind, time column and window assigner of a windowing table function; an offset
    (the last interval, optional but for SESSION) shifts the windows from the epoch."""
    kind = function.this.name.upper()
    arguments = function.expressions
    descriptor = arguments[0] if arguments else None
    counts = {'TUMBLE': 1, 'HOP': 2, 'CUMULATE': 2, 'SESSION': 1}
    if not (isinstance(descriptor, exp.Anonymous) and descriptor.name.upper() == 'DESCRIPTOR'):
        raise unsupported(f"{kind} without DESCRIPTOR(time column) as its second argument",
                          sql)
    if len(arguments) - 1 not in (counts[kind], counts[kind] + (kind != 'SESSION')):
        raise unsupported(f"{kind} windows with {len(arguments) - 1} interval(s)", sql)
    millis = [interval_millis(a, sql) for a in arguments[1:]]
    offset = millis.pop() if len(millis) > counts[kind] else 0
    if kind == 'TUMBLE':
        if abs(offset) >= millis[0]:
            raise ValueError(f"TUMBLE table function parameters must satisfy abs(offset) < "
                             f"size, but got size {millis[0]} ms and offset {offset} ms.")
        assigner = TumblingEventTimeWindows.of(millis[0], offset)
    elif kind == 'HOP':  # Flink takes the offset modulo the slide
        assigner = SlidingEventTimeWindows.of(millis[1], millis[0], offset % millis[0])
    elif kind == 'CUMULATE':
        assigner = CumulativeEventTimeWindows(*millis, offset)
    else:
        assigner = EventTimeSessionWindows.with_gap(millis[0])
    return kind, descriptor.expressions[0].name, assigner


def plan_window_query(t_env, tree: exp.Select, function: WindowFunction, sql: str):
    """The appending table of a query of a windowing table function."""
    view = t_env._views.get(function.args['table'].name)
    if view is None:
        raise ValueError(f"Object '{function.args['table'].name}' not found: {sql}")
    kind, time_column, assigner = _assigner(function, sql)
    if time_column != view._rowtime:
        raise ValueError(f"The window function {kind} requires a time attribute column; "
                         f"'{time_column}' is not the rowtime of the view: {sql}")
    partition = [c.name for c in function.args.get('partition_by') or []]
    names = [n for n, _ in view._columns] + list(WINDOW_COLUMNS)
    resolve = column_resolver(names, sql)
    stream = stamped_rows(view, sql)
    typed = _typed_query(t_env, tree, function)
    group = tree.args.get('group')
    if group is None:
        if kind == 'SESSION':
            raise unsupported("SESSION windows without GROUP BY window_start, window_end",
                              sql)
        where = tree.args.get('where')
        calc = Calc(compile_expression(where.this, resolve, sql) if where else None,
                    tuple(compile_expression(e, resolve, sql)
                          for e in select_items(tree, names)))
        typed._changelog = AppendingQuery(stream.flat_map(
            _Windowed(assigner, calc, names.index(view._rowtime)), Types.PICKLED_BYTE_ARRAY()))
        return typed
    where = tree.args.get('where')
    if where is not None:  # rows filtered before they reach their windows
        if any(c.name in WINDOW_COLUMNS for c in where.find_all(exp.Column)):
            raise unsupported("WHERE conditions on window columns of window aggregates", sql)
        stream = stream.filter(compile_expression(where.this, resolve, sql).holds)
    keys = [k.name for k in group.expressions if isinstance(k, exp.Column)]
    if len(keys) != len(group.expressions) or not {'window_start', 'window_end'} <= set(keys):
        raise unsupported("Window aggregates not grouped by window_start, window_end and "
                          "columns", sql)
    keys = [k for k in keys if k not in WINDOW_COLUMNS]
    if kind == 'SESSION' and set(keys) != set(partition) and partition:
        raise unsupported("SESSION windows grouped by keys other than their PARTITION BY",
                          sql)
    aggregates, arguments = [], []

    def post_node(node: exp.Expression) -> exp.Expression:
        if type(node) in AGGREGATE_NODES:
            argument, distinct = aggregate_argument(node, sql)
            field = None
            if not isinstance(argument, exp.Star):
                field = len(arguments)
                arguments.append(compile_expression(argument, resolve, sql))
            integral = field is not None and argument.key == 'column' and \
                dict(view._columns)[argument.name]._root in ('TINYINT', 'SMALLINT', 'INT',
                                                             'BIGINT')
            aggregates.append(Aggregate(AGGREGATE_NODES[type(node)], field, distinct,
                                        integral))
            return exp.column('__agg%d' % (len(aggregates) - 1))
        return node
    items = [e.transform(post_node, copy=True) for e in tree.expressions]
    having = tree.args.get('having')
    having = having.this.transform(post_node, copy=True) if having is not None else None
    output = keys + list(WINDOW_COLUMNS) + ['__agg%d' % i for i in range(len(aggregates))]
    post_resolve = column_resolver(output, sql)
    post = Calc(compile_expression(having, post_resolve, sql) if having is not None else None,
                tuple(compile_expression(e, post_resolve, sql) for e in items))
    key_indices = [names.index(k) for k in keys]
    windowed = stream.key_by(_Key(key_indices), Types.PICKLED_BYTE_ARRAY()).window(assigner)
    typed._changelog = AppendingQuery(windowed.process(
        _WindowAggregate(key_indices, tuple(arguments), tuple(aggregates), post),
        Types.PICKLED_BYTE_ARRAY()))
    view_types = dict(view._columns)
    for i, item in enumerate(tree.expressions):
        inner = item.this if isinstance(item, exp.Alias) else item
        if type(inner) in AGGREGATE_NODES:
            argument, _ = aggregate_argument(inner, sql)
            typed._columns[i] = (typed._columns[i][0], flink_aggregate_type(
                AGGREGATE_NODES[type(inner)], view_types.get(argument.name)
                if isinstance(argument, exp.Column) else typed._columns[i][1]))
    return typed


def _typed_query(t_env, tree: exp.Select, function: WindowFunction):
    """The table Spark plans for the query over the view with NULL window columns; the
    window columns are TIMESTAMP(3) NOT NULL, window_time a rowtime (and in a plain
    select, the view's rowtime still)."""
    view_name = function.args['table'].name
    stand_in = parse_expression(
        "(SELECT *, %s FROM %s)" % (', '.join(
            "CAST(NULL AS TIMESTAMP(3)) AS %s" % c for c in WINDOW_COLUMNS), view_name))
    planned = tree.copy()
    planned.args['from_' if 'from_' in planned.args else 'from'].set('this', stand_in)
    table = t_env._spark_query(planned, planned.sql(dialect='spark'))
    view_types = dict(t_env._views[view_name]._columns)
    table._columns = [(n, DataTypes.TIMESTAMP(3).not_null() if n in WINDOW_COLUMNS else
                       keep_declared(t, view_types.get(n))) for n, t in table._columns]
    names = [n for n, _ in table._columns]
    if 'window_time' in names:
        table._rowtime = 'window_time'
        rowtime = t_env._views[view_name]._rowtime
        if rowtime in names and tree.args.get('group') is None:  # a time attribute too
            table._schema_notes = {rowtime: ' *ROWTIME*'}
    return table


class _Key:
    def __init__(self, indices: List[int]):
        self._indices = indices

    def __call__(self, row: tuple) -> tuple:
        return tuple(row[i] for i in self._indices)


def _bounds(window: TimeWindow) -> tuple:
    """window_start, window_end and window_time (the end less 1 ms) of a window."""
    return (timestamp_of(window.start), timestamp_of(window.end),
            timestamp_of(window.end - 1))


class _Windowed:
    """Each row once per window of it, with the window's columns, through a Calc."""

    def __init__(self, assigner, calc: Calc, rowtime: int):
        self._assigner = assigner
        self._calc = calc
        self._rowtime = rowtime

    def __call__(self, row: tuple):
        timestamp = epoch_millis(row[self._rowtime])
        for window in self._assigner.assign_windows(row, timestamp, None):
            out = self._calc(tuple(row) + _bounds(window))
            if out is not None:
                yield out


class _WindowAggregate(ProcessWindowFunction):
    """The aggregates of a window's rows: one row of the keys, the window's columns and
    the aggregates, through the post Calc (HAVING and the select items)."""

    def __init__(self, key_indices, arguments, aggregates, post: Calc):
        self._key_indices = key_indices
        self._arguments = arguments
        self._aggregates = aggregates
        self._post = post

    def process(self, key, context, elements):
        states = [None] * len(self._aggregates)
        seen = [set() for _ in self._aggregates]  # the values of DISTINCT aggregates
        for row in elements:
            for i, aggregate in enumerate(self._aggregates):
                x = 1 if aggregate.field is None else self._arguments[aggregate.field](row)
                if x is None or (aggregate.distinct and x in seen[i]):
                    continue
                if aggregate.distinct:
                    seen[i].add(x)
                states[i] = accumulate(aggregate.function, states[i], x)
        values = tuple(key) + _bounds(context.window()) + tuple(
            aggregate_result(a, s) for a, s in zip(self._aggregates, states))
        row = self._post(values)
        if row is not None:
            yield row
