"""Regular inner joins in STREAMING mode (``SELECT ... FROM a JOIN b ON a.k = b.k``, and
``Table.join``) of two append-only streams, as Flink's StreamingJoinOperator runs them:
both streams keyed by the equality keys and connected; each side's rows of a key kept in
MapState (row -> how many times it came), for ever; each arriving row joined with the
other side's rows where the other conditions hold. The joined rows append (+I)."""
from typing import Optional

from api.common.typeinfo import Types
from api.datastream.functions import KeyedCoProcessFunction
from api.datastream.state import MapStateDescriptor
from .changelog import Calc
from .row_expressions import RowExpression

__all__ = ['RegularJoin']


class RegularJoin(KeyedCoProcessFunction):
    """The inner join of the rows of one key: joined rows (left columns, then right
    columns) where ``condition`` holds, through ``calc``. A row with a NULL key joins
    nothing, as SQL's equality."""

    def __init__(self, condition: Optional[RowExpression], calc: Calc):
        self._condition = condition
        self._calc = calc

    def open(self, runtime_context):
        self._rows = [runtime_context.get_map_state(MapStateDescriptor(
            name, Types.PICKLED_BYTE_ARRAY(), Types.LONG())) for name in ('left', 'right')]

    def process_element1(self, value, ctx):
        return self._process(0, value, ctx)

    def process_element2(self, value, ctx):
        return self._process(1, value, ctx)

    def _process(self, this: int, row: tuple, ctx) -> list:
        if any(k is None for k in ctx.get_current_key()):
            return []
        rows = self._rows[this]
        rows.put(row, (rows.get(row) or 0) + 1)
        out = []
        for other_row, count in self._rows[1 - this].items():
            joined = row + other_row if this == 0 else other_row + row
            if self._condition is None or self._condition.holds(joined):
                result = self._calc(joined)
                if result is not None:
                    out += [result] * count
        return out
