"""Time windows with the built-in triggers and incremental contents, a batch at a time.

A micro-batch engine sees all of a batch's records before time advances (the
watermark and the processing time are fixed while a batch's records go in). So with
a tumbling or sliding assigner, its default trigger (EventTimeTrigger,
ProcessingTimeTrigger) and ``reduce``/``aggregate`` contents, the window operator
does not need to touch state and timers per element:

- an element is folded into a batch-local dict entry per (key, window), read from
  state once per batch; the user's reduce/add run per element and window, in the
  element order, exactly as on the general path (no re-association: slices or panes
  combined later would change the results of a non-associative function, e.g. float
  sums; Flink does not use panes here either);
- after the batch, each entry is written back once and its timers (the trigger's at
  ``max_timestamp()``, the cleanup one) registered once; a window that is new in this
  batch and whose timers are already due fires and is cleaned up from memory, without
  entering state or the timer service;
- due windows fire in the timer service's order (timestamp, key, window), so the
  output is the general path's, element for element.

An element whose window the watermark has already passed (late, within the allowed
lateness) takes the general path for that window: its trigger fires at once.
Results are those of ``WindowOperator`` (``tests/engine/runtime/operators/
test_window_batch.py`` compares both on random inputs).
"""
from core.codec import user_key
from engine.errors import OperatorError
from engine.time.timers import EVENT_TIME, PROCESSING_TIME, order_token
from engine.time.triggers import EventTimeTrigger, ProcessingTimeTrigger
from engine.time.watermarks import MAX_WATERMARK, MIN_WATERMARK
from engine.time.windows import (MIN_LONG, SlidingEventTimeWindows, SlidingProcessingTimeWindows,
                            TimeWindow, TumblingEventTimeWindows,
                            TumblingProcessingTimeWindows)
from engine.runtime.operators.chunks import keyed_by_identity
from engine.runtime.operators.window import WindowOperator

_ABSENT = object()
_DEFAULT_TRIGGERS = {
    TumblingEventTimeWindows: EventTimeTrigger,
    SlidingEventTimeWindows: EventTimeTrigger,
    TumblingProcessingTimeWindows: ProcessingTimeTrigger,
    SlidingProcessingTimeWindows: ProcessingTimeTrigger,
}


def window_operator(assigner, trigger, contents, function, allowed_lateness: int = 0,
                    late_tag=None) -> WindowOperator:
    """The operator of a keyed window: ``BatchWindowOperator`` for a built-in tumbling or
    sliding assigner with its default trigger and reduced or aggregated contents,
    otherwise the general ``WindowOperator`` (custom triggers, ``process``/``apply``
    over buffered elements, sessions, count and global windows)."""
    batched = (_DEFAULT_TRIGGERS.get(type(assigner)) is type(trigger)
               and contents[0] in ("reducing", "aggregating"))
    cls = BatchWindowOperator if batched else WindowOperator
    return cls(assigner, trigger, contents, function, allowed_lateness, late_tag)


class BatchWindowOperator(WindowOperator):
    """The window operator that folds a batch's elements per (key, window) in memory."""

    def open(self):
        super().open()
        assigner = self.assigner
        self._size = assigner._size
        self._slide = getattr(assigner, "_slide", assigner._size)
        self._offset = assigner._offset
        self._table, self._dirty = self.backend.value_table(self.contents_spec)
        function = self.contents_function
        if self.contents_kind == "reducing":
            self._reduce = getattr(function, "reduce", function)
            self._create_accumulator = self._accumulate = self._result = None
        else:
            self._reduce = None
            self._create_accumulator = function.create_accumulator
            self._accumulate, self._result = function.add, function.get_result
        self._batch = {}  # key identity -> {window start: [window, contents]}
        self._windows = {}  # window start -> the batch's TimeWindow, one for all keys
        self._domain = EVENT_TIME if self.event_time else PROCESSING_TIME

    # --- elements -----------------------------------------------------------------
    def _add_chunk(self, pairs) -> list:
        """Folds each element into its windows' batch entries, as the state's ``add``
        would: reduce(contents, value), or add(value, accumulator) (None empties);
        returns the late elements."""
        late = []
        batch, table, shared_windows = self._batch, self._table, self._windows
        reduce, create, add = self._reduce, self._create_accumulator, self._accumulate
        size, slide, offset = self._size, self._slide, self._offset
        event_time, timed = self.event_time, self.task.shape.timed
        watermark = self.task.clock.current_watermark if event_time else MIN_WATERMARK
        passed = watermark - size + 1  # the watermark passed the windows starting up to here
        lateness = self.allowed_lateness
        now = self.task.clock.processing_time
        value = None
        try:
            for key, element in keyed_by_identity(pairs):  # (keyed as state and timers are)
                timestamp, value = element if timed else (None, element)
                if not event_time:
                    time = now
                elif timestamp is None or timestamp <= MIN_LONG:
                    # the assigner raises its own error for an element without a timestamp
                    self.assigner.assign_windows(value, MIN_WATERMARK, self.assigner_context)
                else:
                    time = timestamp
                start = time - (time - offset) % slide  # of its last window; then earlier ones
                stop = time - size
                if start <= stop or start <= passed:  # in no window (a gap), or all late
                    if not self._add_late(key, value, timestamp, start, stop) and event_time \
                            and timestamp + lateness <= watermark:
                        late.append((timestamp, value))
                    continue
                windows = batch.get(key)
                if windows is None:
                    windows = batch[key] = {}
                while True:  # (a tumbling window's element: once)
                    entry = windows.get(start)
                    if entry is None:
                        window = shared_windows.get(start)
                        if window is None:
                            window = shared_windows[start] = TimeWindow(start, start + size)
                        entry = windows[start] = [window, table.get((key, window))]
                    contents = entry[1]
                    if reduce is not None:
                        entry[1] = value if contents is None else reduce(contents, value)
                    elif value is None:
                        entry[1] = None
                    else:
                        entry[1] = add(value, create() if contents is None else contents)
                    start -= slide
                    if start <= stop:
                        break
                    if start <= passed:
                        self._add_late(key, value, timestamp, start, stop)
                        break
        except OperatorError:
            raise
        except Exception as e:
            raise OperatorError.wrap(self.name, value, e) from None
        return late

    def _add_late(self, key, value, timestamp, start, stop) -> bool:
        """The general path for the element's windows the watermark passed (those that
        start at ``start``, ``start - slide``, ... after ``stop``): a window whose cleanup
        time passed too drops it, any other takes it, and its trigger fires it at once.
        Whether a window took it."""
        added = False
        while start > stop:
            window = TimeWindow(start, start + self._size)
            if not self._is_window_late(window):
                self.backend.set_current_key(key)
                self._add_to_window(value, timestamp, window, window)
                added = True
            start -= self._slide
        return added

    # --- timers -------------------------------------------------------------------
    def _fire_timers(self, watermark: int, processing_time: int, flush_processing: bool):
        """Writes the batch back to state, then fires the due timers (``_fire_due``)."""
        if self.event_time:
            time = watermark
        else:
            time = MAX_WATERMARK if flush_processing else processing_time
        timers = self.task.timers
        in_memory, fresh = self._write_batch(time)
        due = timers.pop_all_due(self._domain, time)
        if fresh:  # (two nearly sorted runs: the sort has little to do)
            due = sorted(due + timers.entries_of(fresh))
        self._fire_due(due, in_memory)

    def _fire_due(self, due, in_memory) -> None:
        """Each due timer in order: the trigger's (at the window's ``max_timestamp()``)
        fires the window; the cleanup timer (the same one without allowed lateness)
        clears it."""
        table, dirty, result_of = self._table, self._dirty, self._result
        call, set_key, add_results = self.call_window, self.backend.set_current_key, \
            self._add_results
        keyed = self.call.kind != "none"  # (only a user's window function sees the key)
        clears, delay = self.call.clears, self.cleanup_delay
        for timestamp, _, _, _, key, window in due:
            slot = (key, window)
            end = window.end - 1
            # the cleanup time (``_cleanup_time``: end + delay, at most MAX_WATERMARK)?
            cleans = timestamp == end + delay or timestamp == MAX_WATERMARK
            held = in_memory.pop(slot, _ABSENT) if cleans else in_memory.get(slot, _ABSENT)
            if timestamp == end:
                contents = table.get(slot) if held is _ABSENT else held
                if contents is not None and result_of is not None:
                    contents = result_of(contents)
                if contents is not None and contents != []:
                    if keyed:
                        set_key(key)
                    results = call(user_key(key), window, contents)
                    if results is not None:
                        add_results(results, end)
            if cleans:
                if held is _ABSENT and slot in table:
                    del table[slot]
                    dirty.add(slot)
                if clears:
                    set_key(key)
                    self.window_context._window = window
                    self.function.clear(self.window_context)

    def _write_batch(self, time):
        """Writes the batch's windows back to state and registers their timers, except
        windows new in this batch whose every timer is due at ``time``: those stay in
        memory (returned: slot -> contents) with their timers (returned: fresh). Timers
        go in nearly in firing order, which makes sorting them cheap."""
        batch, self._batch = self._batch, {}
        self._windows = {}
        timers, domain = self.task.timers, self._domain
        table, dirty, delay = self._table, self._dirty, self.cleanup_delay
        in_memory, fresh, register = {}, {}, {}  # timers: timestamp -> those in key order
        for key in sorted(batch, key=_order_of_key):
            for window, contents in batch[key].values():
                end = window.end - 1
                cleanup = end + delay  # ``_cleanup_time``, inline
                if cleanup > MAX_WATERMARK:
                    cleanup = MAX_WATERMARK
                slot = (key, window)
                if cleanup <= time and not timers.contains(domain, key, window, end):
                    if contents is not None:
                        in_memory[slot] = contents
                    timers_of = fresh
                else:
                    if contents is not None:
                        table[slot] = contents
                        dirty.add(slot)
                    elif slot in table:
                        del table[slot]
                        dirty.add(slot)
                    timers_of = register
                timers_of.setdefault(end, []).append((key, window, end))
                if end < cleanup < MAX_WATERMARK:
                    timers_of.setdefault(cleanup, []).append((key, window, cleanup))
        timers.register_all(domain, _by_time(register))
        return in_memory, _by_time(fresh)


def _order_of_key(key):
    """The order the timer service fires a key's timers in, among timers of one time."""
    return order_token(user_key(key))


def _by_time(timers: dict) -> list:
    """The timers of ``timers`` (timestamp -> timers) by timestamp."""
    return [timer for timestamp in sorted(timers) for timer in timers[timestamp]]
