"""The keyed window operator (Flink's WindowOperator).

Per key and window (the state namespace) it keeps the window's contents: a reduced
value, an aggregate accumulator, or the list of elements. The assigner puts each
element into windows; the trigger decides when a window fires and purges, through a
TriggerContext whose state and timers are scoped to (key, window); a cleanup timer at
``max_timestamp + allowed_lateness`` clears the window. Merging assigners (sessions)
keep a MergingWindowSet per key as keyed state. Emitted records carry the timestamp of
what fired the window, as in PyFlink: the timer's (``max_timestamp()`` for the time
triggers), or the element's for a trigger that fires on an element (count windows).
"""
from core.state_spec import StateKind, StateSpec

from engine.errors import OperatorError
from engine.runtime.metrics import NUM_LATE_RECORDS_DROPPED
from engine.runtime.state_descriptors import kind_of
from engine.time.timers import EVENT_TIME, PROCESSING_TIME
from engine.time.watermarks import MAX_WATERMARK, MIN_WATERMARK
from engine.time.windows import MergingWindowSet, assigns_data_windows
from engine.runtime.operators.base import UdfOperator
from engine.runtime.operators.side_outputs import SideOutputs, is_side_output

CONTENTS = "window-contents"
MERGING_WINDOWS = "merging-window-set"


def _event_time(timestamp) -> int:
    """The time assigners and triggers see of an element: Long.MIN_VALUE if it has no
    timestamp, as in Flink."""
    return MIN_WATERMARK if timestamp is None else timestamp


class WindowFunctionCall:
    """Calls the user's window function the way its kind wants: ``none`` (emit the
    reduced/aggregated value), ``apply`` (WindowFunction), ``process``
    (ProcessWindowFunction), ``apply_all``/``process_all`` (non-keyed windows).
    ``single``: the contents are one value (incremental aggregation), not a list.
    ``clears``: the function is a process kind with a ``clear`` of its own, called when
    a window is cleaned up (the interfaces' own ``clear`` does nothing)."""

    def __init__(self, function, kind: str, single: bool, clears: bool = False):
        self.function = function
        self.kind = kind
        self.single = single
        self.clears = clears

    def bind(self, context):
        """The call as a function of ``(key, window, contents)`` returning the results (an
        iterable or None), for this kind, with ``context`` the ProcessWindowFunction's."""
        kind, f, single = self.kind, self.function, self.single
        if kind == "none":
            return lambda key, window, contents: (contents,)
        if kind in ("apply", "apply_all"):
            apply = f.apply
            if kind == "apply_all":
                return lambda key, window, contents: apply(window, [contents] if single
                                                           else contents)
            return lambda key, window, contents: apply(key, window, [contents] if single
                                                       else contents)
        process = f.process

        def call(key, window, contents):
            context._window = window
            inputs = [contents] if single else contents
            return process(key, context, inputs) if kind == "process" \
                else process(context, inputs)  # process_all
        return call


class _AssignerContext:
    def __init__(self, operator):
        self._operator = operator

    def get_current_processing_time(self) -> int:
        return self._operator.task.clock.processing_time

    def get_runtime_context(self):
        return self._operator.runtime_context


class _TriggerContext:
    """Trigger.TriggerContext and OnMergeContext for the current key and ``window``."""

    def __init__(self, operator):
        self._op = operator
        self.window = None
        self.merged_windows = ()

    def get_current_processing_time(self) -> int:
        return self._op.task.clock.processing_time

    def get_current_watermark(self) -> int:
        return self._op.task.clock.current_watermark

    def get_metric_group(self):
        return None

    def _timer(self, change: str, domain: str, time: int) -> None:
        backend = self._op.task.keyed_backend
        getattr(self._op.task.timers, change)(domain, backend.current_slot[0], self.window,
                                              time)  # (the current key's identity)

    def register_event_time_timer(self, time: int) -> None:
        self._timer("register", EVENT_TIME, time)

    def register_processing_time_timer(self, time: int) -> None:
        self._timer("register", PROCESSING_TIME, time)

    def delete_event_time_timer(self, time: int) -> None:
        self._timer("delete", EVENT_TIME, time)

    def delete_processing_time_timer(self, time: int) -> None:
        self._timer("delete", PROCESSING_TIME, time)

    def get_partitioned_state(self, state_descriptor):
        """State of the current key and window (the backend's namespace is the window)."""
        return self._op.state_of(state_descriptor)

    def merge_partitioned_state(self, state_descriptor) -> None:
        """On merge: folds the merged windows' state into the new window's."""
        if self.merged_windows:
            self._op.state_of(state_descriptor).merge_namespaces(self.window,
                                                                 self.merged_windows)


class _ProcessWindowContext:
    """ProcessWindowFunction.Context: the window, time, and per-window / global state."""

    def __init__(self, operator):
        self._op = operator
        self._window = None

    def window(self):
        return self._window

    def current_processing_time(self) -> int:
        return self._op.task.clock.processing_time

    def current_watermark(self) -> int:
        return self._op.task.clock.current_watermark

    def window_state(self):
        return _KeyedStateStore(self._op, lambda: self._window)

    def global_state(self):
        return _KeyedStateStore(self._op, lambda: None)


class _KeyedStateStore:
    """State getters whose states address a fixed namespace (a window, or None: global)."""

    def __init__(self, operator, namespace):
        self._op = operator
        self._namespace = namespace

    def _state(self, state_descriptor):
        return _NamespacedState(self._op.task.keyed_backend,
                                self._op.state_of(state_descriptor), self._namespace())

    get_state = get_list_state = get_map_state = _state
    get_reducing_state = get_aggregating_state = _state


class _NamespacedState:
    """Calls a state object's methods with the backend switched to one namespace."""

    def __init__(self, backend, state, namespace):
        self._backend, self._state, self._namespace = backend, state, namespace

    def __getattr__(self, name):
        method = getattr(self._state, name)

        def in_namespace(*args, **kwargs):
            backend = self._backend
            previous = backend.get_current_namespace()
            backend.set_current_namespace(self._namespace)
            try:
                return method(*args, **kwargs)
            finally:
                backend.set_current_namespace(previous)
        return in_namespace


class WindowOperator(UdfOperator):
    """Windows of a keyed stream. ``contents``: ("reducing", ReduceFunction, pickled),
    ("aggregating", AggregateFunction, pickled) or ("list", None, pickled), where
    ``pickled`` says whether the stored elements, reduced values or accumulators may be
    pickled (their declared type allows it); ``function`` is a WindowFunctionCall;
    ``late_tag`` the OutputTag of late elements, or None. What the window function
    yields as ``(OutputTag, value)`` goes to that side output."""

    def __init__(self, assigner, trigger, contents, function: WindowFunctionCall,
                 allowed_lateness: int = 0, late_tag=None):
        super().__init__(function.function)
        self.assigner = assigner
        self.trigger = trigger
        self.contents_kind, self.contents_function, self.contents_pickled = contents
        self.call = function
        self.allowed_lateness = allowed_lateness
        self.late_tag = late_tag

    # --- set-up -------------------------------------------------------------------
    def open(self):
        if self.call.kind != "none":
            super().open()  # opens the user's window function
        task = self.task
        task.metrics.counts[NUM_LATE_RECORDS_DROPPED] = 0  # a window operator reports them
        self.runtime_context = task.runtime_context(self.name)
        self.backend = task.keyed_backend
        self.contents_spec = StateSpec(CONTENTS, StateKind(self.contents_kind),
                                       self.contents_function, pickled=self.contents_pickled)
        self.contents = self.state_of(self.contents_spec)
        self.merging = hasattr(self.assigner, "merge_windows")
        if self.merging:
            self.merging_sets = self.state_of(StateSpec(
                MERGING_WINDOWS, StateKind.VALUE,
                pickled=not assigns_data_windows(self.assigner)))
        self.event_time = self.assigner.is_event_time()
        # A window is cleaned up this long after its max timestamp (``_cleanup_time``).
        self.cleanup_delay = self.allowed_lateness if self.event_time else 0
        self.assigner_context = _AssignerContext(self)
        self.trigger_context = _TriggerContext(self)
        self.window_context = _ProcessWindowContext(self)
        self.call_window = self.call.bind(self.window_context)
        self._add_results = None  # (set for each call: ``_collect``)
        self._side = SideOutputs(self.name, task.shape, self.side_outputs)

    def state_of(self, state_descriptor):
        """Keyed state of the operator, the trigger or the window function, through the
        runtime context (which applies a descriptor's time-to-live)."""
        kind = kind_of(state_descriptor)
        if kind is None:
            raise TypeError(f"operator '{self.name}' asked for the state of "
                            f"{state_descriptor!r}, which is not a state descriptor")
        return getattr(self.runtime_context, kind.getter)(state_descriptor)

    def close(self):
        if self.call.kind != "none":
            super().close()

    # --- time rules (Flink's) -------------------------------------------------------
    def _cleanup_time(self, window) -> int:
        return min(window.max_timestamp() + self.cleanup_delay, MAX_WATERMARK)

    def _is_window_late(self, window) -> bool:
        return self.event_time and \
            self._cleanup_time(window) <= self.task.clock.current_watermark

    def _is_element_late(self, timestamp) -> bool:
        return self.event_time and \
            timestamp + self.allowed_lateness <= self.task.clock.current_watermark

    # --- elements -----------------------------------------------------------------
    def process_chunk(self, pairs):
        out = self._collect()
        try:
            late = self._add_chunk(pairs)
        finally:
            self.backend.set_current_namespace(None)
        self._emit(out, late)

    def _add_chunk(self, pairs) -> list:
        """Adds each element to its windows (what fires goes to ``_add_results``); returns
        the late elements, (timestamp, value), those every window of which was late. An
        error names its element."""
        late = []
        cursor = self.cursor
        value = None
        try:
            for value in cursor.records(pairs):
                timestamp = cursor.timestamp
                if not self._add(value, timestamp) and \
                        self._is_element_late(_event_time(timestamp)):
                    late.append((timestamp, value))
        except OperatorError:
            raise
        except Exception as e:
            raise OperatorError.wrap(self.name, value, e) from None
        return late

    def _add(self, value, timestamp) -> bool:
        """Adds an element (``timestamp`` None if it has none) to its windows; False if
        every window was already late."""
        self.backend.set_current_namespace(None)  # assigners' own state (counts) is per key
        windows = self.assigner.assign_windows(value, _event_time(timestamp),
                                               self.assigner_context)
        added = False
        for window in windows:
            state_window = window
            if self.merging:
                window, state_window = self._merge_into_session(window)
                if window is None:
                    continue
            if self._is_window_late(window):
                continue
            added = True
            self._add_to_window(value, timestamp, window, state_window)
        return added

    def _add_to_window(self, value, timestamp, window, state_window) -> None:
        """Adds an element to one window that is not late: contents, trigger (what fires
        has the element's timestamp), cleanup."""
        self.backend.set_current_namespace(state_window)
        self.contents.add(value)
        self._set_trigger_window(window)
        result = self.trigger.on_element(value, _event_time(timestamp), window,
                                         self.trigger_context)
        self._on_trigger_result(result, window, timestamp)
        self._register_cleanup_timer(window)

    def _set_trigger_window(self, window) -> None:
        self.trigger_context.window = window
        self.trigger_context.merged_windows = ()

    def _on_trigger_result(self, result, window, timestamp) -> None:
        """Fires and/or purges the window as the trigger said; results of a firing have the
        ``timestamp`` of the element or timer that fired it, as in PyFlink."""
        if result.is_fire():
            contents = self.contents.get()
            if contents is not None and contents != []:
                self._fire(window, contents, timestamp)
        if result.is_purge():
            self.contents.clear()

    def _fire(self, window, contents, timestamp) -> None:
        results = self.call_window(self.backend.get_current_key(), window, contents)
        if results is not None:
            self._add_results(results, timestamp)

    def _collect(self) -> list:
        """A new output list, which ``self._add_results(results, timestamp)`` then fills:
        it adds a window function's results, at ``timestamp``; ``(OutputTag, value)``
        results go to that side output. (A function bound once per call: firing many
        windows, the per-window cost of a method looking up its targets shows.)"""
        out = []
        element, add_side = self.task.shape.element, self._side.add

        def add_results(results, timestamp: int) -> None:
            for result in results:
                if is_side_output(result):
                    add_side(result[0], result[1], timestamp)
                else:
                    out.append(element(result, timestamp))
        self._add_results = add_results
        return out

    def _register_cleanup_timer(self, window) -> None:
        cleanup = self._cleanup_time(window)
        if cleanup == MAX_WATERMARK:
            return  # e.g. GlobalWindow: never cleaned up
        self.trigger_context.window = window
        if self.event_time:
            self.trigger_context.register_event_time_timer(cleanup)
        else:
            self.trigger_context.register_processing_time_timer(cleanup)

    # --- merging windows (sessions) -------------------------------------------------
    def _merge_into_session(self, new_window):
        """Adds ``new_window`` to the key's merging window set; returns (the window the
        element belongs to, the window whose namespace holds its state), or (None, None)
        if that window is already late."""
        self.backend.set_current_namespace(None)
        merging_set = MergingWindowSet.from_dict(self.assigner, self.merging_sets.value())

        def merge(merge_result, merged_windows, state_window_result, merged_state_windows):
            self.backend.set_current_namespace(state_window_result)
            if self._is_window_late(merge_result):
                return
            self.trigger_context.window = merge_result
            self.trigger_context.merged_windows = list(merged_state_windows)
            self.trigger.on_merge(merge_result, self.trigger_context)
            for merged in merged_windows:  # their triggers and cleanup timers go away
                self.trigger_context.window = merged
                self.trigger.clear(merged, self.trigger_context)
                self._delete_cleanup_timer(merged)
            self.contents.merge_namespaces(state_window_result, list(merged_state_windows))

        actual = merging_set.add_window(new_window, merge)
        state_window = merging_set.get_state_window(actual)
        self.backend.set_current_namespace(None)
        self.merging_sets.update(merging_set.to_dict())
        if self._is_window_late(actual):
            merging_set.retire_window(actual)
            self.merging_sets.update(merging_set.to_dict())
            return None, None
        return actual, state_window

    def _delete_cleanup_timer(self, window) -> None:
        cleanup = self._cleanup_time(window)
        if cleanup == MAX_WATERMARK:
            return
        self.trigger_context.window = window
        if self.event_time:
            self.trigger_context.delete_event_time_timer(cleanup)
        else:
            self.trigger_context.delete_processing_time_timer(cleanup)

    # --- timers -------------------------------------------------------------------
    def fire_timers(self, watermark: int, processing_time: int, flush_processing: bool):
        out = self._collect()
        try:
            self._fire_timers(watermark, processing_time, flush_processing)
        except OperatorError:
            raise
        except Exception as e:
            raise OperatorError.wrap(self.name, None, e, what="a window timer") from None
        finally:
            self.backend.set_current_namespace(None)
        self._emit(out, [])

    def _fire_timers(self, watermark: int, processing_time: int, flush_processing: bool):
        """Fires the due timers; what fires goes to ``_add_results``."""
        timers = self.task.timers
        if not timers.count():
            return
        backend = self.backend
        due = ((EVENT_TIME, watermark),
               (PROCESSING_TIME, MAX_WATERMARK if flush_processing else processing_time))
        for domain, time in due:
            for key, window, timestamp in timers.fire(domain, time):
                backend.set_current_key(key)
                self._on_timer(domain, window, timestamp)

    def _on_timer(self, domain: str, window, timestamp: int) -> None:
        state_window = window
        merging_set = None
        if self.merging:
            self.backend.set_current_namespace(None)
            merging_set = MergingWindowSet.from_dict(self.assigner, self.merging_sets.value())
            state_window = merging_set.get_state_window(window)
            if state_window is None:
                return  # merged away: its timers no longer apply
        self.backend.set_current_namespace(state_window)
        self._set_trigger_window(window)
        if domain == EVENT_TIME:
            result = self.trigger.on_event_time(timestamp, window, self.trigger_context)
        else:
            result = self.trigger.on_processing_time(timestamp, window, self.trigger_context)
        self._on_trigger_result(result, window, timestamp)
        if (domain == EVENT_TIME) == self.event_time and timestamp == self._cleanup_time(window):
            self._clear_all(window, merging_set)

    def _clear_all(self, window, merging_set) -> None:
        self.contents.clear()
        self._set_trigger_window(window)
        self.trigger.clear(window, self.trigger_context)
        if self.call.clears:
            self.window_context._window = window
            self.function.clear(self.window_context)
        if merging_set is not None:
            merging_set.retire_window(window)
            self.backend.set_current_namespace(None)
            self.merging_sets.update(merging_set.to_dict())

    # --- output -------------------------------------------------------------------
    def _emit(self, out, late) -> None:
        """Passes on the batch's output and side outputs; late elements go to the late
        tag's side output, or are dropped and counted."""
        if out:
            self.output(out)
        if late and self.late_tag is None:  # counted when dropped, not when sent on
            self.task.metrics.counts[NUM_LATE_RECORDS_DROPPED] += len(late)
        elif late:
            for timestamp, value in late:
                self._side.add(self.late_tag, value, timestamp)
        self._side.flush()
