"""Windows, window assigners and the merging window set (Flink's window model).

A window assigner puts each element into zero or more windows; the window
operator keeps one pane (state + trigger) per key and window. The API re-exports
these classes under PyFlink's names (``api.datastream.window``).

    assigner = TumblingEventTimeWindows.of(Time.seconds(5))
    assigner.assign_windows(element, 7_000, ctx)      # [TimeWindow(start=5000, end=10000)]

Time windows follow Flink's arithmetic: a window ``[start, end)`` holds
timestamps ``start <= t < end`` and its ``max_timestamp()`` is ``end - 1``;
window starts are aligned to the epoch plus ``offset`` (floor division, so
negative timestamps fall into the window below them).

Merging assigners (sessions) need a ``MergingWindowSet`` per key: the element
goes into the merged window ``add_window`` returns, and the pane's contents live
under that window's *state window*, which stays fixed while the window grows so
merging never moves state that is already there.

What an assigner needs from its ``context`` (the operator provides it):
``get_current_processing_time()`` for processing-time assigners, and
``get_runtime_context().get_state(spec)`` -- a ValueState of the current
key, in the void namespace -- for the count assigners, which keep a per-key
element counter there.

Pure Python: no Spark, no I/O, no imports from ``api``; of the state backends only
the plain values of ``core.state_spec``. Triggers come from
``engine.time.triggers``, imported when a default trigger is asked for.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import (Any, Callable, Collection, Dict, Generic, Iterable, Iterator, List, Mapping,
                    Optional, TypeVar)

from core import codec
from core.state_spec import StateKind, StateSpec

from engine.time.watermarks import MAX_WATERMARK, MIN_WATERMARK

__all__ = [
    "Window", "TimeWindow", "CountWindow", "GlobalWindow",
    "WindowAssigner", "MergingWindowAssigner", "SessionWindowTimeGapExtractor",
    "TumblingEventTimeWindows", "TumblingProcessingTimeWindows",
    "SlidingEventTimeWindows", "SlidingProcessingTimeWindows",
    "EventTimeSessionWindows", "ProcessingTimeSessionWindows",
    "DynamicEventTimeSessionWindows", "DynamicProcessingTimeSessionWindows",
    "GlobalWindows", "CountTumblingWindowAssigner", "CountSlidingWindowAssigner",
    "MergingWindowSet", "MAX_LONG", "MIN_LONG",
]

MAX_LONG = MAX_WATERMARK   # Long.MAX_VALUE: the max timestamp of count and global windows
MIN_LONG = MIN_WATERMARK   # Long.MIN_VALUE: "no timestamp" on a record

T = TypeVar("T")
W = TypeVar("W")
W2 = TypeVar("W2")

_NO_TIMESTAMP = ("Record has Java Long.MIN_VALUE timestamp (= no timestamp marker). "
                 "Is the time characteristic set to 'ProcessingTime', or did you forget to call "
                 "'data_stream.assign_timestamps_and_watermarks(...)'?")


def _millis(value: Any, what: str) -> int:
    """Milliseconds of a ``Time``/``Duration`` (anything with ``to_milliseconds()``) or an int."""
    to_ms = getattr(value, "to_milliseconds", None)
    if to_ms is not None:
        value = to_ms()
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be a Time, a Duration or an int of milliseconds, "
                        f"got {type(value).__name__} {value!r}")
    return value


def _positive_count(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be an int, got {type(value).__name__} {value!r}")
    if value <= 0:
        raise ValueError(f"{what} must be > 0, got {value}")
    return value


def _event_timestamp(timestamp: Optional[int]) -> int:
    if timestamp is None or timestamp <= MIN_LONG:
        raise ValueError(_NO_TIMESTAMP)
    return timestamp


# -- windows -----------------------------------------------------------------------

class Window(ABC):
    """A finite bucket of elements, complete once time passes ``max_timestamp()``."""

    __slots__ = ()

    @abstractmethod
    def max_timestamp(self) -> int:
        pass


class TimeWindow(Window):
    """The time interval ``[start, end)``: start inclusive, end exclusive.

        TimeWindow(0, 5000).max_timestamp()   # 4999
    """

    __slots__ = ("start", "end", "_hash")

    def __init__(self, start: int, end: int):
        self.start = start
        self.end = end
        self._hash = hash((start, end))  # windows are dict keys on the hot path

    def max_timestamp(self) -> int:
        return self.end - 1

    def intersects(self, other: "TimeWindow") -> bool:
        """True if the windows overlap or touch (``[0, 5)`` and ``[5, 9)`` intersect)."""
        return self.start <= other.end and other.start <= self.end

    def cover(self, other: "TimeWindow") -> "TimeWindow":
        """The smallest window that contains both windows."""
        return TimeWindow(min(self.start, other.start), max(self.end, other.end))

    @staticmethod
    def get_window_start_with_offset(timestamp: int, offset: int, window_size: int) -> int:
        """The start of the window of ``window_size`` containing ``timestamp``, with windows
        aligned to ``offset`` (mod ``window_size``) -- also for negative timestamps.

            TimeWindow.get_window_start_with_offset(-1, 0, 5)   # -5
        """
        # Python's % has the divisor's sign, so this floors for negative timestamps too.
        return timestamp - (timestamp - offset) % window_size

    @staticmethod
    def merge_windows(windows: Iterable["TimeWindow"],
                      callback: "MergingWindowAssigner.MergeCallback[TimeWindow]") -> None:
        """Reports each group of two or more intersecting windows to ``callback.merge``.

        Groups are found by sweeping the windows in (start, end) order; a window joins the
        group if it intersects the group's cover so far. Each group is reported as a list in
        that order, with its cover as the merge result.
        """
        group: List[TimeWindow] = []
        cover: Optional[TimeWindow] = None
        for window in sorted(set(windows)):
            if cover is not None and cover.intersects(window):
                group.append(window)
                cover = cover.cover(window)
                continue
            if len(group) > 1:
                callback.merge(group, cover)
            group, cover = [window], window
        if len(group) > 1:
            callback.merge(group, cover)

    def _key(self):
        return (self.start, self.end)

    def __eq__(self, other) -> bool:
        if type(other) is not TimeWindow:
            return NotImplemented
        return self.start == other.start and self.end == other.end

    def __hash__(self) -> int:
        return self._hash

    def __lt__(self, other: "TimeWindow") -> bool:
        if type(other) is not TimeWindow:
            return NotImplemented
        return self._key() < other._key()

    def __le__(self, other: "TimeWindow") -> bool:
        if type(other) is not TimeWindow:
            return NotImplemented
        return self._key() <= other._key()

    def __gt__(self, other: "TimeWindow") -> bool:
        if type(other) is not TimeWindow:
            return NotImplemented
        return self._key() > other._key()

    def __ge__(self, other: "TimeWindow") -> bool:
        if type(other) is not TimeWindow:
            return NotImplemented
        return self._key() >= other._key()

    def __reduce__(self):
        return (TimeWindow, (self.start, self.end))

    def __repr__(self) -> str:
        return f"TimeWindow(start={self.start}, end={self.end})"


class CountWindow(Window):
    """The window of a count assigner, named by a per-key sequence number ``id``."""

    __slots__ = ("id",)

    def __init__(self, id: int):
        self.id = id

    def max_timestamp(self) -> int:
        return MAX_LONG

    def __eq__(self, other) -> bool:
        if type(other) is not CountWindow:
            return NotImplemented
        return self.id == other.id

    def __hash__(self) -> int:
        return hash((CountWindow, self.id))

    def __lt__(self, other: "CountWindow") -> bool:
        if type(other) is not CountWindow:
            return NotImplemented
        return self.id < other.id

    def __reduce__(self):
        return (CountWindow, (self.id,))

    def __repr__(self) -> str:
        return f"CountWindow(id={self.id})"


class GlobalWindow(Window):
    """The one window of ``GlobalWindows``; ``GlobalWindow.get()`` is the singleton."""

    __slots__ = ()
    _instance: Optional["GlobalWindow"] = None

    def __new__(cls):
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    @staticmethod
    def get() -> "GlobalWindow":
        return GlobalWindow()

    def max_timestamp(self) -> int:
        return MAX_LONG

    def __eq__(self, other) -> bool:
        return type(other) is GlobalWindow

    def __hash__(self) -> int:
        return 0

    def __reduce__(self):
        return (GlobalWindow.get, ())

    def __repr__(self) -> str:
        return "GlobalWindow"


codec.register_data_class(TimeWindow, codec.TIME_WINDOW, lambda w: [w.start, w.end],
                          lambda fields: TimeWindow(*fields))
codec.register_data_class(CountWindow, codec.COUNT_WINDOW, lambda w: [w.id],
                          lambda fields: CountWindow(*fields))
codec.register_data_class(GlobalWindow, codec.GLOBAL_WINDOW, lambda w: [],
                          lambda fields: GlobalWindow())


# -- assigner interfaces -------------------------------------------------------------

class WindowAssigner(ABC, Generic[T, W]):
    """Assigns zero or more windows to an element (PyFlink's WindowAssigner)."""

    class WindowAssignerContext(ABC):
        """What an assigner may ask of the operator running it."""

        @abstractmethod
        def get_current_processing_time(self) -> int:
            """The current processing time (ms)."""

        @abstractmethod
        def get_runtime_context(self):
            """The operator's RuntimeContext; its keyed state addresses the current key."""

    @abstractmethod
    def assign_windows(self, element: T, timestamp: int,
                       context: "WindowAssigner.WindowAssignerContext") -> Collection[W]:
        """The windows ``element`` (with event ``timestamp``) belongs to."""

    @abstractmethod
    def get_default_trigger(self, env) -> Any:
        """The trigger used when ``WindowedStream.trigger`` is not called."""

    @abstractmethod
    def is_event_time(self) -> bool:
        """True if windows are assigned by event time (they then end by watermark)."""

    def get_window_serializer(self) -> Any:
        """Not needed here (windows are Python objects); PyFlink assigners may override it."""
        return None


class MergingWindowAssigner(WindowAssigner[T, W]):
    """A WindowAssigner whose windows can merge (sessions)."""

    class MergeCallback(ABC, Generic[W2]):
        """Receives the merges ``merge_windows`` decides on."""

        @abstractmethod
        def merge(self, to_be_merged: Iterable[W2], merge_result: W2) -> None:
            """``to_be_merged`` become the one window ``merge_result``."""

    @abstractmethod
    def merge_windows(self, windows: Iterable[W],
                      callback: "MergingWindowAssigner.MergeCallback[W]") -> None:
        """Calls ``callback.merge`` once per group of ``windows`` that should merge."""


class SessionWindowTimeGapExtractor(ABC):
    """Extracts the session gap of an element, for dynamic-gap session windows."""

    @abstractmethod
    def extract(self, element: Any) -> int:
        """The session gap in milliseconds (must be > 0)."""


def _trigger(name: str, *args):
    from engine.time import triggers  # lazily: triggers may import this module
    factory = getattr(triggers, name)
    if name == "NeverTrigger":
        return factory()
    return factory.create() if not args else factory.of(*args)


# -- time windows --------------------------------------------------------------------

class _TumblingWindows(WindowAssigner[T, TimeWindow]):

    def __init__(self, size: int, offset: int):
        if abs(offset) >= size:
            raise ValueError(f"{type(self).__name__} parameters must satisfy abs(offset) < size")
        self._size = size
        self._offset = offset

    def _window_of(self, timestamp: int) -> List[TimeWindow]:
        start = TimeWindow.get_window_start_with_offset(timestamp, self._offset, self._size)
        return [TimeWindow(start, start + self._size)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._size}, {self._offset})"


class TumblingEventTimeWindows(_TumblingWindows[T]):
    """Consecutive, non-overlapping windows of ``size`` by element timestamp.

        TumblingEventTimeWindows.of(Time.minutes(1))
        TumblingEventTimeWindows.of(Time.days(1), Time.hours(-8))   # days of UTC+08:00
    """

    @staticmethod
    def of(size, offset=None) -> "TumblingEventTimeWindows":
        """``size`` and ``offset``: Time, Duration or int ms; requires ``abs(offset) < size``."""
        return TumblingEventTimeWindows(_millis(size, "size"),
                                        0 if offset is None else _millis(offset, "offset"))

    def assign_windows(self, element: T, timestamp: int,
                       context: "WindowAssigner.WindowAssignerContext") -> Collection[TimeWindow]:
        return self._window_of(_event_timestamp(timestamp))

    def get_default_trigger(self, env):
        return _trigger("EventTimeTrigger")

    def is_event_time(self) -> bool:
        return True


class TumblingProcessingTimeWindows(_TumblingWindows[T]):
    """Consecutive, non-overlapping windows of ``size`` by the operator's processing time."""

    @staticmethod
    def of(size, offset=None) -> "TumblingProcessingTimeWindows":
        """``size`` and ``offset``: Time, Duration or int ms; requires ``abs(offset) < size``."""
        return TumblingProcessingTimeWindows(_millis(size, "size"),
                                             0 if offset is None else _millis(offset, "offset"))

    def assign_windows(self, element: T, timestamp: int,
                       context: "WindowAssigner.WindowAssignerContext") -> Collection[TimeWindow]:
        return self._window_of(context.get_current_processing_time())

    def get_default_trigger(self, env):
        return _trigger("ProcessingTimeTrigger")

    def is_event_time(self) -> bool:
        return False


class _SlidingWindows(WindowAssigner[T, TimeWindow]):

    def __init__(self, size: int, slide: int, offset: int):
        if abs(offset) >= slide or size <= 0:
            raise ValueError(f"{type(self).__name__} parameters must satisfy "
                             "abs(offset) < slide and size > 0")
        self._size = size
        self._slide = slide
        self._offset = offset

    def _windows_of(self, timestamp: int) -> List[TimeWindow]:
        # Every window containing the timestamp, latest start first (as Flink lists them).
        size, slide = self._size, self._slide
        start = TimeWindow.get_window_start_with_offset(timestamp, self._offset, slide)
        windows = []
        while start > timestamp - size:
            windows.append(TimeWindow(start, start + size))
            start -= slide
        return windows

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._size}, {self._slide}, {self._offset})"


class SlidingEventTimeWindows(_SlidingWindows[T]):
    """Windows of ``size`` starting every ``slide``, by element timestamp; they may overlap.

        SlidingEventTimeWindows.of(Time.minutes(1), Time.seconds(10))
    """

    @staticmethod
    def of(size, slide, offset=None) -> "SlidingEventTimeWindows":
        """Time, Duration or int ms; requires ``abs(offset) < slide`` and ``size > 0``."""
        return SlidingEventTimeWindows(_millis(size, "size"), _millis(slide, "slide"),
                                       0 if offset is None else _millis(offset, "offset"))

    def assign_windows(self, element: T, timestamp: int,
                       context: "WindowAssigner.WindowAssignerContext") -> Collection[TimeWindow]:
        return self._windows_of(_event_timestamp(timestamp))

    def get_default_trigger(self, env):
        return _trigger("EventTimeTrigger")

    def is_event_time(self) -> bool:
        return True


class SlidingProcessingTimeWindows(_SlidingWindows[T]):
    """Windows of ``size`` starting every ``slide``, by the operator's processing time."""

    @staticmethod
    def of(size, slide, offset=None) -> "SlidingProcessingTimeWindows":
        """Time, Duration or int ms; requires ``abs(offset) < slide`` and ``size > 0``."""
        return SlidingProcessingTimeWindows(_millis(size, "size"), _millis(slide, "slide"),
                                            0 if offset is None else _millis(offset, "offset"))

    def assign_windows(self, element: T, timestamp: int,
                       context: "WindowAssigner.WindowAssignerContext") -> Collection[TimeWindow]:
        return self._windows_of(context.get_current_processing_time())

    def get_default_trigger(self, env):
        return _trigger("ProcessingTimeTrigger")

    def is_event_time(self) -> bool:
        return False


# -- session windows -----------------------------------------------------------------

class _SessionWindows(MergingWindowAssigner[T, TimeWindow]):
    """Each element opens ``[t, t + gap)``; windows that intersect merge."""

    def merge_windows(self, windows: Iterable[TimeWindow],
                      callback: "MergingWindowAssigner.MergeCallback[TimeWindow]") -> None:
        TimeWindow.merge_windows(windows, callback)

    def _time_of(self, timestamp: int, context) -> int:
        if self.is_event_time():
            return _event_timestamp(timestamp)
        return context.get_current_processing_time()

    def get_default_trigger(self, env):
        return _trigger("EventTimeTrigger" if self.is_event_time() else "ProcessingTimeTrigger")


class _FixedGapSessionWindows(_SessionWindows[T]):

    def __init__(self, session_gap: int):
        if session_gap <= 0:
            raise ValueError(f"{type(self).__name__} parameters must satisfy 0 < size")
        self._session_gap = session_gap

    def assign_windows(self, element: T, timestamp: int,
                       context: "WindowAssigner.WindowAssignerContext") -> Collection[TimeWindow]:
        start = self._time_of(timestamp, context)
        return [TimeWindow(start, start + self._session_gap)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._session_gap})"


class _DynamicGapSessionWindows(_SessionWindows[T]):

    def __init__(self, session_window_time_gap_extractor: SessionWindowTimeGapExtractor):
        self._extractor = session_window_time_gap_extractor

    def assign_windows(self, element: T, timestamp: int,
                       context: "WindowAssigner.WindowAssignerContext") -> Collection[TimeWindow]:
        start = self._time_of(timestamp, context)
        gap = self._extractor.extract(element)
        if gap <= 0:
            raise ValueError("Dynamic session time gap must satisfy 0 < gap")
        return [TimeWindow(start, start + gap)]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._extractor!r})"


class DynamicEventTimeSessionWindows(_DynamicGapSessionWindows[T]):
    """Event-time sessions whose gap each element chooses (``extractor.extract(element)``)."""

    @staticmethod
    def with_dynamic_gap(extractor: SessionWindowTimeGapExtractor
                         ) -> "DynamicEventTimeSessionWindows":
        return DynamicEventTimeSessionWindows(extractor)

    def is_event_time(self) -> bool:
        return True


class DynamicProcessingTimeSessionWindows(_DynamicGapSessionWindows[T]):
    """Processing-time sessions whose gap each element chooses."""

    @staticmethod
    def with_dynamic_gap(extractor: SessionWindowTimeGapExtractor
                         ) -> "DynamicProcessingTimeSessionWindows":
        return DynamicProcessingTimeSessionWindows(extractor)

    def is_event_time(self) -> bool:
        return False


class EventTimeSessionWindows(_FixedGapSessionWindows[T]):
    """Sessions by element timestamp: a session ends after ``gap`` without elements.

        EventTimeSessionWindows.with_gap(Time.minutes(1))
    """

    @staticmethod
    def with_gap(size) -> "EventTimeSessionWindows":
        """``size``: the gap, as Time, Duration or int ms (> 0)."""
        return EventTimeSessionWindows(_millis(size, "size"))

    @staticmethod
    def with_dynamic_gap(extractor: SessionWindowTimeGapExtractor
                         ) -> DynamicEventTimeSessionWindows:
        return DynamicEventTimeSessionWindows(extractor)

    def is_event_time(self) -> bool:
        return True


class ProcessingTimeSessionWindows(_FixedGapSessionWindows[T]):
    """Sessions by the operator's processing time."""

    @staticmethod
    def with_gap(size) -> "ProcessingTimeSessionWindows":
        """``size``: the gap, as Time, Duration or int ms (> 0)."""
        return ProcessingTimeSessionWindows(_millis(size, "size"))

    @staticmethod
    def with_dynamic_gap(extractor: SessionWindowTimeGapExtractor
                         ) -> DynamicProcessingTimeSessionWindows:
        return DynamicProcessingTimeSessionWindows(extractor)

    def is_event_time(self) -> bool:
        return False


# -- global and count windows ----------------------------------------------------------

class GlobalWindows(WindowAssigner[T, GlobalWindow]):
    """Puts every element into the one GlobalWindow; fires only by a custom trigger."""

    @staticmethod
    def create() -> "GlobalWindows":
        return GlobalWindows()

    def assign_windows(self, element: T, timestamp: int,
                       context: "WindowAssigner.WindowAssignerContext") -> Collection[GlobalWindow]:
        return [GlobalWindow.get()]

    def get_default_trigger(self, env):
        return _trigger("NeverTrigger")

    def is_event_time(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "GlobalWindows()"


TUMBLE_COUNT_STATE = "tumble-count-assigner"
SLIDE_COUNT_STATE = "slide-count-assigner"
# A count assigner's per-key counter (value state).
_TUMBLE_COUNTER = StateSpec(TUMBLE_COUNT_STATE, StateKind.VALUE, pickled=False)
_SLIDE_COUNTER = StateSpec(SLIDE_COUNT_STATE, StateKind.VALUE, pickled=False)


def _next_count(context, counter_spec: StateSpec) -> int:
    """The 0-based position of this element among its key's elements; counts it."""
    counter = context.get_runtime_context().get_state(counter_spec)
    count = counter.value() or 0
    counter.update(count + 1)
    return count


class CountTumblingWindowAssigner(WindowAssigner[T, CountWindow]):
    """Per key, elements ``0..size-1`` go to CountWindow(0), the next ``size`` to 1, ..."""

    def __init__(self, window_size: int):
        self._window_size = _positive_count(window_size, "window_size")

    @staticmethod
    def of(window_size: int) -> "CountTumblingWindowAssigner":
        return CountTumblingWindowAssigner(window_size)

    def assign_windows(self, element: T, timestamp: int,
                       context: "WindowAssigner.WindowAssignerContext") -> Collection[CountWindow]:
        return [CountWindow(_next_count(context, _TUMBLE_COUNTER) // self._window_size)]

    def get_default_trigger(self, env):
        return _trigger("CountTrigger", self._window_size)

    def is_event_time(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"CountTumblingWindowAssigner({self._window_size})"


class CountSlidingWindowAssigner(WindowAssigner[T, CountWindow]):
    """Per key, CountWindow(i) holds elements ``i*slide .. i*slide + size - 1``.

    An element goes to every such window containing it, latest first; with
    ``slide > size`` the elements between windows go to none.
    """

    def __init__(self, window_size: int, window_slide: int):
        self._window_size = _positive_count(window_size, "window_size")
        self._window_slide = _positive_count(window_slide, "window_slide")

    @staticmethod
    def of(window_size: int, window_slide: int) -> "CountSlidingWindowAssigner":
        return CountSlidingWindowAssigner(window_size, window_slide)

    def assign_windows(self, element: T, timestamp: int,
                       context: "WindowAssigner.WindowAssignerContext") -> Collection[CountWindow]:
        count = _next_count(context, _SLIDE_COUNTER)
        size, slide = self._window_size, self._window_slide
        window_id = count // slide
        windows = []
        while window_id >= 0 and window_id * slide + size > count:
            windows.append(CountWindow(window_id))
            window_id -= 1
        return windows

    def get_default_trigger(self, env):
        return _trigger("CountTrigger", self._window_size)

    def is_event_time(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"CountSlidingWindowAssigner({self._window_size}, {self._window_slide})"


# -- merging window set --------------------------------------------------------------

MergeFunction = Callable[[Any, List[Any], Any, List[Any]], None]


def assigns_data_windows(assigner) -> bool:
    """Whether ``assigner`` is one of the assigners above, whose windows are data (a
    user's own assigner, even a subclass of these, may assign windows of any class)."""
    return type(assigner).__module__ == __name__


class _MergeCollector(MergingWindowAssigner.MergeCallback):

    def __init__(self):
        self.merges: List[tuple] = []

    def merge(self, to_be_merged, merge_result) -> None:
        self.merges.append((merge_result, list(to_be_merged)))


class MergingWindowSet(Generic[W]):
    """One key's in-flight windows of a merging assigner, each mapped to its state window.

    The operator keeps a key's pane state under the *state window* (a namespace
    fixed when the window first appeared) while the in-flight window grows by
    merging, so a merge moves only the state of the windows merged away.

        windows = MergingWindowSet.from_dict(assigner, stored or {})
        actual = windows.add_window(new_window, merge_function)
        state_window = windows.get_state_window(actual)   # namespace of the pane state
        ...
        windows.retire_window(actual)                      # when the window is purged
        store(windows.to_dict())                           # if windows.changed

    ``merge_function(merge_result, merged_windows, state_window_result,
    merged_state_windows)`` is called once per merge, before ``add_window``
    returns: ``merged_windows`` are the in-flight windows (possibly including the
    new window and the merge result itself) that became ``merge_result``;
    ``state_window_result`` is the state window ``merge_result`` keeps, and the
    operator must merge the state of ``merged_state_windows`` into it. An object
    with a ``merge`` method of that signature works too. It is not called when
    the new window merely lands in an existing window of the same bounds.
    """

    def __init__(self, window_assigner: MergingWindowAssigner,
                 mapping: Optional[Mapping[W, W]] = None):
        self._assigner = window_assigner
        self._mapping: Dict[W, W] = dict(mapping) if mapping else {}
        self.changed = False
        """True once the mapping differs from the one the set was built with (or restored)."""

    @classmethod
    def from_dict(cls, window_assigner: MergingWindowAssigner,
                  mapping: Optional[Mapping[W, W]]) -> "MergingWindowSet[W]":
        """The set restored from ``to_dict()`` output (None or {}: no windows)."""
        return cls(window_assigner, mapping)

    def to_dict(self) -> Dict[W, W]:
        """``{in-flight window: state window}``, a fresh dict to persist as keyed state."""
        return dict(self._mapping)

    def get_state_window(self, window: W) -> Optional[W]:
        """The state window of in-flight ``window``, or None if it is not in flight."""
        return self._mapping.get(window)

    def retire_window(self, window: W) -> None:
        """Forgets ``window`` (its pane was purged); it must be in flight."""
        if window not in self._mapping:
            raise ValueError(f"Window {window!r} is not in in-flight window set.")
        del self._mapping[window]
        self.changed = True

    def add_window(self, new_window: W, merge_function: MergeFunction) -> W:
        """Adds ``new_window`` and merges as the assigner decides; returns the in-flight
        window that now contains ``new_window`` (itself, or the merge result it joined)."""
        merge = getattr(merge_function, "merge", merge_function)
        mapping = self._mapping
        candidates = list(mapping)
        if new_window not in mapping:
            candidates.append(new_window)
        collector = _MergeCollector()
        if len(candidates) > 1:
            self._assigner.merge_windows(candidates, collector)

        updated = dict(mapping)
        result_window = new_window
        new_window_merged = False
        calls = []
        for merge_result, merged_windows in collector.merges:
            if new_window in merged_windows:
                new_window_merged = True
                result_window = merge_result
            # The result keeps the state window of the first merged window that has one
            # (the earliest, for TimeWindows); the others' state is merged into it.
            state_windows = [updated.pop(w) for w in merged_windows if w in updated]
            if not state_windows:   # an assigner merged only windows that hold no state
                state_windows = [merge_result]
            state_window_result, merged_state_windows = state_windows[0], state_windows[1:]
            updated[merge_result] = state_window_result
            if merged_windows == [merge_result]:
                continue
            calls.append((merge_result, merged_windows, state_window_result,
                          merged_state_windows))
        if not new_window_merged and new_window not in updated:
            updated[new_window] = new_window

        for call in calls:
            merge(*call)
        if updated != mapping:
            self._mapping = updated
            self.changed = True
        return result_window

    def __len__(self) -> int:
        return len(self._mapping)

    def __contains__(self, window) -> bool:
        return window in self._mapping

    def __iter__(self) -> Iterator[W]:
        return iter(list(self._mapping))

    def __repr__(self) -> str:
        return f"MergingWindowSet({self._mapping!r})"
