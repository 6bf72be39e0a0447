"""Triggers with Flink's semantics, driven through a fake TriggerContext that records
timers and keeps state in dicts: event-time and processing-time firing, late elements,
continuous firing times, count reset, purging, merging and clearing."""
import pickle

import pytest
from hypothesis import given, settings, strategies as st

from engine.time.triggers import (
    ContinuousEventTimeTrigger, ContinuousProcessingTimeTrigger, CountTrigger,
    EventTimeTrigger, NeverTrigger, ProcessingTimeTrigger, PurgingTrigger, Trigger,
    TriggerResult,
)
from statebackends.hashmap import HashMapKeyedStateBackend
from core.state_spec import StateKind

CONTINUE, FIRE, PURGE, FIRE_AND_PURGE = (TriggerResult.CONTINUE, TriggerResult.FIRE,
                                         TriggerResult.PURGE, TriggerResult.FIRE_AND_PURGE)
MIN_WATERMARK = -2 ** 63
MAX_TIMESTAMP = 2 ** 63 - 1


# -- stand-ins ------------------------------------------------------------------------

class Win:
    """Stand-in for TimeWindow(start, end): max_timestamp() = end - 1."""

    def __init__(self, start, end):
        self.start, self.end = start, end

    def max_timestamp(self):
        return self.end - 1

    def __eq__(self, other):
        return isinstance(other, Win) and (self.start, self.end) == (other.start, other.end)

    def __hash__(self):
        return hash((self.start, self.end))

    def __repr__(self):
        return f"Win({self.start}, {self.end})"


class Global:
    """Stand-in for GlobalWindow."""

    def max_timestamp(self):
        return MAX_TIMESTAMP

    def __eq__(self, other):
        return isinstance(other, Global)

    def __hash__(self):
        return 0


class Millis:
    """Stand-in for Time/Duration: only to_milliseconds()."""

    def __init__(self, millis):
        self.millis = millis

    def to_milliseconds(self):
        return self.millis


class DictReducingState:
    def __init__(self, table, slot, reduce_function):
        self._table, self._slot, self._reduce = table, slot, reduce_function

    def get(self):
        return self._table.get(self._slot)

    def add(self, value):
        current = self._table.get(self._slot)
        self._table[self._slot] = value if current is None else self._reduce(current, value)

    def clear(self):
        self._table.pop(self._slot, None)


class FakeContext(Trigger.OnMergeContext):
    """Timers as sets of (window, time), state as {(window, name): value}, for one key."""

    def __init__(self, watermark=MIN_WATERMARK, processing_time=0):
        self.watermark = watermark
        self.processing_time = processing_time
        self.event_timers = set()
        self.processing_timers = set()
        self.state = {}
        self.window = None
        self.merged_windows = ()

    def at(self, window, merged_windows=()):
        self.window = window
        self.merged_windows = tuple(merged_windows)
        return self

    def get_current_processing_time(self):
        return self.processing_time

    def get_metric_group(self):
        return None

    def get_current_watermark(self):
        return self.watermark

    def register_processing_time_timer(self, time):
        self.processing_timers.add((self.window, time))

    def register_event_time_timer(self, time):
        self.event_timers.add((self.window, time))

    def delete_processing_time_timer(self, time):
        self.processing_timers.discard((self.window, time))

    def delete_event_time_timer(self, time):
        self.event_timers.discard((self.window, time))

    def get_partitioned_state(self, spec):
        assert spec.kind is StateKind.REDUCING
        return DictReducingState(self.state, (self.window, spec.name), spec.function)

    def merge_partitioned_state(self, spec):
        name = spec.name
        target = self.get_partitioned_state(spec)
        for source in self.merged_windows:
            value = self.state.pop((source, name), None)
            if value is not None:
                target.add(value)

    def timer_times(self, window, domain="event"):
        timers = self.event_timers if domain == "event" else self.processing_timers
        return sorted(t for w, t in timers if w == window)


class Pane:
    """Drives a trigger as the window operator would, for one key; records firings."""

    def __init__(self, trigger, ctx=None):
        self.trigger = trigger
        self.ctx = ctx or FakeContext()
        self.fired = []  # (time, window, result) of every firing

    def element(self, window, timestamp, element="x"):
        result = self.trigger.on_element(element, timestamp, window, self.ctx.at(window))
        if result.is_fire():
            self.fired.append(("element", window, result))
        return result

    def advance_watermark(self, watermark):
        self.ctx.watermark = watermark
        self._fire(self.ctx.event_timers, watermark, self.trigger.on_event_time)

    def advance_processing_time(self, now):
        self.ctx.processing_time = now
        self._fire(self.ctx.processing_timers, now, self.trigger.on_processing_time)

    def _fire(self, timers, up_to, on_timer):
        # Timers registered while firing, if due, fire in the same pass.
        while True:
            due = [timer for timer in timers if timer[1] <= up_to]
            if not due:
                return
            window, time = min(due, key=lambda timer: (timer[1], repr(timer[0])))
            timers.discard((window, time))
            result = on_timer(time, window, self.ctx.at(window))
            if result is not CONTINUE:
                self.fired.append((time, window, result))

    def fire_times(self):
        return [time for time, _, _ in self.fired]


# -- TriggerResult and the abstract classes ---------------------------------------------

def test_trigger_result_values_are_pyflinks_fire_purge_pairs():
    assert [(r.name, r.value) for r in TriggerResult] == [
        ("CONTINUE", (False, False)), ("FIRE_AND_PURGE", (True, True)),
        ("FIRE", (True, False)), ("PURGE", (False, True))]
    assert [(r.is_fire(), r.is_purge()) for r in (CONTINUE, FIRE, PURGE, FIRE_AND_PURGE)] == [
        (False, False), (True, False), (False, True), (True, True)]
    assert TriggerResult((True, False)) is FIRE
    assert repr(FIRE) == "<TriggerResult.FIRE: (True, False)>"


def test_trigger_and_contexts_are_abstract_with_pyflinks_methods():
    assert Trigger.__abstractmethods__ == {
        "on_element", "on_processing_time", "on_event_time", "on_merge", "clear"}
    assert Trigger.TriggerContext.__abstractmethods__ == {
        "get_current_processing_time", "get_metric_group", "get_current_watermark",
        "register_processing_time_timer", "register_event_time_timer",
        "delete_processing_time_timer", "delete_event_time_timer", "get_partitioned_state"}
    assert issubclass(Trigger.OnMergeContext, Trigger.TriggerContext)
    assert Trigger.OnMergeContext.__abstractmethods__ == (
        Trigger.TriggerContext.__abstractmethods__ | {"merge_partitioned_state"})
    with pytest.raises(TypeError):
        Trigger()
    with pytest.raises(TypeError):
        Trigger.TriggerContext()


class EveryOtherPurge(Trigger):
    """A user trigger: no can_merge override, returns PURGE on timers."""

    def on_element(self, element, timestamp, window, ctx):
        return CONTINUE

    def on_processing_time(self, time, window, ctx):
        return PURGE

    def on_event_time(self, time, window, ctx):
        return PURGE

    def on_merge(self, window, ctx):
        pass

    def clear(self, window, ctx):
        pass


def test_a_user_trigger_cannot_merge_by_default():
    assert EveryOtherPurge().can_merge() is False
    assert NeverTrigger().can_merge() is False


# -- EventTimeTrigger -----------------------------------------------------------------

def test_event_time_trigger_fires_when_the_watermark_reaches_the_window_max_timestamp():
    pane = Pane(EventTimeTrigger.create())
    window = Win(0, 10)
    assert pane.element(window, 3) is CONTINUE
    assert pane.element(window, 7) is CONTINUE
    assert pane.ctx.timer_times(window) == [9]  # one timer, at max_timestamp = end - 1
    pane.advance_watermark(8)
    assert pane.fired == []
    pane.advance_watermark(9)
    assert pane.fired == [(9, window, FIRE)]
    pane.advance_watermark(100)
    assert pane.fired == [(9, window, FIRE)]


def test_event_time_trigger_fires_a_late_element_at_once_without_a_timer():
    pane = Pane(EventTimeTrigger.create(), FakeContext(watermark=9))
    window = Win(0, 10)
    assert pane.element(window, 4) is FIRE  # max_timestamp 9 <= watermark 9
    assert pane.ctx.event_timers == set()
    pane.ctx.watermark = 8
    assert pane.element(window, 4) is CONTINUE


def test_event_time_trigger_ignores_other_timers_and_processing_time():
    trigger, ctx = EventTimeTrigger.create(), FakeContext()
    window = Win(0, 10)
    assert trigger.on_event_time(5, window, ctx.at(window)) is CONTINUE
    assert trigger.on_event_time(10, window, ctx) is CONTINUE
    assert trigger.on_processing_time(9, window, ctx) is CONTINUE


def test_event_time_trigger_clear_deletes_the_timer():
    pane = Pane(EventTimeTrigger.create())
    window, other = Win(0, 10), Win(10, 20)
    pane.element(window, 1)
    pane.element(other, 11)
    pane.trigger.clear(window, pane.ctx.at(window))
    assert pane.ctx.event_timers == {(other, 19)}
    pane.advance_watermark(100)
    assert pane.fired == [(19, other, FIRE)]


def test_event_time_trigger_merging_registers_the_merged_windows_timer_if_still_ahead():
    trigger = EventTimeTrigger.create()
    assert trigger.can_merge() is True
    ctx = FakeContext(watermark=5)
    a, b, merged = Win(0, 10), Win(8, 20), Win(0, 20)
    trigger.on_merge(merged, ctx.at(merged, [a, b]))
    assert ctx.event_timers == {(merged, 19)}
    ctx = FakeContext(watermark=19)
    trigger.on_merge(merged, ctx.at(merged, [a, b]))
    assert ctx.event_timers == set()  # the element being added fires it instead


def test_event_time_trigger_on_a_global_window_fires_at_max_timestamp_only():
    pane = Pane(EventTimeTrigger.create())
    pane.element(Global(), 5)
    pane.advance_watermark(10 ** 15)
    assert pane.fired == []
    pane.advance_watermark(MAX_TIMESTAMP)
    assert pane.fired == [(MAX_TIMESTAMP, Global(), FIRE)]


# -- ProcessingTimeTrigger --------------------------------------------------------------

def test_processing_time_trigger_fires_when_processing_time_reaches_the_window_end():
    pane = Pane(ProcessingTimeTrigger.create(), FakeContext(processing_time=1000))
    window = Win(1000, 2000)
    assert pane.element(window, 0) is CONTINUE
    assert pane.ctx.timer_times(window, "processing") == [1999]
    assert pane.ctx.event_timers == set()
    pane.advance_processing_time(1998)
    assert pane.fired == []
    pane.advance_processing_time(2500)
    assert pane.fired == [(1999, window, FIRE)]
    assert pane.trigger.on_event_time(1999, window, pane.ctx) is CONTINUE


def test_processing_time_trigger_merge_and_clear():
    trigger = ProcessingTimeTrigger.create()
    assert trigger.can_merge() is True
    ctx = FakeContext(processing_time=100)
    merged = Win(0, 200)
    trigger.on_merge(merged, ctx.at(merged, [Win(0, 150), Win(120, 200)]))
    assert ctx.processing_timers == {(merged, 199)}
    trigger.clear(merged, ctx.at(merged))
    assert ctx.processing_timers == set()
    ctx.processing_time = 199
    trigger.on_merge(merged, ctx.at(merged, [Win(0, 150)]))
    assert ctx.processing_timers == set()


# -- ContinuousEventTimeTrigger ---------------------------------------------------------

def test_continuous_event_time_trigger_fires_at_each_interval_and_again_at_window_end():
    pane = Pane(ContinuousEventTimeTrigger.of(Millis(30)))
    window = Win(0, 100)
    assert pane.element(window, 5) is CONTINUE
    assert pane.ctx.timer_times(window) == [30, 99]
    pane.advance_watermark(29)
    assert pane.fired == []
    pane.advance_watermark(65)
    assert pane.fire_times() == [30, 60]
    pane.advance_watermark(100)
    assert pane.fired == [(30, window, FIRE), (60, window, FIRE), (90, window, FIRE),
                          (99, window, FIRE)]


def test_continuous_event_time_trigger_first_fire_is_the_boundary_after_the_first_element():
    for timestamp, first in [(0, 10), (9, 10), (10, 20), (47, 50), (-5, 0), (-10, 0)]:
        pane = Pane(ContinuousEventTimeTrigger.of(10))
        window = Win(-100, 100)
        pane.element(window, timestamp)
        assert pane.ctx.state == {(window, "fire-time"): first}, timestamp
        # Later elements do not reschedule while a firing is pending.
        pane.element(window, 95)
        pane.element(window, -95)
        assert pane.ctx.timer_times(window) == [first, 99], timestamp


def test_continuous_event_time_trigger_caps_the_next_fire_at_the_window_end():
    pane = Pane(ContinuousEventTimeTrigger.of(Millis(1000)))
    window = Win(0, 250)
    pane.element(window, 10)
    assert pane.ctx.timer_times(window) == [249]
    pane.advance_watermark(10 ** 6)
    assert pane.fire_times() == [249]


def test_continuous_event_time_trigger_fires_a_late_element_at_once():
    pane = Pane(ContinuousEventTimeTrigger.of(10), FakeContext(watermark=150))
    window = Win(0, 100)
    assert pane.element(window, 50) is FIRE
    assert pane.ctx.event_timers == set() and pane.ctx.state == {}


def test_continuous_event_time_trigger_clear_deletes_the_pending_fire_and_its_state():
    pane = Pane(ContinuousEventTimeTrigger.of(10))
    window = Win(0, 100)
    pane.element(window, 15)
    pane.advance_watermark(25)
    assert pane.fire_times() == [20]
    pane.trigger.clear(window, pane.ctx.at(window))
    assert pane.ctx.state == {}
    assert pane.ctx.timer_times(window) == [99]  # the window end timer is the operator's cleanup


def test_continuous_event_time_trigger_ignores_a_stale_timer():
    trigger, ctx = ContinuousEventTimeTrigger.of(10), FakeContext()
    window = Win(0, 100)
    trigger.on_element("x", 15, window, ctx.at(window))
    assert trigger.on_event_time(30, window, ctx) is CONTINUE
    assert trigger.on_processing_time(20, window, ctx) is CONTINUE
    assert ctx.state == {(window, "fire-time"): 20}


def test_continuous_event_time_trigger_merging_keeps_the_earliest_next_fire():
    trigger, ctx = ContinuousEventTimeTrigger.of(Millis(30)), FakeContext()
    assert trigger.can_merge() is True
    a, b, merged = Win(40, 90), Win(0, 50), Win(0, 90)
    trigger.on_element("x", 45, a, ctx.at(a))
    trigger.on_element("x", 5, b, ctx.at(b))
    assert ctx.state == {(a, "fire-time"): 60, (b, "fire-time"): 30}
    trigger.on_merge(merged, ctx.at(merged, [a, b]))
    assert ctx.state == {(merged, "fire-time"): 30}
    assert ctx.timer_times(merged) == [30]
    ctx = FakeContext()
    trigger.on_merge(merged, ctx.at(merged, [Win(0, 10)]))  # no pending fire: no timer
    assert ctx.event_timers == set() and ctx.state == {}


def continuous_reference(interval, window_end, timestamps, watermarks):
    """Brute force: the firings of one window under ContinuousEventTimeTrigger, each
    element followed by a watermark advance. The first on-time element fixes the fire
    times: every ``interval`` boundary after its timestamp, and the window end."""
    max_timestamp = window_end - 1
    fired, fire_times, watermark = [], None, MIN_WATERMARK
    for timestamp, next_watermark in zip(timestamps, watermarks):
        if max_timestamp <= watermark:
            fired.append("element")
        elif fire_times is None:
            first = timestamp - timestamp % interval + interval
            fire_times = list(range(first, max_timestamp, interval)) + [max_timestamp]
        watermark = next_watermark
        fired.extend(t for t in fire_times or () if t <= watermark and t not in fired)
    return fired


@settings(max_examples=300, deadline=None)
@given(interval=st.integers(1, 40), start=st.integers(-60, 60), size=st.integers(1, 120),
       steps=st.lists(st.tuples(st.integers(-80, 200), st.integers(0, 60)), min_size=1,
                      max_size=8))
def test_continuous_event_time_trigger_matches_a_brute_force_reference(interval, start, size,
                                                                        steps):
    window = Win(start, start + size)
    timestamps = [start + t % size for t, _ in steps]  # every element belongs to the window
    watermarks, watermark = [], start - 50
    for _, advance in steps:
        watermark += advance
        watermarks.append(watermark)
    pane = Pane(ContinuousEventTimeTrigger.of(interval))
    for timestamp, next_watermark in zip(timestamps, watermarks):
        pane.element(window, timestamp)
        pane.advance_watermark(next_watermark)
    assert [time for time, _, result in pane.fired] == continuous_reference(
        interval, start + size, timestamps, watermarks)
    assert all(result is FIRE for _, _, result in pane.fired)


# -- ContinuousProcessingTimeTrigger ----------------------------------------------------

def test_continuous_processing_time_trigger_fires_at_each_interval_until_the_window_end():
    pane = Pane(ContinuousProcessingTimeTrigger.of(Millis(100)),
                FakeContext(processing_time=1234))
    window = Win(1000, 1500)
    assert pane.element(window, -7) is CONTINUE  # the element timestamp plays no part
    assert pane.ctx.timer_times(window, "processing") == [1300]
    assert pane.ctx.event_timers == set()
    pane.ctx.processing_time = 1290
    pane.element(window, 0)  # pending: not rescheduled
    assert pane.ctx.timer_times(window, "processing") == [1300]
    pane.advance_processing_time(1450)
    assert pane.fire_times() == [1300, 1400]
    pane.advance_processing_time(1499)
    assert pane.fired == [(1300, window, FIRE), (1400, window, FIRE), (1499, window, FIRE)]
    assert pane.ctx.processing_timers == set() and pane.ctx.state == {}


def test_continuous_processing_time_trigger_on_an_ended_event_time_window_fires_once_per_element():
    # Processing time far past the end of an event-time window (e.g. replaying history):
    # Flink fires in a loop here (FLINK-35069); one firing per element is what is meant.
    pane = Pane(ContinuousProcessingTimeTrigger.of(10), FakeContext(processing_time=10 ** 9))
    window = Win(0, 100)
    pane.element(window, 5)
    assert pane.ctx.timer_times(window, "processing") == [99]
    pane.advance_processing_time(10 ** 9 + 1)
    assert pane.fire_times() == [99]
    assert pane.ctx.processing_timers == set() and pane.ctx.state == {}
    pane.element(window, 6)
    pane.advance_processing_time(10 ** 9 + 2)
    assert pane.fire_times() == [99, 99]


def test_continuous_processing_time_trigger_on_a_global_window_fires_forever():
    pane = Pane(ContinuousProcessingTimeTrigger.of(50), FakeContext(processing_time=20))
    pane.element(Global(), 0)
    pane.advance_processing_time(260)
    assert pane.fire_times() == [50, 100, 150, 200, 250]
    assert pane.ctx.timer_times(Global(), "processing") == [300]


def test_continuous_processing_time_trigger_ignores_stale_timers_event_time_and_clears():
    trigger, ctx = ContinuousProcessingTimeTrigger.of(10), FakeContext(processing_time=3)
    window = Win(0, 100)
    trigger.on_element("x", 0, window, ctx.at(window))
    assert trigger.on_processing_time(20, window, ctx) is CONTINUE
    assert trigger.on_event_time(10, window, ctx) is CONTINUE
    trigger.clear(window, ctx)
    assert ctx.processing_timers == set() and ctx.state == {}
    trigger.clear(window, ctx)  # nothing pending: nothing to delete


def test_continuous_processing_time_trigger_merging_keeps_the_earliest_next_fire():
    trigger, ctx = ContinuousProcessingTimeTrigger.of(10), FakeContext()
    assert trigger.can_merge() is True
    a, b, merged = Win(0, 100), Win(50, 150), Win(0, 150)
    ctx.processing_time = 37
    trigger.on_element("x", 0, a, ctx.at(a))
    ctx.processing_time = 12
    trigger.on_element("x", 0, b, ctx.at(b))
    trigger.on_merge(merged, ctx.at(merged, [a, b]))
    assert ctx.state == {(merged, "fire-time"): 20}
    assert ctx.timer_times(merged, "processing") == [20]


# -- CountTrigger ------------------------------------------------------------------------

def test_count_trigger_fires_at_the_count_and_restarts():
    pane = Pane(CountTrigger.of(3))
    window = Win(0, 1)
    results = [pane.element(window, i) for i in range(7)]
    assert results == [CONTINUE, CONTINUE, FIRE, CONTINUE, CONTINUE, FIRE, CONTINUE]
    assert pane.ctx.state == {(window, "count"): 1}


def test_count_trigger_that_never_fills_never_fires():
    pane = Pane(CountTrigger.of(5))
    window = Win(0, 1)
    for i in range(4):
        assert pane.element(window, i) is CONTINUE
    pane.advance_watermark(MAX_TIMESTAMP)
    pane.advance_processing_time(MAX_TIMESTAMP)
    assert pane.fired == []
    assert pane.ctx.event_timers == set() and pane.ctx.processing_timers == set()


def test_count_trigger_counts_each_window_apart_and_clear_resets():
    trigger, ctx = CountTrigger.of(2), FakeContext()
    a, b = Win(0, 1), Win(1, 2)
    assert trigger.on_element("x", 0, a, ctx.at(a)) is CONTINUE
    assert trigger.on_element("x", 0, b, ctx.at(b)) is CONTINUE
    trigger.clear(b, ctx.at(b))
    assert trigger.on_element("x", 0, b, ctx.at(b)) is CONTINUE
    assert trigger.on_element("x", 0, a, ctx.at(a)) is FIRE
    assert trigger.on_event_time(0, a, ctx) is CONTINUE
    assert trigger.on_processing_time(0, a, ctx) is CONTINUE


def test_count_trigger_merging_adds_the_counts():
    trigger, ctx = CountTrigger.of(3), FakeContext()
    assert trigger.can_merge() is True
    a, b, merged = Win(0, 10), Win(5, 15), Win(0, 15)
    trigger.on_element("x", 0, a, ctx.at(a))
    trigger.on_element("x", 5, b, ctx.at(b))
    trigger.on_merge(merged, ctx.at(merged, [a, b]))
    assert ctx.state == {(merged, "count"): 2}
    assert trigger.on_element("x", 6, merged, ctx.at(merged)) is FIRE


class BackendContext(FakeContext):
    """State from the real hashmap keyed state backend, namespace = window."""

    def __init__(self):
        super().__init__()
        self.backend = HashMapKeyedStateBackend("window-op", (0, 15), 16, 10)
        self.backend.set_current_key("k")

    def at(self, window, merged_windows=()):
        self.backend.set_current_namespace(window)
        return super().at(window, merged_windows)

    def get_partitioned_state(self, spec):
        return self.backend.state(spec)


def test_builtin_state_specs_work_with_the_hashmap_backend():
    ctx = BackendContext()
    count = CountTrigger.of(2)
    a, b = Win(0, 10), Win(10, 20)
    assert count.on_element("x", 0, a, ctx.at(a)) is CONTINUE
    assert count.on_element("x", 10, b, ctx.at(b)) is CONTINUE
    assert count.on_element("x", 0, a, ctx.at(a)) is FIRE
    continuous = ContinuousEventTimeTrigger.of(Millis(4))
    continuous.on_element("x", 13, b, ctx.at(b))
    continuous.on_element("x", 2, a, ctx.at(a))
    assert sorted(ctx.backend.entries(), key=repr) == sorted([
        ("count", "k", b, 1), ("fire-time", "k", b, 16), ("fire-time", "k", a, 4)], key=repr)
    assert ctx.backend.state_kinds() == {"count": "reducing", "fire-time": "reducing"}


# -- PurgingTrigger ----------------------------------------------------------------------

def test_purging_trigger_turns_fire_into_fire_and_purge():
    pane = Pane(PurgingTrigger.of(CountTrigger.of(2)))
    window = Win(0, 1)
    assert [pane.element(window, i) for i in range(4)] == [
        CONTINUE, FIRE_AND_PURGE, CONTINUE, FIRE_AND_PURGE]
    pane = Pane(PurgingTrigger.of(EventTimeTrigger.create()))
    window = Win(0, 10)
    pane.element(window, 1)
    pane.advance_watermark(9)
    assert pane.fired == [(9, window, FIRE_AND_PURGE)]
    pane = Pane(PurgingTrigger.of(ProcessingTimeTrigger.create()))
    pane.element(window, 1)
    pane.advance_processing_time(9)
    assert pane.fired == [(9, window, FIRE_AND_PURGE)]


def test_purging_trigger_passes_continue_and_purge_through():
    trigger, ctx = PurgingTrigger.of(EveryOtherPurge()), FakeContext()
    window = Win(0, 1)
    assert trigger.on_element("x", 0, window, ctx.at(window)) is CONTINUE
    assert trigger.on_event_time(0, window, ctx) is PURGE
    assert trigger.on_processing_time(0, window, ctx) is PURGE
    assert trigger.can_merge() is False


def test_purging_trigger_delegates_merge_and_clear():
    trigger = PurgingTrigger.of(ContinuousEventTimeTrigger.of(10))
    assert trigger.can_merge() is True
    ctx = FakeContext()
    a, merged = Win(0, 50), Win(0, 80)
    trigger.on_element("x", 3, a, ctx.at(a))
    trigger.on_merge(merged, ctx.at(merged, [a]))
    assert ctx.state == {(merged, "fire-time"): 10}
    assert ctx.timer_times(merged) == [10]
    trigger.clear(merged, ctx.at(merged))
    assert ctx.state == {} and ctx.timer_times(merged) == []
    with pytest.raises(TypeError):
        PurgingTrigger.of(CountTrigger)


# -- NeverTrigger ------------------------------------------------------------------------

def test_never_trigger_never_fires_and_holds_nothing():
    pane = Pane(NeverTrigger())
    for i in range(5):
        assert pane.element(Global(), i) is CONTINUE
    pane.advance_watermark(MAX_TIMESTAMP)
    pane.advance_processing_time(MAX_TIMESTAMP)
    trigger, ctx = pane.trigger, pane.ctx
    assert trigger.on_event_time(MAX_TIMESTAMP, Global(), ctx) is CONTINUE
    assert trigger.on_processing_time(MAX_TIMESTAMP, Global(), ctx) is CONTINUE
    trigger.on_merge(Global(), ctx.at(Global(), [Global()]))
    trigger.clear(Global(), ctx)
    assert pane.fired == [] and ctx.state == {}
    assert ctx.event_timers == set() and ctx.processing_timers == set()


# -- construction ------------------------------------------------------------------------

@pytest.mark.parametrize("cls", [ContinuousEventTimeTrigger, ContinuousProcessingTimeTrigger])
def test_continuous_interval_takes_time_duration_or_millis(cls):
    assert cls.of(Millis(1500)).interval == 1500
    assert cls.of(250).interval == 250
    assert cls(Millis(7)).interval == 7
    for bad in (0, -10, Millis(0)):
        with pytest.raises(ValueError):
            cls.of(bad)
    for bad in (1.5, True, "10", None):
        with pytest.raises(TypeError):
            cls.of(bad)


def test_count_trigger_rejects_a_non_int_size():
    for bad in (2.0, "3", None, True):
        with pytest.raises(TypeError):
            CountTrigger.of(bad)


def test_triggers_have_reprs_and_pickle():
    triggers = [EventTimeTrigger.create(), ProcessingTimeTrigger.create(),
                ContinuousEventTimeTrigger.of(10), ContinuousProcessingTimeTrigger.of(20),
                CountTrigger.of(3), PurgingTrigger.of(CountTrigger.of(4)), NeverTrigger()]
    assert [repr(t) for t in triggers] == [
        "EventTimeTrigger()", "ProcessingTimeTrigger()", "ContinuousEventTimeTrigger(10)",
        "ContinuousProcessingTimeTrigger(20)", "CountTrigger(3)",
        "PurgingTrigger(CountTrigger(4))", "NeverTrigger()"]
    assert [repr(pickle.loads(pickle.dumps(t))) for t in triggers] == [repr(t) for t in triggers]
    # A pickled count trigger still drives state the same way.
    trigger, ctx = pickle.loads(pickle.dumps(CountTrigger.of(2))), FakeContext()
    window = Win(0, 1)
    assert [trigger.on_element("x", 0, window, ctx.at(window)) for _ in range(2)] == [
        CONTINUE, FIRE]
