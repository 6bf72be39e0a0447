"""Streaming GROUP BY aggregates as Flink's changelog: in STREAMING mode a grouped table of
a DataStream is a DataStream plan (``key_by`` the group keys, then a keyed process function
holding each group's accumulators in keyed state) emitting, per input record, the group's
first result as ``+I`` and each later change as ``-U`` (the old row) then ``+U`` (the new);
a record that leaves the group's result unchanged emits nothing, as Flink's GroupAggregate.
Its input may itself be a changelog (of an upsert source, or of another GROUP BY): ``-U``
and ``-D`` rows retract from their group, and a group left without rows is deleted
(``-D``); a filter and projection of such a changelog is a :class:`ChangelogCalc`."""
from dataclasses import dataclass, replace
from typing import Callable, List, Optional, Sequence, Tuple

from api.common.typeinfo import Types, TypeInformation
from api.common.types import Row, RowKind
from api.datastream.functions import KeyedProcessFunction, MapFunction
from api.datastream.state import MapStateDescriptor, ValueStateDescriptor
from engine.graph import reachable
from .data_frames import Columns
from .expressions import AGGREGATES, Expression, unaliased
from .row_expressions import RowExpression
from .types import DataType, type_info_of

__all__ = ['RowOf', 'StreamRows', 'Aggregate', 'GroupAggregate', 'group_aggregate',
           'on_changelog', 'ONE_ROW_AGGREGATES', 'one_row_groups', 'Calc', 'ChangelogCalc',
           'changelog_through', 'AppendingQuery', 'RetractMessages', 'accumulate', 'retract',
           'aggregate_result', 'check_bounded', 'is_bounded']

_INTEGRAL = ('TINYINT', 'SMALLINT', 'INT', 'BIGINT')


@dataclass(frozen=True)
class RowOf:
    """A table row of a stream's record: the fields at ``picks`` (``atomic``: the record
    is the one field), then the ``computed`` columns of a Schema (RowExpressions of the
    fields picked)."""
    picks: Tuple[int, ...]
    atomic: bool
    computed: tuple = ()

    def __call__(self, record) -> tuple:
        values = (record,) if self.atomic else tuple(record)
        row = tuple(values[i] for i in self.picks)
        return row + tuple(c(row) for c in self.computed)


@dataclass(frozen=True)
class Calc:
    """A filter and projection of rows, as Flink's Calc node: the row of ``items``
    (RowExpressions) of each row where ``condition`` holds (every row without one)."""
    condition: object
    items: tuple

    def __call__(self, row: tuple) -> Optional[tuple]:
        if self.condition is not None and not self.condition.holds(row):
            return None
        return self.project(row)

    def project(self, row: tuple) -> tuple:
        """The items of ``row``, whatever the condition."""
        return tuple(item(row) for item in self.items)

    def columns(self) -> Optional[Tuple[int, ...]]:
        """The indices of the columns it picks, where it only picks columns."""
        if self.condition is not None:
            return None
        indices = tuple(item.column() for item in self.items)
        return None if None in indices else indices

    def referenced(self) -> frozenset:
        """The indices of the columns the condition and items read."""
        expressions = self.items + ((self.condition,) if self.condition is not None else ())
        return frozenset().union(*(e.referenced() for e in expressions))

    def after(self, first: 'Calc') -> 'Calc':
        """This Calc of the rows of ``first``, as one Calc (as Flink merges Calcs)."""
        condition = None if self.condition is None else self.condition.of(first.items)
        if first.condition is not None:
            condition = first.condition if condition is None else \
                first.condition.and_(condition)
        return Calc(condition, tuple(item.of(first.items) for item in self.items))

    def input_for(self, plan) -> tuple:
        """(the changelog plan this Calc reads, what remains of it) over the changelog
        ``plan``: a plan that takes a Calc in (an upsert source's normalization, as Flink
        pushes a Calc into ChangelogNormalize) does so with ``taking(calc)``."""
        taking = getattr(plan, 'taking', None)
        return (plan, self) if taking is None else taking(self)


@dataclass(frozen=True)
class StreamRows:
    """Where a table of a DataStream gets its rows: the stream, each record's row, and
    the names of the row's columns."""
    data_stream: object
    row_of: RowOf
    names: Sequence[str] = ()

    def rows(self, calc: Optional['Calc'] = None):
        """The DataStream of the table's rows (tuples), through ``calc``."""
        return self.data_stream.flat_map(_Rows(self.row_of, calc), Types.PICKLED_BYTE_ARRAY())

    def through(self, calc: Calc, names: Sequence[str]) -> 'StreamRows':
        """The rows of the table ``calc`` filters and projects from this one (Flink's
        Calc): its columns picked, or a DataStream of tuples, defined apart from the
        environment's next job until something reads it."""
        columns = calc.columns()
        if columns is not None and not self.row_of.computed:
            return StreamRows(self.data_stream, RowOf(
                tuple(self.row_of.picks[i] for i in columns), self.row_of.atomic), list(names))
        streams = []
        self.data_stream._env._apart(lambda: streams.append(self.rows(calc)))
        return StreamRows(streams[0], RowOf(tuple(range(len(names))), False), list(names))

    def bounded(self) -> bool:
        """Whether every source the rows are read from ends."""
        return is_bounded(self.data_stream)


def _unbounded_sources(data_stream) -> List[str]:
    """The names of the sources of ``data_stream`` that do not end."""
    return [t.name for t in reachable([data_stream._transformation])
            if t.kind == "source" and not t.source.bounded]


def is_bounded(data_stream) -> bool:
    """Whether every source ``data_stream`` reads ends."""
    return not _unbounded_sources(data_stream)


def check_bounded(data_stream, method: str, why: str) -> None:
    """Fails naming the sources of ``data_stream`` that do not end, where ``method``
    needs their end (``why``)."""
    unbounded = _unbounded_sources(data_stream)
    if unbounded:
        raise ValueError(
            f"{method}(): the stream reads the unbounded source(s) {unbounded}; {why}. Bound "
            "the source (e.g. KafkaSource ... set_bounded(...), a DataGeneratorSource with a "
            "count, a FileSource without monitor_continuously), or take the rows as they "
            "come: INSERT INTO a sink table, to_data_stream, DataStream operators.")


class AppendingQuery:
    """The plan of an appending streaming query: its DataStream of rows (tuples), or the
    StreamRows of a table of a stream."""
    updating = False

    def __init__(self, rows):
        self._rows = rows

    def changelog_stream(self, row_type, uid: str):
        """The rows as Rows of ``row_type``, each an insert (+I)."""
        rows = self._rows.rows() if isinstance(self._rows, StreamRows) else self._rows
        return rows.map(_as_row, row_type).uid(uid)


def _as_row(values: tuple) -> Row:
    return Row(*values)


class _Rows:
    """The table row of a record, through a Calc (none where it filters the row out)."""

    def __init__(self, row_of: RowOf, calc: Optional[Calc]):
        self._row_of = row_of
        self._calc = calc

    def __call__(self, record):
        row = self._row_of(record)
        row = row if self._calc is None else self._calc(row)
        if row is not None:
            yield row


@dataclass(frozen=True)
class ChangelogCalc:
    """A filter and projection of a changelog (Flink's Calc over an updating input): each
    change through ``calc`` on its own, of its kind (a -U may pass without its +U)."""
    source: object  # the plan of the input's changelog
    calc: Calc
    updating = True

    def node(self) -> str:
        """The node that updates, as Flink names it in its messages."""
        return self.source.node()

    def taking(self, calc: Calc) -> tuple:
        """(the changelog plan ``calc`` of this changelog reads, what remains of it): one
        Calc of this one's input."""
        return calc.after(self.calc).input_for(self.source)

    def changelog_stream(self, row_type: TypeInformation, uid: str):
        """The DataStream of the changelog: Rows of ``row_type`` with their row kinds."""
        return self.source.changelog_stream(Types.PICKLED_BYTE_ARRAY(), uid + '-input') \
            .flat_map(_ChangedRows(self.calc), row_type)


def changelog_through(plan, calc: Calc) -> ChangelogCalc:
    """The changelog of ``calc`` over the changelog ``plan``."""
    return ChangelogCalc(*calc.input_for(plan))


@dataclass(frozen=True)
class Aggregate:
    """One aggregate call: ``function`` of the column at ``field`` (None: ``COUNT(*)``)."""
    function: str
    field: Optional[int]
    distinct: bool
    integral: bool  # of integers: AVG truncates, as Flink's

    def describe(self, names: List[str]) -> str:
        argument = '*' if self.field is None else names[self.field]
        return '%s(%s%s)' % (self.function.upper(), 'DISTINCT ' if self.distinct else '',
                             argument)


@dataclass(frozen=True)
class GroupAggregate:
    """A streaming GROUP BY: its input stream and rows (or the changelog plan ``source``
    whose -U/-D rows retract), key columns and aggregates, and the output's items
    (``('key', i)`` or ``('aggregate', j)``) in order."""
    data_stream: object
    row_of: Callable  # a record's row: a RowOf, or of a changelog's Row its fields
    input_names: Tuple[str, ...]
    input_types: Tuple[DataType, ...]
    keys: Tuple[int, ...]
    aggregates: Tuple[Aggregate, ...]
    items: Tuple[Tuple[str, int], ...]
    pre: Optional[Calc] = None  # WHERE, and the keys and aggregates' arguments of a row
    post: Optional[Calc] = None  # HAVING and select items over the keys and aggregates
    source: object = None  # the plan of the input's changelog (None: data_stream appends)
    updating = True  # its changelog updates rows (-U/+U)

    def node(self) -> str:
        """The plan node, as Flink names it in its messages."""
        names = list(self.input_names)
        selected = [names[k] for k in self.keys] + [
            '%s AS EXPR$%d' % (a.describe(names), i) for i, a in enumerate(self.aggregates)]
        return 'GroupAggregate(groupBy=[%s], select=[%s])' % (
            ', '.join(names[k] for k in self.keys), ', '.join(selected))

    def typed(self, columns: Columns) -> Columns:
        """The result ``columns`` with Flink's nullability: an aggregate of a NOT NULL
        column is NOT NULL (a group has a row)."""
        typed = []
        for (name, data_type), (kind, i) in zip(columns, self.items):
            field = self.aggregates[i].field if kind == 'aggregate' else None
            if field is not None and not self.input_types[field]._nullable:
                data_type = data_type.not_null()
            typed.append((name, data_type))
        return typed

    def changelog_stream(self, row_type: TypeInformation, uid: str):
        """The DataStream of the changelog: Rows of ``row_type`` with their row kinds; its
        operator's state is stored under ``uid``."""
        key_types = [type_info_of(self.input_types[k]) for k in self.keys]
        shipped = replace(self, data_stream=None, source=None)  # what the tasks need
        retracting = self.source is not None
        stream = self.data_stream if not retracting else \
            self.source.changelog_stream(Types.PICKLED_BYTE_ARRAY(), uid + '-input')
        # keyed right at the input, so each group's records keep their order
        keyed = stream.key_by(_KeyOf(shipped), key_types[0] if len(self.keys) == 1
                              else Types.TUPLE(key_types))
        if self.post is None:
            return keyed.process(_GroupAggregateFunction(shipped, retracting),
                                 row_type).uid(uid)
        aggregated = keyed.process(_GroupAggregateFunction(shipped, retracting),
                                   Types.PICKLED_BYTE_ARRAY()).uid(uid)
        return aggregated.flat_map(_ChangedRows(self.post), row_type)


# aggregates whose result of one row is its value (Flink's FlinkAggregateRemoveRule)
ONE_ROW_AGGREGATES = ('sum', 'min', 'max')


def one_row_groups(source, key_names) -> bool:
    """Whether each group of the columns ``key_names`` of the changelog plan ``source`` has
    one row (they include its unique key): Flink's planner then removes the aggregate."""
    unique_key = getattr(source, 'unique_key', None)
    return unique_key is not None and set(unique_key) <= set(key_names)


def group_aggregate(rows: Optional[StreamRows], columns: Columns, keys: List[Expression],
                    expressions: List[Expression], source=None):
    """The streaming plan of ``group_by(keys).select(expressions)`` over a table of
    ``columns`` (of ``rows``, or of the changelog plan ``source``: a ChangelogCalc where
    each group has one row), or None when it is not columns grouped and aggregated
    (COUNT, SUM, MIN, MAX, AVG of columns, and COUNT(*))."""
    names = [n for n, _ in columns]
    key_fields = [_field(k, names) for k in keys]
    if (rows is None and source is None) or None in key_fields:
        return None
    aggregates, items = [], []
    for expression in expressions:
        call = unaliased(expression)
        field = _field(call, names)
        if field is not None and field in key_fields:
            items.append(('key', key_fields.index(field)))
            continue
        distinct = 'distinct' in call._args[1:]  # how .distinct marks an aggregate
        if call._name not in AGGREGATES:
            return None
        argument = _field(call._args[0], names) if call._args else None
        if argument is None and not (call._name == 'count' and _is_star(call)):
            return None
        data_type = columns[argument][1] if argument is not None else None
        if call._name in ('sum', 'avg') and data_type._root not in _INTEGRAL + ('FLOAT',
                                                                               'DOUBLE'):
            return None
        items.append(('aggregate', len(aggregates)))
        aggregates.append(Aggregate(call._name, argument, distinct,
                                    data_type is not None and data_type._root in _INTEGRAL))
    if source is not None and one_row_groups(source, [names[k] for k in key_fields]) and all(
            a.function in ONE_ROW_AGGREGATES for a in aggregates):  # the row's values
        return changelog_through(source, Calc(None, tuple(RowExpression((
            'col', key_fields[i] if kind == 'key' else aggregates[i].field))
            for kind, i in items)))
    plan = GroupAggregate(None, None, tuple(names), tuple(t for _, t in columns),
                          tuple(key_fields), tuple(aggregates), tuple(items))
    if source is None:
        return replace(plan, data_stream=rows.data_stream, row_of=rows.row_of)
    # all the columns, as Flink's planner reads them for an aggregate without a Calc
    return on_changelog(plan, source, Calc(None, tuple(
        RowExpression(('col', i)) for i in range(len(names)))))


def on_changelog(plan: GroupAggregate, source, pre: Calc) -> GroupAggregate:
    """``plan`` over the changelog plan ``source``, its rows through ``pre``."""
    source, pre = pre.input_for(source)
    return replace(plan, row_of=_fields, source=source, pre=pre)


def _field(expression: Expression, names: List[str]) -> Optional[int]:
    if expression._name == 'field' and expression._args[0] in names:
        return names.index(expression._args[0])
    return None


def _is_star(call: Expression) -> bool:
    """``COUNT(*)``: of ``col('*')`` or of a literal."""
    return not call._args or call._args[0]._name == 'literal' or call._args[0]._args == ('*',)


def _fields(row) -> tuple:
    """The fields of a changelog's Row."""
    return tuple(row)


class _KeyOf:
    """The group key of a record: one column's value, or a tuple of several."""

    def __init__(self, plan: GroupAggregate):
        self._plan = plan

    def __call__(self, record):
        row, keys = self._plan.row_of(record), self._plan.keys
        if self._plan.pre is not None:
            row = self._plan.pre.project(row)
        return row[keys[0]] if len(keys) == 1 else tuple(row[k] for k in keys)


class _GroupAggregateFunction(KeyedProcessFunction):
    """Holds a group's accumulators in keyed state: the group's number of rows, per
    aggregate a ValueState of (value, number of values) once it has a value, and a
    MapState counting the values a DISTINCT aggregate has seen. Of a ``retracting``
    input (a changelog) a -U or -D row retracts from its group; MIN and MAX then keep a
    MapState counting the group's values (as Flink's MinWithRetractAggFunction), and a
    group whose rows are all retracted is deleted (-D)."""

    def __init__(self, plan: GroupAggregate, retracting: bool = False):
        self._plan = plan
        self._retracting = retracting

    def open(self, runtime_context):
        plan = self._plan
        self._rows = runtime_context.get_state(ValueStateDescriptor('rows', Types.LONG()))
        self._accumulators, self._values = [], []
        for i, aggregate in enumerate(plan.aggregates):
            value_type = Types.LONG() if aggregate.function == 'count' else \
                _accumulator_type(plan.input_types[aggregate.field])
            self._accumulators.append(runtime_context.get_state(ValueStateDescriptor(
                'agg%d' % i, Types.TUPLE([value_type, Types.LONG()]))))
            name = 'distinct%d' % i if aggregate.distinct else 'values%d' % i
            counted = aggregate.distinct or (
                self._retracting and aggregate.function in ('min', 'max'))
            self._values.append(runtime_context.get_map_state(MapStateDescriptor(
                name, type_info_of(plan.input_types[aggregate.field]), Types.LONG()))
                if counted else None)

    def process_element(self, value, ctx):
        plan = self._plan
        retract = self._retracting and value.get_row_kind() in (RowKind.UPDATE_BEFORE,
                                                                RowKind.DELETE)
        value = plan.row_of(value)
        if plan.pre is not None:
            value = plan.pre(value)
            if value is None:
                return
        rows = self._rows.value()
        if rows is None and retract:  # of a group that has no rows: ignored, as in Flink
            return
        states = [s.value() for s in self._accumulators]
        before = self._result(value, states)
        for i, aggregate in enumerate(plan.aggregates):
            x = 1 if aggregate.field is None else value[aggregate.field]
            if x is None:
                continue
            state = self._retract(i, states[i], x) if retract else self._add(i, states[i], x)
            if state != states[i]:
                states[i] = state
                if state is None:
                    self._accumulators[i].clear()
                else:
                    self._accumulators[i].update(state)
        count = (rows or 0) + (-1 if retract else 1)
        if count == 0:
            self._rows.clear()
            before.set_row_kind(RowKind.DELETE)
            yield before
            return
        self._rows.update(count)
        after = self._result(value, states)
        if rows is None:
            yield after
        elif after[:] != before[:]:
            before.set_row_kind(RowKind.UPDATE_BEFORE)
            after.set_row_kind(RowKind.UPDATE_AFTER)
            yield before
            yield after

    def _add(self, i: int, state: Optional[tuple], x) -> Optional[tuple]:
        aggregate, values = self._plan.aggregates[i], self._values[i]
        if values is not None:
            seen = values.get(x) or 0
            values.put(x, seen + 1)
            if seen and aggregate.distinct:
                return state
        return accumulate(aggregate.function, state, x)

    def _retract(self, i: int, state: Optional[tuple], x) -> Optional[tuple]:
        aggregate, values = self._plan.aggregates[i], self._values[i]
        if values is not None:
            left = (values.get(x) or 0) - 1
            if left > 0:
                values.put(x, left)
                if aggregate.distinct:
                    return state
            else:
                values.remove(x)
        return retract(aggregate.function, state, x, values)

    def _result(self, row: tuple, states: list) -> Row:
        plan = self._plan
        values = [row[plan.keys[i]] if kind == 'key' else
                  aggregate_result(plan.aggregates[i], states[i]) for kind, i in plan.items]
        return Row(*values)


def _accumulator_type(data_type: DataType) -> TypeInformation:
    if data_type._root in _INTEGRAL:
        return Types.LONG()
    if data_type._root in ('FLOAT', 'DOUBLE'):
        return Types.DOUBLE()
    return type_info_of(data_type)


def accumulate(function: str, accumulator: Optional[tuple], x) -> tuple:
    """(value, number of values) after ``x``: the sum, the extreme, or for COUNT the number."""
    if accumulator is None:
        return (1 if function == 'count' else x), 1
    value, n = accumulator
    if function in ('sum', 'avg'):
        value = value + x
    elif function == 'min':
        value = min(value, x)
    elif function == 'max':
        value = max(value, x)
    else:
        value = n + 1
    return value, n + 1


def retract(function: str, accumulator: Optional[tuple], x, values=None) -> Optional[tuple]:
    """(value, number of values) without ``x`` (None when none is left): the sum less it,
    or for MIN and MAX the extreme of ``values`` (a MapState of the values left) once no
    ``x`` is left."""
    if accumulator is None or accumulator[1] == 1:
        return None
    value, n = accumulator
    if function in ('sum', 'avg'):
        value = value - x
    elif function == 'count':
        value = n - 1
    elif x == value and not values.contains(x):
        value = (min if function == 'min' else max)(values.keys())
    return value, n - 1


def aggregate_result(aggregate: Aggregate, accumulator: Optional[tuple]):
    if accumulator is None:
        return 0 if aggregate.function == 'count' else None
    value, n = accumulator
    if aggregate.function != 'avg':
        return value
    if aggregate.integral:  # Java's integer division: toward zero
        quotient = abs(value) // n
        return quotient if value >= 0 else -quotient
    return value / n


class _ChangedRows:
    """A changelog row through a Calc, of the same kind: Flink filters and projects each
    change on its own (a HAVING may pass a +U whose -U it drops)."""

    def __init__(self, calc: Calc):
        self._calc = calc

    def __call__(self, change: Row):
        row = self._calc(tuple(change))
        if row is not None:
            yield Row.of_kind(change.get_row_kind(), *row)


class RetractMessages(MapFunction):
    """``(True, record)`` for +I/+U, ``(False, record)`` for -U/-D (``to_retract_stream``)."""

    def __init__(self, record_of):
        self._record_of = record_of

    def map(self, value: Row):
        return (value.get_row_kind() in (RowKind.INSERT, RowKind.UPDATE_AFTER),
                self._record_of(value))
