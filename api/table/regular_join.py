"""Regular joins in STREAMING mode (``SELECT ... FROM a [LEFT|RIGHT|FULL] JOIN b ON a.k = b.k``,
and ``Table.join`` / ``left_outer_join`` ...) of two append-only streams, as Flink's
StreamingJoinOperator runs them: both streams keyed by the equality keys and connected;
each side's rows of a key kept in MapState (row -> how many times it came, and with how
many rows of the other side it joined), for ever; each arriving row joined with the other
side's rows where the other conditions hold. An inner join appends (+I); a row of an outer
side that joins nothing comes out padded with NULLs (+I), retracted (-D) when a row of the
other side first joins it."""
from typing import Optional, Tuple

from api.common.typeinfo import Types
from api.common.types import Row, RowKind
from api.datastream.functions import KeyedCoProcessFunction
from api.datastream.state import MapStateDescriptor
from .changelog import Calc
from .row_expressions import RowExpression

__all__ = ['RegularJoin', 'JoinChangelog', 'OUTER_SIDES']

# the side of an outer join -> whether its (left, right) sides are outer
OUTER_SIDES = {'LEFT': (True, False), 'RIGHT': (False, True), 'FULL': (True, True)}


class RegularJoin(KeyedCoProcessFunction):
    """The join of the rows of one key: joined rows (left columns, then right columns)
    where ``condition`` holds, through ``calc``; ``outer`` says which sides are outer
    (left, right). An inner join emits the rows (tuples), an outer join Rows of their
    kinds. A row with a NULL key joins nothing, as SQL's equality."""

    def __init__(self, condition: Optional[RowExpression], calc: Calc,
                 outer: Tuple[bool, bool], widths: Tuple[int, int]):
        self._condition = condition
        self._calc = calc
        self._outer = outer
        self._widths = widths

    def open(self, runtime_context):
        self._rows = [runtime_context.get_map_state(MapStateDescriptor(
            name, Types.PICKLED_BYTE_ARRAY(), Types.TUPLE([Types.LONG(), Types.LONG()])))
            for name in ('left', 'right')]

    def process_element1(self, value, ctx):
        return self._process(0, value, ctx)

    def process_element2(self, value, ctx):
        return self._process(1, value, ctx)

    def _process(self, this: int, row: tuple, ctx) -> list:
        other = 1 - this
        rows, others = self._rows[this], self._rows[other]
        matches = [] if any(k is None for k in ctx.get_current_key()) else [
            (other_row, count, joins) for other_row, (count, joins) in others.items()
            if self._holds(self._joined(this, row, other_row))]
        out = []
        if self._outer[other]:  # the other side's padded rows that now join: retracted
            for other_row, count, joins in matches:
                if joins == 0:
                    out += [(RowKind.DELETE, self._padded(other, other_row))] * count
                others.put(other_row, (count, joins + 1))
        out += [(RowKind.INSERT, self._joined(this, row, other_row))
                for other_row, count, _ in matches for _ in range(count)]
        if not matches and self._outer[this]:
            out.append((RowKind.INSERT, self._padded(this, row)))
        seen, _ = rows.get(row) or (0, 0)
        rows.put(row, (seen + 1, sum(count for _, count, _ in matches)))
        return [r for r in (self._result(kind, joined) for kind, joined in out)
                if r is not None]

    def _holds(self, joined: tuple) -> bool:
        return self._condition is None or self._condition.holds(joined)

    @staticmethod
    def _joined(this: int, row: tuple, other_row: tuple) -> tuple:
        return row + other_row if this == 0 else other_row + row

    def _padded(self, side: int, row: tuple) -> tuple:
        nulls = (None,) * self._widths[1 - side]
        return row + nulls if side == 0 else nulls + row

    def _result(self, kind: RowKind, joined: tuple):
        values = self._calc(joined)
        if values is None or not any(self._outer):
            return values
        return Row.of_kind(kind, *values)


class JoinChangelog:
    """The plan of an outer regular join: its DataStream of Rows of their kinds (+I, -D),
    and the plan node Flink's messages name."""
    updating = True  # its changelog retracts rows (-D)

    def __init__(self, rows, node: str):
        self._rows = rows
        self._node = node

    def node(self) -> str:
        return self._node

    def changelog_stream(self, row_type, uid: str):
        """The Rows as ``row_type``, of their kinds."""
        return self._rows.map(_same_row, row_type).uid(uid)


def _same_row(row: Row) -> Row:
    return row
