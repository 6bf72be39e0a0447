"""Keyed operators: rolling reduce (and the aggregations built on it)."""
from statebackends.spec import StateKind, StateSpec

from ..errors import OperatorError
from .base import UdfOperator

REDUCE_STATE = "_reduce"
_REDUCED = StateSpec(REDUCE_STATE, StateKind.VALUE)


class ReduceOperator(UdfOperator):
    """Keyed rolling reduce: in STREAMING mode emits the new value per record; in BATCH
    mode emits only each key's final value at the end of input."""

    def open(self):
        super().open()
        self._reduce = self.function.reduce
        self._backend = self.task.keyed_backend
        self._table, self._dirty = self._backend.value_table(_REDUCED)
        self._emit_each = not self.task.batch_mode

    def process_chunk(self, pairs):
        """Reduces a chunk of (key, record) pairs straight on the state table."""
        table, dirty, reduce, backend = self._table, self._dirty, self._reduce, self._backend
        cursor = self.cursor
        out = []
        emit = cursor.collector(out) if self._emit_each else None
        set_key, stamped = backend.set_current_key, cursor.keyed_stamped
        for key, record in pairs:  # (no generator: this loop is the operator's cost)
            if stamped:
                cursor.timestamp, record = record
            set_key(key)
            slot = backend.current_slot
            accumulated = table.get(slot)
            if accumulated is None:
                accumulated = record
            else:
                try:
                    accumulated = reduce(accumulated, record)
                except Exception as e:
                    raise OperatorError.wrap(self.name, record, e) from None
            if accumulated is None:
                table.pop(slot, None)
            else:
                table[slot] = accumulated
            dirty.add(slot)
            if emit is not None:
                emit(accumulated)
        if out:
            self.output(out)

    def end_input(self):
        if not self._emit_each:
            self.cursor.timestamp = None
            out = []
            emit = self.cursor.collector(out)
            for name, _key, _namespace, value in self._backend.entries():
                if name == REDUCE_STATE:
                    emit(value)
            self.output(out)
