"""Keyed operators: rolling reduce (and the aggregations built on it)."""
from core.state_spec import StateKind, StateSpec

from engine.errors import OperatorError
from engine.runtime.operators.base import UdfOperator
from engine.runtime.operators.chunks import keyed_by_identity

REDUCE_STATE = "_reduce"
_UNREAD = object()  # a key whose reduced value this batch has not read from state yet


class ReduceOperator(UdfOperator):
    """Keyed rolling reduce: in STREAMING mode emits the new value per record; in BATCH
    mode emits only each key's final value at the end of input.

    Within a batch the reduced values live in a dict by key (``_batch_values``, keyed as
    the state table is: by ``core.codec.key_identity``): state is read once per key and
    batch, and written back once, when the batch's records are in (``fire_timers``). A
    batch that fails drops the operator with its dict (``engine.runtime.task.run_task``),
    so nothing of it reaches state."""

    def __init__(self, function, uses_state: bool = True, pickled: bool = True):
        super().__init__(function)
        self._sets_key = uses_state  # whether the function may read keyed state
        # The reduced values' state: pickled only if the stream's type allows it.
        self._spec = StateSpec(REDUCE_STATE, StateKind.VALUE, pickled=pickled)

    def open(self):
        super().open()
        self._reduce = self.function.reduce
        self._backend = self.task.keyed_backend
        self._table, self._dirty = self._backend.value_table(self._spec)
        self._emit_each = not self.task.batch_mode
        self._batch_values = {}

    def process_chunk(self, pairs):
        """Reduces a chunk of (key, record) pairs in the batch's dict."""
        values, reduce, cursor = self._batch_values, self._reduce, self.cursor
        out = []
        emit = cursor.collector(out) if self._emit_each else None
        stamped = cursor.keyed_stamped
        set_key = self._backend.set_current_key if self._sets_key else None
        record = None
        try:
            for key, record in keyed_by_identity(pairs):  # (no generator: the cost is here)
                if stamped:
                    cursor.timestamp, record = record
                if set_key is not None:
                    set_key(key)
                accumulated = values.get(key, _UNREAD)
                if accumulated is _UNREAD:
                    accumulated = self._stored(key)
                accumulated = record if accumulated is None else reduce(accumulated, record)
                values[key] = accumulated  # None: the state of the key is cleared
                if emit is not None:
                    emit(accumulated)
        except Exception as e:
            raise OperatorError.wrap(self.name, record, e) from None
        if out:
            self.output(out)

    def _stored(self, key):
        self._backend.set_current_key(key)
        return self._table.get(self._backend.current_slot)

    def fire_timers(self, watermark: int, processing_time: int, flush_processing: bool):
        """Writes the batch's reduced values to state (this operator has no timers)."""
        backend, table, dirty = self._backend, self._table, self._dirty
        for key, accumulated in self._batch_values.items():
            backend.set_current_key(key)
            slot = backend.current_slot
            if accumulated is None:
                table.pop(slot, None)
            else:
                table[slot] = accumulated
            dirty.add(slot)
        self._batch_values.clear()

    def end_input(self):
        if not self._emit_each:
            self.cursor.timestamp = None
            out = []
            emit = self.cursor.collector(out)
            for name, _key, _namespace, value in self._backend.entries():
                if name == REDUCE_STATE:
                    emit(value)
            self.output(out)
