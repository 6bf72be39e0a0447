"""Triggers: when a window pane (one key, one window) is evaluated or purged.

PyFlink's ``Trigger`` contract and its built-in triggers, with Flink's
semantics. A trigger keeps no state of its own: one instance serves every key
and window, and it reaches timers and state only through the
``Trigger.TriggerContext`` the window operator hands it, which scopes both to
the current (key, window).

    trigger = EventTimeTrigger.create()
    result = trigger.on_element(element, timestamp, window, ctx)
    if result.is_fire():
        emit(window_function(contents))
    if result.is_purge():
        contents.clear()

The window operator implements ``Trigger.TriggerContext`` (and
``Trigger.OnMergeContext`` for merging assigners) over its keyed state backend
and timer service; the built-ins ask it for reducing state named by the engine's
``StateSpec`` (``core.state_spec``, a module of plain values), so this module
needs nothing from ``api`` and holds no state. The API re-exports these classes
from ``api/datastream/window.py``.

No Spark, no I/O.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from enum import Enum
from typing import Any, Generic, TypeVar

from core.state_spec import StateKind, StateSpec

__all__ = [
    "TriggerResult", "Trigger",
    "EventTimeTrigger", "ProcessingTimeTrigger",
    "ContinuousEventTimeTrigger", "ContinuousProcessingTimeTrigger",
    "CountTrigger", "PurgingTrigger", "NeverTrigger",
]

T = TypeVar("T")
W = TypeVar("W")


class TriggerResult(Enum):
    """What happens to a window pane after a trigger call.

    - CONTINUE: nothing.
    - FIRE_AND_PURGE: evaluate the window function, emit, then clear the pane's contents.
    - FIRE: evaluate the window function and emit; the contents stay.
    - PURGE: clear the pane's contents without evaluating or emitting.

    A FIRE on a pane without contents produces no output. The values are
    PyFlink's ``(fire, purge)`` pairs.
    """

    CONTINUE = (False, False)
    FIRE_AND_PURGE = (True, True)
    FIRE = (True, False)
    PURGE = (False, True)

    def is_fire(self) -> bool:
        return self.value[0]

    def is_purge(self) -> bool:
        return self.value[1]


class Trigger(ABC, Generic[T, W]):
    """Decides when a pane (the elements of one key in one window) is evaluated.

    Triggers must hold no state in attributes: the same instance is used for
    every key and window, and may be re-created. Timers and state go through
    the ``ctx`` of each call. To be used with a merging window assigner, a
    trigger returns True from ``can_merge()`` and implements ``on_merge()``.
    """

    class TriggerContext(ABC):
        """Timers and state of the current (key, window), given to every trigger call."""

        @abstractmethod
        def get_current_processing_time(self) -> int:
            """The current processing time, in epoch milliseconds."""

        @abstractmethod
        def get_metric_group(self) -> Any:
            """The metric group of the window operator (as a user function's)."""

        @abstractmethod
        def get_current_watermark(self) -> int:
            """The current event-time watermark."""

        @abstractmethod
        def register_processing_time_timer(self, time: int) -> None:
            """Calls ``on_processing_time(time, window, ctx)`` once processing time is ``time``."""

        @abstractmethod
        def register_event_time_timer(self, time: int) -> None:
            """Calls ``on_event_time(time, window, ctx)`` once the watermark reaches ``time``."""

        @abstractmethod
        def delete_processing_time_timer(self, time: int) -> None:
            """Deletes this window's processing-time timer at ``time``, if there is one."""

        @abstractmethod
        def delete_event_time_timer(self, time: int) -> None:
            """Deletes this window's event-time timer at ``time``, if there is one."""

        @abstractmethod
        def get_partitioned_state(self, state_descriptor) -> Any:
            """The state of ``state_descriptor``, scoped to the current key and window."""

    class OnMergeContext(TriggerContext):
        """The context of ``on_merge``: the merged window's, plus merging of state."""

        @abstractmethod
        def merge_partitioned_state(self, state_descriptor) -> None:
            """Merges the state of ``state_descriptor`` of the windows being merged into the
            merged window's (the sources are cleared). Reducing, aggregating and list state."""

    @abstractmethod
    def on_element(self, element: T, timestamp: int, window: W,
                   ctx: "Trigger.TriggerContext") -> TriggerResult:
        """Called for every element added to a pane."""

    @abstractmethod
    def on_processing_time(self, time: int, window: W,
                           ctx: "Trigger.TriggerContext") -> TriggerResult:
        """Called when a processing-time timer registered through ``ctx`` fires."""

    @abstractmethod
    def on_event_time(self, time: int, window: W,
                      ctx: "Trigger.TriggerContext") -> TriggerResult:
        """Called when an event-time timer registered through ``ctx`` fires."""

    def can_merge(self) -> bool:
        """True if this trigger implements ``on_merge`` and so works with merging windows."""
        return False

    @abstractmethod
    def on_merge(self, window: W, ctx: "Trigger.OnMergeContext") -> None:
        """Called when windows have been merged into ``window``."""

    @abstractmethod
    def clear(self, window: W, ctx: "Trigger.TriggerContext") -> None:
        """Deletes the timers and state this trigger holds for ``window`` (when it is purged)."""


# -- the built-ins' state -------------------------------------------------------------

def _sum(value1: int, value2: int) -> int:
    return value1 + value2


def _min(value1: int, value2: int) -> int:
    return value1 if value1 <= value2 else value2


# Flink's state names for these triggers.
_COUNT = StateSpec("count", StateKind.REDUCING, _sum, pickled=False)
_FIRE_TIME = StateSpec("fire-time", StateKind.REDUCING, _min, pickled=False)


def _interval_millis(interval: Any) -> int:
    """An interval in milliseconds from a Time/Duration (``to_milliseconds()``) or an int."""
    millis = interval.to_milliseconds() if hasattr(interval, "to_milliseconds") else interval
    if isinstance(millis, bool) or not isinstance(millis, int):
        raise TypeError(f"interval must be a Time, a Duration or an int of milliseconds, "
                        f"got {interval!r}")
    if millis <= 0:
        raise ValueError(f"interval must be positive, got {millis} ms")
    return millis


# -- time domains ---------------------------------------------------------------------

class _EventTime:
    """The clock and timers of a trigger in event time (the watermark); it ignores
    processing-time timers."""
    _now = staticmethod(lambda ctx: ctx.get_current_watermark())
    _register = staticmethod(lambda ctx, time: ctx.register_event_time_timer(time))
    _delete = staticmethod(lambda ctx, time: ctx.delete_event_time_timer(time))

    def on_processing_time(self, time: int, window: Any,
                           ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE


class _ProcessingTime:
    """The clock and timers of a trigger in processing time; it ignores event-time
    timers."""
    _now = staticmethod(lambda ctx: ctx.get_current_processing_time())
    _register = staticmethod(lambda ctx, time: ctx.register_processing_time_timer(time))
    _delete = staticmethod(lambda ctx, time: ctx.delete_processing_time_timer(time))

    def on_event_time(self, time: int, window: Any,
                      ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE


# -- built-in triggers ----------------------------------------------------------------

class _WindowEndTrigger(Trigger[T, Any]):
    """What both window-end triggers share: one timer at the window's end, in the time
    domain (``_EventTime`` or ``_ProcessingTime``) a subclass mixes in. Their per-element
    methods call the context directly."""

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: Any, ctx: Trigger.OnMergeContext) -> None:
        # Only a merged window whose end is still ahead needs a timer; in event time, the
        # element whose adding merged the windows fires one whose end the watermark passed.
        if window.max_timestamp() > self._now(ctx):
            self._register(ctx, window.max_timestamp())

    def clear(self, window: Any, ctx: Trigger.TriggerContext) -> None:
        self._delete(ctx, window.max_timestamp())

    @classmethod
    def create(cls) -> "_WindowEndTrigger":
        """A new trigger of this class (PyFlink's factory)."""
        return cls()

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class EventTimeTrigger(_EventTime, _WindowEndTrigger[T]):
    """Fires once the watermark passes the end of the window (its ``max_timestamp()``).

    An element arriving when the watermark is already past the window end (a late
    element within the allowed lateness) fires the window at once.
    """

    def on_element(self, element: T, timestamp: int, window: Any,
                   ctx: Trigger.TriggerContext) -> TriggerResult:
        if window.max_timestamp() <= ctx.get_current_watermark():
            return TriggerResult.FIRE
        ctx.register_event_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any,
                      ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE if time == window.max_timestamp() else TriggerResult.CONTINUE


class ProcessingTimeTrigger(_ProcessingTime, _WindowEndTrigger[T]):
    """Fires once processing time reaches the end of the window (its ``max_timestamp()``)."""

    def on_element(self, element: T, timestamp: int, window: Any,
                   ctx: Trigger.TriggerContext) -> TriggerResult:
        ctx.register_processing_time_timer(window.max_timestamp())
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Any,
                           ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.FIRE


class _ContinuousTrigger(Trigger[T, Any]):
    """What both continuous triggers share: the next firing time is reducing state
    ``fire-time`` of the pane, and its timer lives in the time domain (``_EventTime`` or
    ``_ProcessingTime``) a subclass mixes in."""

    def __init__(self, interval: int):
        self.interval = _interval_millis(interval)

    @classmethod
    def of(cls, interval: Any) -> "_ContinuousTrigger":
        """A trigger firing every ``interval``: a Time or Duration, or milliseconds."""
        return cls(interval)

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: Any, ctx: Trigger.OnMergeContext) -> None:
        ctx.merge_partitioned_state(_FIRE_TIME)
        next_fire_time = ctx.get_partitioned_state(_FIRE_TIME).get()
        if next_fire_time is not None:
            self._register(ctx, next_fire_time)

    def clear(self, window: Any, ctx: Trigger.TriggerContext) -> None:
        fire_time = ctx.get_partitioned_state(_FIRE_TIME)
        next_fire_time = fire_time.get()
        if next_fire_time is not None:
            self._delete(ctx, next_fire_time)
            fire_time.clear()

    def register_next_fire_timestamp(self, time: int, window: Any, ctx: Trigger.TriggerContext,
                                     fire_timestamp_state) -> None:
        """Schedules the firing one interval after ``time`` (at most the window's end)."""
        next_fire_time = min(time + self.interval, window.max_timestamp())
        fire_timestamp_state.add(next_fire_time)
        self._register(ctx, next_fire_time)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.interval})"


class ContinuousEventTimeTrigger(_EventTime, _ContinuousTrigger[T]):
    """Fires at every ``interval`` boundary of event time, and at the end of the window.

    The first element of a pane schedules a firing at the next boundary after its
    timestamp (``t - t % interval + interval``); each firing schedules the next,
    capped at ``window.max_timestamp()``. The window end fires too, so a pane's
    result can be emitted several times.

        ContinuousEventTimeTrigger.of(Time.seconds(10))
    """

    def on_element(self, element: T, timestamp: int, window: Any,
                   ctx: Trigger.TriggerContext) -> TriggerResult:
        if window.max_timestamp() <= ctx.get_current_watermark():
            return TriggerResult.FIRE
        ctx.register_event_time_timer(window.max_timestamp())
        fire_time = ctx.get_partitioned_state(_FIRE_TIME)
        if fire_time.get() is None:
            self.register_next_fire_timestamp(timestamp - timestamp % self.interval, window, ctx,
                                              fire_time)
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any,
                      ctx: Trigger.TriggerContext) -> TriggerResult:
        if time == window.max_timestamp():
            return TriggerResult.FIRE
        fire_time = ctx.get_partitioned_state(_FIRE_TIME)
        if fire_time.get() == time:
            fire_time.clear()
            self.register_next_fire_timestamp(time, window, ctx, fire_time)
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE


class ContinuousProcessingTimeTrigger(_ProcessingTime, _ContinuousTrigger[T]):
    """Fires at every ``interval`` boundary of processing time, until the window ends.

    The first element of a pane schedules a firing at the next boundary after the
    current processing time; each firing schedules the next, capped at
    ``window.max_timestamp()``. A firing at the window end schedules nothing (unlike
    Flink, whose re-registered end timer fires in a loop on an event-time window whose
    end processing time has passed); an element arriving after it schedules one more.

        ContinuousProcessingTimeTrigger.of(Time.seconds(10))
    """

    def on_element(self, element: T, timestamp: int, window: Any,
                   ctx: Trigger.TriggerContext) -> TriggerResult:
        fire_time = ctx.get_partitioned_state(_FIRE_TIME)
        if fire_time.get() is None:
            now = ctx.get_current_processing_time()
            self.register_next_fire_timestamp(now - now % self.interval, window, ctx, fire_time)
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Any,
                           ctx: Trigger.TriggerContext) -> TriggerResult:
        fire_time = ctx.get_partitioned_state(_FIRE_TIME)
        if fire_time.get() == time:
            fire_time.clear()
            # Flink re-registers the window end after firing at it; where nothing clears
            # the window then (an event-time window), that timer is due again at once and
            # fires in a loop (FLINK-35069). The last firing schedules nothing.
            if time != window.max_timestamp():
                self.register_next_fire_timestamp(time, window, ctx, fire_time)
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE


class CountTrigger(Trigger[T, Any]):
    """Fires once a pane has received ``window_size`` elements since it last fired.

    The count is reducing state of the pane; it restarts from zero after each
    firing. The pane is not purged (wrap in ``PurgingTrigger`` for that). A pane
    that never reaches the count never fires, also not at the end of input.
    """

    def __init__(self, window_size: int):
        if isinstance(window_size, bool) or not isinstance(window_size, int):
            raise TypeError(f"window_size must be an int, got {window_size!r}")
        self._window_size = window_size

    @staticmethod
    def of(window_size: int) -> "CountTrigger":
        return CountTrigger(window_size)

    def on_element(self, element: T, timestamp: int, window: Any,
                   ctx: Trigger.TriggerContext) -> TriggerResult:
        count = ctx.get_partitioned_state(_COUNT)
        count.add(1)
        if count.get() >= self._window_size:
            count.clear()
            return TriggerResult.FIRE
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Any,
                           ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any,
                      ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def can_merge(self) -> bool:
        return True

    def on_merge(self, window: Any, ctx: Trigger.OnMergeContext) -> None:
        ctx.merge_partitioned_state(_COUNT)

    def clear(self, window: Any, ctx: Trigger.TriggerContext) -> None:
        ctx.get_partitioned_state(_COUNT).clear()

    def __repr__(self) -> str:
        return f"CountTrigger({self._window_size})"


class PurgingTrigger(Trigger[T, Any]):
    """Wraps a trigger so that each of its firings also purges the pane (FIRE -> FIRE_AND_PURGE).

        PurgingTrigger.of(CountTrigger.of(100))
    """

    def __init__(self, nested_trigger: Trigger[T, Any]):
        if not isinstance(nested_trigger, Trigger):
            raise TypeError(f"PurgingTrigger needs a Trigger, got {nested_trigger!r}")
        self.nested_trigger = nested_trigger

    @staticmethod
    def of(nested_trigger: Trigger[T, Any]) -> "PurgingTrigger":
        return PurgingTrigger(nested_trigger)

    @staticmethod
    def _purging(result: TriggerResult) -> TriggerResult:
        return TriggerResult.FIRE_AND_PURGE if result.is_fire() else result

    def on_element(self, element: T, timestamp: int, window: Any,
                   ctx: Trigger.TriggerContext) -> TriggerResult:
        return self._purging(self.nested_trigger.on_element(element, timestamp, window, ctx))

    def on_processing_time(self, time: int, window: Any,
                           ctx: Trigger.TriggerContext) -> TriggerResult:
        return self._purging(self.nested_trigger.on_processing_time(time, window, ctx))

    def on_event_time(self, time: int, window: Any,
                      ctx: Trigger.TriggerContext) -> TriggerResult:
        return self._purging(self.nested_trigger.on_event_time(time, window, ctx))

    def can_merge(self) -> bool:
        return self.nested_trigger.can_merge()

    def on_merge(self, window: Any, ctx: Trigger.OnMergeContext) -> None:
        self.nested_trigger.on_merge(window, ctx)

    def clear(self, window: Any, ctx: Trigger.TriggerContext) -> None:
        self.nested_trigger.clear(window, ctx)

    def __repr__(self) -> str:
        return f"PurgingTrigger({self.nested_trigger!r})"


class NeverTrigger(Trigger[T, Any]):
    """Never fires: the default trigger of GlobalWindows."""

    def on_element(self, element: T, timestamp: int, window: Any,
                   ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_processing_time(self, time: int, window: Any,
                           ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_event_time(self, time: int, window: Any,
                      ctx: Trigger.TriggerContext) -> TriggerResult:
        return TriggerResult.CONTINUE

    def on_merge(self, window: Any, ctx: Trigger.OnMergeContext) -> None:
        pass

    def clear(self, window: Any, ctx: Trigger.TriggerContext) -> None:
        pass

    def __repr__(self) -> str:
        return "NeverTrigger()"
