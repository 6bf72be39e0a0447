"""Operators that call one user function per record: map, flat_map, filter, process.

Each loops over a whole chunk and passes on one result chunk; a failing call is
reported with the record it failed on.
"""
from itertools import repeat

from engine.errors import OperatorError
from engine.runtime.context import ProcessContext, TimeDomain
from engine.time.timers import EVENT_TIME, PROCESSING_TIME
from engine.time.watermarks import MAX_WATERMARK
from engine.runtime.operators.base import UdfOperator
from engine.runtime.operators.chunks import KeyedChunk
from engine.runtime.operators.side_outputs import SideOutputs, is_side_output


class MapOperator(UdfOperator):
    def __init__(self, function):
        super().__init__(function)
        self._timestamps = None  # the chained timestamps operator that stamps the results

    def open(self):
        super().open()
        self._map = self.function.map

    def stamp_for(self, timestamps) -> None:
        """Stamps the results with the event time the chained ``timestamps`` operator
        (a ``TimestampsOperator``) would give them, in the same loop over the records: the
        task then wires this map's output to ``timestamps.take_stamped``."""
        self._timestamps = timestamps

    def take_values(self, values: list) -> None:
        """Maps the plain values of a source chained before it in a timed job, as elements
        without timestamps (wired by ``engine.runtime.task.StageInstance._fused_input``)."""
        self.process_chunk(zip(repeat(None), values))

    def process_chunk(self, records):
        if self._timestamps is not None and self.cursor.stamped:
            self.output(self._map_and_stamp(records))
            return
        f = self._map
        out = []
        record = None
        try:
            if self.cursor.stamped:  # the common timed case, without a generator
                append = out.append
                for timestamp, record in records:
                    append((timestamp, f(record)))
            else:
                emit = self.cursor.collector(out)
                for record in self.cursor.records(records):
                    emit(f(record))
        except Exception as e:
            raise OperatorError.wrap(self.name, record, e) from None
        self.output(out)

    def _map_and_stamp(self, records) -> list:
        f, out = self._map, []
        append = out.append
        timestamps = self._timestamps
        extract = timestamps.timestamp_assigner.extract_timestamp
        record = value = None
        mapped = False  # whether the failing call, if any, was the assigner's
        try:
            for timestamp, record in records:
                mapped = False
                value = f(record)
                mapped = True
                append((extract(value, timestamp), value))
        except Exception as e:
            if mapped:
                raise OperatorError.wrap(timestamps.name, value, e) from None
            raise OperatorError.wrap(self.name, record, e) from None
        return out


class FilterOperator(UdfOperator):
    forwards_input = True

    def open(self):
        super().open()
        self._filter = self.function.filter

    def process_chunk(self, records):
        keep = self._filter
        out = []
        emit = self.cursor.collector(out)
        record = None
        try:
            for record in self.cursor.records(records):
                if keep(record):
                    emit(record)
        except Exception as e:
            raise OperatorError.wrap(self.name, record, e) from None
        self.output(out)


def _no_slot(key) -> None:
    """No known slot: the key is made current with ``set_current_key``."""
    return None


class _ManyOutputsOperator(UdfOperator):
    """Emits every element of the iterable (or generator) the user function returns."""

    def _call(self, record):
        raise NotImplementedError

    def _collector(self, out: list, stamped: bool = True, cursor=None):
        """Adds an output to ``out``, stamped with the timestamp of ``cursor``'s current
        element (default: the operator's cursor), or unstamped."""
        return (cursor or self.cursor).collector(out, stamped)

    def process_chunk(self, records):
        self._process(self._call, self.cursor, records)

    def _process(self, call, cursor, records, ctx=None):
        """Calls ``call(record)``, or ``call(record, ctx)`` given a context, on each record
        ``cursor`` reads from ``records``."""
        out = []
        emit = self._collector(out, cursor=cursor)
        # (key, (timestamp, value)) pairs, the commonest keyed input, are read here
        # rather than through the cursor's generator, and their keys made current
        # without a call where the backend knows the key's slot.
        keyed_stamped, set_key = cursor.keyed_stamped, cursor.set_key
        if keyed_stamped:
            backend = self.task.keyed_backend
            slots = backend.key_slots(records.keys) if type(records) is KeyedChunk else None
            slot_of = _no_slot if slots is None else slots.get
        record = None
        try:
            for record in records if keyed_stamped else cursor.records(records):
                if keyed_stamped:
                    key, (cursor.timestamp, record) = record
                    slot = slot_of(key)
                    if slot is None:
                        set_key(key)
                    else:
                        backend.current_slot = slot
                results = call(record) if ctx is None else call(record, ctx)
                if results is not None:
                    for result in results:
                        emit(result)
        except Exception as e:
            raise OperatorError.wrap(self.name, record, e) from None
        self._flush(out)

    def _flush(self, out: list):
        self.output(out)


class FlatMapOperator(_ManyOutputsOperator):
    def open(self):
        super().open()
        self._call = self.function.flat_map

    def process_chunk(self, records):
        cursor = self.cursor
        if cursor.set_key is not None:  # keyed: each record's key made current first
            return super().process_chunk(records)
        # (unkeyed, the common case: one loop without the keyed one's tests per record)
        call, out = self._call, []
        append, extend = out.append, out.extend
        record = None
        try:
            if cursor.stamped:
                for timestamp, record in records:
                    results = call(record)
                    if results is not None:
                        for result in results:
                            append((timestamp, result))
            else:
                for record in records:
                    results = call(record)
                    if results is not None:
                        extend(results)
        except Exception as e:
            raise OperatorError.wrap(self.name, record, e) from None
        self._flush(out)


class ProcessOperator(_ManyOutputsOperator):
    """Runs a ProcessFunction or KeyedProcessFunction; outputs what process_element and
    on_timer yield. Subclasses with two inputs bind one call per input
    (``_bind_inputs``); keyed state, timers and side outputs serve both."""

    context_class = ProcessContext  # the ctx of process_element and on_timer

    def open(self):
        super().open()
        self._side = SideOutputs(self.name, self.task.shape, self.side_outputs)
        self._ctx = self.task.process_context(self.cursor, self, self.context_class)
        self._inputs = self._bind_inputs()

    def _bind_inputs(self):
        """Per input: (the function's method that processes a record with a context, that
        context, the cursor that reads the input)."""
        return [(self.function.process_element, self._ctx, self.cursor)]

    def process_chunk(self, records):
        call, ctx, cursor = self._inputs[0]
        self._process(call, cursor, records, ctx)

    def input(self, index: int):
        if index == 0:
            return self.process_chunk
        call, ctx, cursor = self._inputs[index]
        return lambda records: self._process(call, cursor, records, ctx)

    def _collector(self, out: list, stamped: bool = True, cursor=None):
        """Outputs go to ``out``; ``(OutputTag, value)`` results go to that side output
        (converted to the tag's type), as PyFlink's process functions do."""
        emit_main = super()._collector(out, stamped, cursor)
        add_side, cursor = self._side.add, cursor or self.cursor

        def emit(result):
            if type(result) is tuple and is_side_output(result):  # (no call for most results)
                add_side(result[0], result[1], cursor.timestamp if stamped else None)
            else:
                emit_main(result)
        return emit

    def emit_side(self, tag, value, cursor) -> None:
        """Sends ``value`` to side output ``tag``, stamped with the timestamp of
        ``cursor``'s element (``ctx.output(tag, value)``)."""
        self._side.add(tag, value, cursor.timestamp)

    def _flush(self, out: list):
        super()._flush(out)
        self._side.flush()

    def fire_timers(self, watermark: int, processing_time: int, flush_processing: bool):
        """Calls ``on_timer`` for the due timers: event time up to ``watermark``, then
        processing time up to ``processing_time`` (every pending one if
        ``flush_processing``, as BATCH mode does at end of input). Timers registered
        while firing fire in the same pass when due."""
        timers = self.task.timers
        if timers is None or not timers.count():
            return
        backend, cursor, ctx = self.task.keyed_backend, self.cursor, self._ctx
        on_timer = self.function.on_timer
        out = []
        stamped, unstamped = self._collector(out), self._collector(out, stamped=False)
        due = ((EVENT_TIME, watermark, TimeDomain.EVENT_TIME, stamped),
               (PROCESSING_TIME, MAX_WATERMARK if flush_processing else processing_time,
                TimeDomain.PROCESSING_TIME, unstamped))
        for domain, time, ctx.firing_domain, emit in due:
            for key, namespace, timestamp in timers.fire(domain, time):
                backend.set_current_key(key)
                backend.set_current_namespace(namespace)
                cursor.timestamp = timestamp
                try:
                    results = on_timer(timestamp, ctx)
                    for result in () if results is None else results:
                        emit(result)
                except Exception as e:
                    raise OperatorError.wrap(self.name, None, e,
                                             what=f"on_timer({timestamp}) of key {key!r}") from None
        ctx.firing_domain = None
        self._flush(out)
