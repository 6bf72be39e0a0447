"""Interval joins in STREAMING mode: ``SELECT ... FROM a [LEFT|RIGHT|FULL] JOIN b ON a.k = b.k
AND a.ts BETWEEN b.ts - INTERVAL ... AND b.ts`` (or ``FROM a, b WHERE ...``, bounds with
``>=``, ``>``, ``<=``, ``<``) of two views whose ``ts`` are rowtimes of a Schema's
watermark, planned onto the DataStream API as Flink's interval join runs: both streams
keyed by the equality keys and connected, a KeyedCoProcessFunction keeping each side's rows
in MapState by rowtime, joining each arriving row with the other side's rows within the
bounds, and event-time timers removing rows (padding those of an outer side that never
joined with NULLs) once the watermark has passed their bound. The result appends. A join
without such bounds is a regular join (``regular_join.py``), planned here alike."""
from typing import List, Optional, Tuple

from sqlglot import exp

from api.common.typeinfo import Types
from api.datastream.functions import KeyedCoProcessFunction
from api.datastream.state import MapStateDescriptor, ValueStateDescriptor
from engine.time.watermarks import MAX_WATERMARK
from .changelog import AppendingQuery, Calc, RowOf, StreamRows
from .regular_join import OUTER_SIDES, JoinChangelog, RegularJoin
from .row_expressions import RowExpression, compile_expression, interval_millis
from .sql_parser import FlinkSQL, unsupported
from .stream_sql import column_resolver
from .window_tvf import epoch_millis, stamped_rows

__all__ = ['plan_join_query', 'IntervalJoin']

_SIDES = ('LEFT', 'RIGHT', 'FULL')
# a comparison of left.ts - right.ts with a constant: is it a lower bound, how much stricter
_BOUNDS = {exp.GTE: ('lower', 0), exp.GT: ('lower', 1), exp.LTE: ('upper', 0),
           exp.LT: ('upper', -1)}
_FLIPPED = {exp.GTE: exp.LTE, exp.GT: exp.LT, exp.LTE: exp.GTE, exp.LT: exp.GT}


class _Input:
    """One side of the join: its view, the name (or alias) its columns are qualified by,
    their position in the joined row."""

    def __init__(self, t_env, table: exp.Table, offset: int, sql: str):
        self.view = t_env._views.get(table.name)
        if self.view is None:
            raise ValueError(f"Object '{table.name}' not found: {sql}")
        self.names = [n for n, _ in self.view._columns]
        self.qualifier = table.alias_or_name
        self.offset = offset


def plan_join_query(t_env, tree: exp.Select, sql: str):
    """The appending table of a join of two views of streams with time bounds between
    their rowtimes, or None for a join of tables that are not streams (run on Spark SQL)."""
    joins = tree.args['joins']
    source = (tree.args.get('from_') or tree.args.get('from')).this
    if len(joins) != 1 or not isinstance(source, exp.Table) or \
            not isinstance(joins[0].this, exp.Table):
        raise unsupported("Joins of more than two views, or of subqueries,", sql)
    join = joins[0]
    if any(t.name not in t_env._views for t in (source, join.this)):
        return None
    left = _Input(t_env, source, 0, sql)
    right = _Input(t_env, join.this, len(left.names), sql)
    if left.view._stream_rows is None or right.view._stream_rows is None:
        return None
    side = join.side.upper()
    if join.kind.upper() in ('CROSS', 'SEMI', 'ANTI') or join.args.get('using'):
        raise unsupported(f"{join.kind.upper() or 'USING'} joins of streams", sql)
    on = join.args.get('on')
    where = tree.args.get('where')
    conditions = _conjuncts(on) + ([] if side else _conjuncts(where.this if where else None))
    after = where.this if side and where else None
    resolve = column_resolver(left.names + right.names, sql, {
        i.qualifier: (i.offset, i.names) for i in (left, right)})
    keys, bounds, rest = _classify(conditions, left, right, resolve, sql)
    interval = None not in bounds
    if not interval:  # a regular join: the time conditions are conditions as others
        keys, _, rest = _classify(conditions, left, right, resolve, sql, time_bounds=False)
    items = _named_items(tree, left, right)
    typed = _typed_query(t_env, tree, items, left, right, resolve, side, sql)
    residual = None
    for condition in rest:
        residual = condition if residual is None else exp.and_(residual, condition)
    residual = compile_expression(residual, resolve, sql) if residual is not None else None
    calc = Calc(compile_expression(after, resolve, sql) if after is not None else None,
                tuple(compile_expression(e, resolve, sql) for e in items))
    if interval:
        function = IntervalJoin(side, bounds, len(left.names), len(right.names), residual,
                                calc, _rowtime_index(left), _rowtime_index(right))
    else:
        function = RegularJoin(residual, calc, OUTER_SIDES.get(side, (False, False)),
                               (len(left.names), len(right.names)))

    def define():
        inputs = [stamped_rows(i.view, sql) if interval else i.view._stream_rows.rows()
                  for i in (left, right)]
        left_stream, right_stream = [
            s.key_by(_JoinKey([pair[i] for pair in keys]), Types.PICKLED_BYTE_ARRAY())
            for i, s in enumerate(inputs)]
        joined.append(left_stream.connect(right_stream).process(
            function, Types.PICKLED_BYTE_ARRAY()))
    joined = []
    left.view._stream_rows.data_stream._env._apart(define)
    names = [n for n, _ in typed._columns]
    if side and not interval:  # it retracts the padded rows
        typed._updating = True
        typed._changelog = JoinChangelog(joined[0], (
            "Join(joinType=[%sOuterJoin], where=[%s], select=[%s], "
            "leftInputSpec=[NoUniqueKey], rightInputSpec=[NoUniqueKey])"
            % (side.title(), on.sql(dialect=FlinkSQL) if on else 'true', ', '.join(names))))
        return typed
    typed._stream_rows = StreamRows(joined[0], RowOf(tuple(range(len(names))), False), names)
    typed._changelog = AppendingQuery(typed._stream_rows)
    return typed


def _conjuncts(node: Optional[exp.Expression]) -> List[exp.Expression]:
    if node is None:
        return []
    while isinstance(node, exp.Paren):
        node = node.this
    if isinstance(node, exp.And):
        return _conjuncts(node.this) + _conjuncts(node.expression)
    if isinstance(node, exp.Between):  # two bounds
        return [exp.GTE(this=node.this.copy(), expression=node.args['low'].copy()),
                exp.LTE(this=node.this.copy(), expression=node.args['high'].copy())]
    return [node]


def _side_of(node: exp.Expression, left: _Input, right: _Input, resolve) -> Optional[str]:
    """'left' or 'right' where every column of ``node`` is of that side, else None."""
    sides = {'left' if resolve(c) < right.offset else 'right' for c in node.find_all(exp.Column)}
    return sides.pop() if len(sides) == 1 else None


def _time_term(node: exp.Expression, left: _Input, right: _Input, resolve,
               sql: str) -> Optional[Tuple[str, int]]:
    """(side, milliseconds) of ``rowtime [+|- INTERVAL ...]`` of a side, else None."""
    while isinstance(node, exp.Paren):
        node = node.this
    offset = 0
    if isinstance(node, (exp.Add, exp.Sub)) and isinstance(node.expression, exp.Interval):
        offset = interval_millis(node.expression, sql) * (1 if isinstance(node, exp.Add) else -1)
        node = node.this
    if not isinstance(node, exp.Column):
        return None
    index = resolve(node)
    for name, side in (('left', left), ('right', right)):
        rowtime = side.offset + side.names.index(side.view._rowtime) \
            if side.view._rowtime else None
        if index == rowtime:
            return name, offset
    return None


def _classify(conditions, left: _Input, right: _Input, resolve, sql: str,
              time_bounds: bool = True):
    """The equality keys (left expression, right expression), the time bounds (lower,
    upper: milliseconds of left.ts - right.ts, inclusive; with ``time_bounds``) and the
    other conditions."""
    keys, rest = [], []
    lower = upper = None
    for condition in conditions:
        if isinstance(condition, exp.EQ):
            sides = [_side_of(e, left, right, resolve)
                     for e in (condition.this, condition.expression)]
            if sorted(sides, key=str) == ['left', 'right']:
                pair = (condition.this, condition.expression)
                keys.append(pair if sides[0] == 'left' else pair[::-1])
                continue
        if time_bounds and type(condition) in _BOUNDS:
            terms = [_time_term(e, left, right, resolve, sql)
                     for e in (condition.this, condition.expression)]
            if None not in terms and terms[0][0] != terms[1][0]:
                (first, a), (_, b) = terms  # first.ts + a op second.ts + b
                comparison = type(condition) if first == 'left' else _FLIPPED[type(condition)]
                kind, stricter = _BOUNDS[comparison]
                limit = (b - a if first == 'left' else a - b) + stricter
                if kind == 'lower':
                    lower = limit if lower is None else max(lower, limit)
                else:
                    upper = limit if upper is None else min(upper, limit)
                continue
        rest.append(condition)
    left_resolve = column_resolver(left.names, sql)
    right_resolve = column_resolver(right.names, sql)
    compiled = [(compile_expression(_unqualified(a), left_resolve, sql),
                 compile_expression(_unqualified(b), right_resolve, sql)) for a, b in keys]
    return compiled, (lower, upper), rest


def _unqualified(node: exp.Expression) -> exp.Expression:
    return node.transform(lambda n: exp.column(n.name) if isinstance(n, exp.Column) else n)


def _named_items(tree: exp.Select, left: _Input, right: _Input) -> List[exp.Expression]:
    """The select items, ``*`` expanded to both sides' columns, each with the name Flink
    gives it: a column its name, others ``EXPR$<position>``, repeated names numbered from 0
    (``id``, ``id0``)."""
    items = []
    for item in tree.expressions:
        if isinstance(item, exp.Star):
            items += [exp.column(n, table=i.qualifier)
                      for i in (left, right) for n in i.names]
        else:
            items.append(item)
    names, named = set(), []
    for position, item in enumerate(items):
        name = item.alias_or_name if isinstance(item, (exp.Alias, exp.Column)) \
            else 'EXPR$%d' % position
        unique, n = name, 0
        while unique in names:
            unique, n = '%s%d' % (name, n), n + 1
        names.add(unique)
        inner = item.this if isinstance(item, exp.Alias) else item
        named.append(exp.alias_(inner.copy(), unique, quoted=True))
    return named


def _typed_query(t_env, tree, items, left: _Input, right: _Input, resolve, side: str, sql):
    """The table Spark plans for the join (for its columns' types); a column keeps its
    view's type (nullable on the padded side of an outer join) and a rowtime stays a
    time attribute, of either side, as in Flink."""
    planned = tree.copy()
    planned.set('expressions', items)
    table = t_env._spark_query(planned, sql)
    types = [t for i in (left, right) for _, t in i.view._columns]
    rowtimes = {i.offset + i.names.index(i.view._rowtime) for i in (left, right)
                if i.view._rowtime}
    padded = {'LEFT': (right,), 'RIGHT': (left,), 'FULL': (left, right)}.get(side, ())
    columns, times = [], []
    for (name, planned_type), item in zip(table._columns, items):
        inner = item.this
        if isinstance(inner, exp.Column):
            index = resolve(inner)
            declared = types[index]
            nullable = any(p.offset <= index < p.offset + len(p.names) for p in padded)
            planned_type = declared.nullable() if nullable else declared
            if index in rowtimes:
                times.append(name)
        columns.append((name, planned_type))
    table._columns = columns
    table._rowtime = times[0] if times else None
    table._schema_notes = {n: ' *ROWTIME*' for n in times[1:]}
    return table


def _rowtime_index(side: _Input) -> int:
    return side.names.index(side.view._rowtime)


class _JoinKey:
    """The values of a side's equality keys (expressions of its row)."""

    def __init__(self, expressions: List[RowExpression]):
        self._expressions = expressions

    def __call__(self, row: tuple) -> tuple:
        return tuple(e(row) for e in self._expressions)


class IntervalJoin(KeyedCoProcessFunction):
    """Flink's time-interval join of the rows of one key: ``lower <= left.ts - right.ts <=
    upper`` (milliseconds). Each side's rows wait in MapState (rowtime -> [row, joined])
    while rows of the other side may still join them, that is until the watermark has
    passed their rowtime plus the other side's bound; a row arriving after that, behind
    the watermark, joins the rows still kept and is not kept itself. The rows of an outer
    side (``LEFT``, ``RIGHT``, ``FULL``) that never joined come out padded with NULLs when
    they leave, or at once when not kept. Joined rows (left columns, then right columns)
    where ``condition`` holds go through ``calc``."""

    def __init__(self, side: str, bounds: Tuple[int, int], left_width: int,
                 right_width: int, condition: Optional[RowExpression], calc: Calc,
                 left_rowtime: int, right_rowtime: int):
        self._outer = OUTER_SIDES.get(side, (False, False))
        lower, upper = bounds
        self._relative = (-lower, upper)  # how far left rows wait, and right rows
        self._clean_up_interval = (upper - lower) // 2
        self._widths = (left_width, right_width)
        self._condition = condition
        self._calc = calc
        self._rowtimes = (left_rowtime, right_rowtime)
        self._expiration = [0, 0]  # rows of a side at or before it are due to leave

    def open(self, runtime_context):
        self._caches = [runtime_context.get_map_state(MapStateDescriptor(
            name, Types.LONG(), Types.PICKLED_BYTE_ARRAY())) for name in ('left', 'right')]
        # the clean-up timer of the rows of a side, registered by the other side's rows
        self._timers = [runtime_context.get_state(ValueStateDescriptor(
            name, Types.LONG())) for name in ('left-timer', 'right-timer')]

    def process_element1(self, value, ctx):
        return self._process(0, value, ctx)

    def process_element2(self, value, ctx):
        return self._process(1, value, ctx)

    def _joined(self, this: int, row: tuple, other_row: tuple) -> Optional[tuple]:
        joined = row + other_row if this == 0 else other_row + row
        if self._condition is not None and not self._condition.holds(joined):
            return None
        return joined

    def _padded(self, this: int, row: tuple) -> tuple:
        nulls = (None,) * self._widths[1 - this]
        return row + nulls if this == 0 else nulls + row

    def _emit(self, joined: tuple):
        out = self._calc(joined)
        return [] if out is None else [out]

    def _process(self, this: int, row: tuple, ctx):
        other = 1 - this
        time = epoch_millis(row[self._rowtimes[this]])
        operator_time = max(ctx.timer_service().current_watermark(), 0)
        # the other side's rows that may join: left.ts - right.ts within the bounds
        low, high = time - self._relative[other], time + self._relative[this]
        emitted, out = False, []
        null_key = any(k is None for k in ctx.get_current_key())
        if self._expiration[other] < high:
            self._expiration[other] = self._expiration_time(operator_time, other)
            cache = self._caches[other]
            for other_time, entries in list(cache.items()):
                changed = False
                if low <= other_time <= high and not null_key:
                    for entry in entries:
                        joined = self._joined(this, row, entry[0])
                        if joined is not None:
                            emitted = True
                            out += self._emit(joined)
                            changed = changed or not entry[1]
                            entry[1] = True
                if other_time <= self._expiration[other]:
                    out += self._leaving(other, entries)
                    cache.remove(other_time)
                elif changed:
                    cache.put(other_time, entries)
        if operator_time < high:
            cache = self._caches[this]
            cache.put(time, (cache.get(time) or []) + [[row, emitted]])
            if self._timers[other].value() is None:
                self._register_clean_up(ctx, time, this)
        elif not emitted and self._outer[this]:
            out += self._emit(self._padded(this, row))
        return out

    def _expiration_time(self, operator_time: int, side: int) -> int:
        """The rowtime at or before which rows of ``side`` can join no more rows."""
        if operator_time >= MAX_WATERMARK:
            return MAX_WATERMARK
        return operator_time - self._relative[side] - 1

    def _register_clean_up(self, ctx, time: int, side: int):
        """A timer removing rows of ``side`` (kept since ``time``) when they expire."""
        clean_up = time + self._relative[side] + self._clean_up_interval + 1
        ctx.timer_service().register_event_time_timer(clean_up)
        self._timers[1 - side].update(clean_up)

    def _leaving(self, side: int, entries) -> list:
        """The padded rows of an outer side's ``entries`` that never joined."""
        if not self._outer[side]:
            return []
        return [r for row, joined in entries if not joined
                for r in self._emit(self._padded(side, row))]

    def on_timer(self, timestamp: int, ctx):
        out = []
        operator_time = max(ctx.timer_service().current_watermark(), 0)
        for side in (1, 0):  # the right rows' timer is the left-timer state, as in Flink
            if self._timers[1 - side].value() == timestamp:
                self._expiration[side] = self._expiration_time(operator_time, side)
                out += self._remove_expired(ctx, side)
        return out

    def _remove_expired(self, ctx, side: int) -> list:
        cache, out, earliest = self._caches[side], [], None
        for time, entries in list(cache.items()):
            if time <= self._expiration[side]:
                out += self._leaving(side, entries)
                cache.remove(time)
            elif earliest is None or time < earliest:
                earliest = time
        if earliest is not None:
            self._register_clean_up(ctx, earliest, side)
        else:
            self._timers[1 - side].clear()
            cache.clear()
        return out
