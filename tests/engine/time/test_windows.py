"""Windows and window assigners: boundaries (pinned against PyFlink 2.3.0's assigners),
parameter errors, count assigners on keyed state, default triggers, and the merging
window set (transcripts, plus a property test against a brute-force interval union)."""
import pickle
import sys
import types

import pytest
from hypothesis import given, settings, strategies as st

import engine.time
from engine.runtime.context import StreamingRuntimeContext
from engine.time.windows import (
    MAX_LONG, MIN_LONG, CountSlidingWindowAssigner, CountTumblingWindowAssigner, CountWindow,
    DynamicEventTimeSessionWindows, DynamicProcessingTimeSessionWindows,
    EventTimeSessionWindows, GlobalWindow, GlobalWindows, MergingWindowAssigner,
    MergingWindowSet, ProcessingTimeSessionWindows, SessionWindowTimeGapExtractor,
    SlidingEventTimeWindows, SlidingProcessingTimeWindows, TimeWindow,
    TumblingEventTimeWindows, TumblingProcessingTimeWindows, Window, WindowAssigner,
)
from statebackends.base import VOID_NAMESPACE
from statebackends.hashmap import HashMapKeyedStateBackend
from core.state_spec import StateKind, StateSpec

W = TimeWindow


class Ms:
    """A Time/Duration stand-in: anything with ``to_milliseconds()``."""

    def __init__(self, ms):
        self.ms = ms

    def to_milliseconds(self):
        return self.ms


def seconds(n):
    return Ms(n * 1000)


class ProcessingTimeContext(WindowAssigner.WindowAssignerContext):

    def __init__(self, now, runtime_context=None):
        self.now = now
        self.runtime_context = runtime_context

    def get_current_processing_time(self):
        return self.now

    def get_runtime_context(self):
        return self.runtime_context


class GapOf(SessionWindowTimeGapExtractor):
    """The element is its own gap."""

    def extract(self, element):
        return element


# -- TimeWindow, CountWindow, GlobalWindow ------------------------------------------------

def test_time_window_basics():
    w = W(0, 5000)
    assert repr(w) == "TimeWindow(start=0, end=5000)"
    assert (w.start, w.end, w.max_timestamp()) == (0, 5000, 4999)
    assert isinstance(w, Window)
    assert w == W(0, 5000) and hash(w) == hash(W(0, 5000))
    assert w != W(0, 5001) and w != CountWindow(0) and w != (0, 5000)
    assert sorted([W(5, 6), W(0, 9), W(0, 3), W(-2, 100)]) == [W(-2, 100), W(0, 3), W(0, 9),
                                                               W(5, 6)]
    assert W(0, 3) < W(0, 4) <= W(0, 4) < W(1, 2) and W(1, 2) > W(0, 9) >= W(0, 9)
    with pytest.raises(TypeError):
        W(0, 1) < CountWindow(1)
    assert pickle.loads(pickle.dumps(w)) == w
    assert {W(0, 5): "a"}[W(0, 5)] == "a"


def test_time_window_intersects_and_cover():
    # Touching windows intersect (so session windows [t, t+gap) that touch merge), as in PyFlink.
    assert W(0, 5).intersects(W(5, 10)) and W(5, 10).intersects(W(0, 5))
    assert not W(0, 5).intersects(W(6, 10)) and not W(6, 10).intersects(W(0, 5))
    assert W(0, 10).intersects(W(2, 3))
    assert W(0, 5).cover(W(3, 9)) == W(0, 9)
    assert W(3, 4).cover(W(-1, 2)) == W(-1, 4)


@pytest.mark.parametrize("timestamp, offset, size, start", [
    # Observed from PyFlink 2.3.0 TimeWindow.get_window_start_with_offset.
    (-1, 0, 5, -5), (-5, 0, 5, -5), (-6, 0, 5, -10), (7, 2, 5, 7), (1, 2, 5, -3), (-3, -2, 5, -7),
    (0, 0, 5, 0), (4, 0, 5, 0), (5, 0, 5, 5),
])
def test_get_window_start_with_offset(timestamp, offset, size, start):
    assert TimeWindow.get_window_start_with_offset(timestamp, offset, size) == start


class Merges(MergingWindowAssigner.MergeCallback):

    def __init__(self):
        self.merges = []

    def merge(self, to_be_merged, merge_result):
        self.merges.append((sorted(to_be_merged), merge_result))


def test_time_window_merge_windows():
    merges = Merges()
    TimeWindow.merge_windows([W(11, 13), W(0, 5), W(20, 21), W(5, 8), W(10, 12)], merges)
    # Same groups as PyFlink 2.3.0 reports.
    assert merges.merges == [([W(0, 5), W(5, 8)], W(0, 8)), ([W(10, 12), W(11, 13)], W(10, 13))]
    merges = Merges()
    TimeWindow.merge_windows([W(0, 10), W(2, 3), W(9, 12), W(13, 14)], merges)
    assert merges.merges == [([W(0, 10), W(2, 3), W(9, 12)], W(0, 12))]
    merges = Merges()
    TimeWindow.merge_windows([W(0, 1), W(3, 4)], merges)
    assert merges.merges == []


def test_count_and_global_windows():
    assert repr(CountWindow(3)) == "CountWindow(id=3)"
    assert CountWindow(3).max_timestamp() == MAX_LONG == 2 ** 63 - 1
    assert CountWindow(3) == CountWindow(3) and hash(CountWindow(3)) == hash(CountWindow(3))
    assert CountWindow(3) != CountWindow(4) and CountWindow(2) < CountWindow(3)
    assert pickle.loads(pickle.dumps(CountWindow(7))) == CountWindow(7)
    g = GlobalWindow.get()
    assert g is GlobalWindow.get() is GlobalWindow() and g == GlobalWindow.get()
    assert repr(g) == "GlobalWindow" and g.max_timestamp() == MAX_LONG
    assert pickle.loads(pickle.dumps(g)) is g
    assert GlobalWindows.create().assign_windows("x", 5, None) == [g]


# -- time assigners: boundaries observed from PyFlink 2.3.0 ----------------------------------

@pytest.mark.parametrize("assigner, timestamp, expected", [
    # TumblingEventTimeWindows.of(Time.seconds(5))
    *[(TumblingEventTimeWindows.of(seconds(5)), ts, [W(s, e)]) for ts, (s, e) in [
        (0, (0, 5000)), (1, (0, 5000)), (4999, (0, 5000)), (5000, (5000, 10000)),
        (-1, (-5000, 0)), (-5000, (-5000, 0)), (-5001, (-10000, -5000))]],
    # TumblingEventTimeWindows.of(Time.seconds(5), Time.seconds(1))
    *[(TumblingEventTimeWindows.of(seconds(5), seconds(1)), ts, [W(s, e)]) for ts, (s, e) in [
        (0, (-4000, 1000)), (999, (-4000, 1000)), (1000, (1000, 6000)), (5999, (1000, 6000)),
        (6000, (6000, 11000)), (-1, (-4000, 1000)), (-4000, (-4000, 1000)),
        (-4001, (-9000, -4000))]],
    # TumblingEventTimeWindows.of(Time.seconds(5), Time.milliseconds(-1500))
    *[(TumblingEventTimeWindows.of(seconds(5), Ms(-1500)), ts, [W(s, e)]) for ts, (s, e) in [
        (0, (-1500, 3500)), (3499, (-1500, 3500)), (3500, (3500, 8500)),
        (-1501, (-6500, -1500)), (-1500, (-1500, 3500)), (-6500, (-6500, -1500)),
        (-6501, (-11500, -6500))]],
    # SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5)): latest start first
    (SlidingEventTimeWindows.of(seconds(10), seconds(5)), 0, [W(0, 10000), W(-5000, 5000)]),
    (SlidingEventTimeWindows.of(seconds(10), seconds(5)), 4999, [W(0, 10000), W(-5000, 5000)]),
    (SlidingEventTimeWindows.of(seconds(10), seconds(5)), 5000, [W(5000, 15000), W(0, 10000)]),
    (SlidingEventTimeWindows.of(seconds(10), seconds(5)), -1, [W(-5000, 5000), W(-10000, 0)]),
    (SlidingEventTimeWindows.of(seconds(10), seconds(5)), -5001,
     [W(-10000, 0), W(-15000, -5000)]),
    # SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(3), Time.seconds(1))
    (SlidingEventTimeWindows.of(seconds(10), seconds(3), seconds(1)), 0,
     [W(-2000, 8000), W(-5000, 5000), W(-8000, 2000)]),
    (SlidingEventTimeWindows.of(seconds(10), seconds(3), seconds(1)), 1000,
     [W(1000, 11000), W(-2000, 8000), W(-5000, 5000), W(-8000, 2000)]),
    (SlidingEventTimeWindows.of(seconds(10), seconds(3), seconds(1)), -1,
     [W(-2000, 8000), W(-5000, 5000), W(-8000, 2000)]),
    (SlidingEventTimeWindows.of(seconds(10), seconds(3), seconds(1)), 7000,
     [W(7000, 17000), W(4000, 14000), W(1000, 11000), W(-2000, 8000)]),
    # SlidingEventTimeWindows.of(Time.seconds(2), Time.seconds(5)): gaps between windows
    *[(SlidingEventTimeWindows.of(seconds(2), seconds(5)), ts, expected) for ts, expected in [
        (0, [W(0, 2000)]), (1999, [W(0, 2000)]), (2000, []), (4999, []), (5000, [W(5000, 7000)]),
        (-1, []), (-3000, []), (-3001, [W(-5000, -3000)])]],
    # EventTimeSessionWindows.with_gap(Time.seconds(3))
    (EventTimeSessionWindows.with_gap(seconds(3)), -7, [W(-7, 2993)]),
    (EventTimeSessionWindows.with_dynamic_gap(GapOf()), 1000, [W(1000, 1042)]),
    (DynamicEventTimeSessionWindows.with_dynamic_gap(GapOf()), 1000, [W(1000, 1042)]),
])
def test_event_time_assigners_match_pyflink(assigner, timestamp, expected):
    element = 42
    assert list(assigner.assign_windows(element, timestamp, None)) == expected
    assert assigner.is_event_time()


@pytest.mark.parametrize("assigner, now, expected", [
    # Observed from PyFlink 2.3.0 with get_current_processing_time() returning ``now``.
    (TumblingProcessingTimeWindows.of(seconds(5)), 12345, [W(10000, 15000)]),
    (TumblingProcessingTimeWindows.of(seconds(5), Ms(-1500)), -1501, [W(-6500, -1500)]),
    (SlidingProcessingTimeWindows.of(seconds(10), seconds(5), seconds(2)), 12345,
     [W(12000, 22000), W(7000, 17000)]),
    (ProcessingTimeSessionWindows.with_gap(seconds(3)), 100, [W(100, 3100)]),
    (ProcessingTimeSessionWindows.with_dynamic_gap(GapOf()), 100, [W(100, 142)]),
    (DynamicProcessingTimeSessionWindows.with_dynamic_gap(GapOf()), 100, [W(100, 142)]),
])
def test_processing_time_assigners_use_the_context_clock(assigner, now, expected):
    # The element's timestamp (here -7) plays no part.
    assert list(assigner.assign_windows(42, -7, ProcessingTimeContext(now))) == expected
    assert not assigner.is_event_time()


def test_plain_ints_and_api_time_objects_are_accepted():
    from api.common.time import Duration, Time
    for size in (5000, Time.seconds(5), Duration.of_seconds(5), Ms(5000)):
        assert TumblingEventTimeWindows.of(size).assign_windows(0, 7001, None) == [W(5000, 10000)]
    assert (SlidingEventTimeWindows.of(Duration.of_seconds(10), Time.seconds(5), 1000)
            .assign_windows(0, 0, None) == [W(-4000, 6000), W(-9000, 1000)])
    assert EventTimeSessionWindows.with_gap(Time.minutes(1)).assign_windows(0, 0, None) == \
        [W(0, 60000)]
    with pytest.raises(TypeError, match="size must be a Time, a Duration or an int"):
        TumblingEventTimeWindows.of("5s")
    with pytest.raises(TypeError):
        TumblingEventTimeWindows.of(5.0)


def test_reprs_match_pyflink():
    assert repr(TumblingEventTimeWindows.of(seconds(5))) == "TumblingEventTimeWindows(5000, 0)"
    assert repr(TumblingProcessingTimeWindows.of(seconds(5), seconds(1))) == \
        "TumblingProcessingTimeWindows(5000, 1000)"
    assert repr(SlidingEventTimeWindows.of(seconds(10), seconds(5))) == \
        "SlidingEventTimeWindows(10000, 5000, 0)"
    assert repr(EventTimeSessionWindows.with_gap(seconds(3))) == "EventTimeSessionWindows(3000)"
    assert repr(GlobalWindows.create()) == "GlobalWindows()"
    assert repr(CountTumblingWindowAssigner.of(3)) == "CountTumblingWindowAssigner(3)"
    assert repr(CountSlidingWindowAssigner.of(3, 2)) == "CountSlidingWindowAssigner(3, 2)"


# -- parameter errors (messages as Flink's) ---------------------------------------------------

TUMBLING = "parameters must satisfy abs\\(offset\\) < size"
SLIDING = "parameters must satisfy abs\\(offset\\) < slide and size > 0"
SESSION = "parameters must satisfy 0 < size"


@pytest.mark.parametrize("build, message", [
    (lambda: TumblingEventTimeWindows.of(seconds(5), seconds(5)),
     "TumblingEventTimeWindows " + TUMBLING),
    (lambda: TumblingEventTimeWindows.of(seconds(5), seconds(-5)), TUMBLING),
    (lambda: TumblingEventTimeWindows.of(seconds(0)), TUMBLING),
    (lambda: TumblingEventTimeWindows.of(Ms(-10)), TUMBLING),
    (lambda: TumblingProcessingTimeWindows.of(seconds(1), seconds(-1)),
     "TumblingProcessingTimeWindows " + TUMBLING),
    (lambda: SlidingEventTimeWindows.of(seconds(0), seconds(5)),
     "SlidingEventTimeWindows " + SLIDING),
    (lambda: SlidingEventTimeWindows.of(seconds(5), seconds(2), seconds(-2)), SLIDING),
    (lambda: SlidingEventTimeWindows.of(seconds(5), seconds(0)), SLIDING),
    (lambda: SlidingEventTimeWindows.of(seconds(5), Ms(-1)), SLIDING),
    (lambda: SlidingProcessingTimeWindows.of(seconds(1), seconds(0)),
     "SlidingProcessingTimeWindows " + SLIDING),
    (lambda: EventTimeSessionWindows.with_gap(seconds(0)), "EventTimeSessionWindows " + SESSION),
    (lambda: ProcessingTimeSessionWindows.with_gap(seconds(-1)),
     "ProcessingTimeSessionWindows " + SESSION),
    (lambda: CountTumblingWindowAssigner.of(0), "window_size must be > 0"),
    (lambda: CountSlidingWindowAssigner.of(3, 0), "window_slide must be > 0"),
    (lambda: CountSlidingWindowAssigner.of(-1, 1), "window_size must be > 0"),
])
def test_bad_parameters_are_rejected(build, message):
    with pytest.raises(ValueError, match=message):
        build()


@pytest.mark.parametrize("assigner", [
    EventTimeSessionWindows.with_dynamic_gap(GapOf()),
    ProcessingTimeSessionWindows.with_dynamic_gap(GapOf()),
])
@pytest.mark.parametrize("gap", [0, -5])
def test_dynamic_gap_must_be_positive(assigner, gap):
    with pytest.raises(ValueError, match="Dynamic session time gap must satisfy 0 < gap"):
        assigner.assign_windows(gap, 10, ProcessingTimeContext(10))


@pytest.mark.parametrize("assigner", [
    TumblingEventTimeWindows.of(1000), SlidingEventTimeWindows.of(1000, 500),
    EventTimeSessionWindows.with_gap(1000), EventTimeSessionWindows.with_dynamic_gap(GapOf()),
])
@pytest.mark.parametrize("timestamp", [MIN_LONG, None])
def test_event_time_assigners_need_a_timestamp(assigner, timestamp):
    with pytest.raises(ValueError, match="Record has Java Long.MIN_VALUE timestamp"):
        assigner.assign_windows(5, timestamp, None)


# -- count assigners on keyed state ------------------------------------------------------------

def keyed_context():
    backend = HashMapKeyedStateBackend("window", (0, 15), 16)
    runtime_context = StreamingRuntimeContext("window", 0, 1, 16, 0, {}, backend)
    return backend, ProcessingTimeContext(0, runtime_context)


def count_windows(assigner, keys):
    backend, context = keyed_context()
    out = []
    for key in keys:
        backend.set_current_key(key)
        out.append([w.id for w in assigner.assign_windows(key, 0, context)])
    return backend, out


@pytest.mark.parametrize("assigner, expected", [
    # Observed from PyFlink 2.3.0 (window ids of elements 0..7 of one key).
    (CountTumblingWindowAssigner.of(3), [[0], [0], [0], [1], [1], [1], [2], [2]]),
    (CountSlidingWindowAssigner.of(3, 2), [[0], [0], [1, 0], [1], [2, 1], [2], [3, 2], [3]]),
    (CountSlidingWindowAssigner.of(2, 3), [[0], [0], [], [1], [1], [], [2], [2]]),
    (CountSlidingWindowAssigner.of(4, 1), [[0], [1, 0], [2, 1, 0], [3, 2, 1, 0], [4, 3, 2, 1],
                                           [5, 4, 3, 2], [6, 5, 4, 3], [7, 6, 5, 4]]),
])
def test_count_assigners_match_pyflink(assigner, expected):
    _, out = count_windows(assigner, ["a"] * 8)
    assert out == expected
    assert not assigner.is_event_time()


def test_count_assigners_count_per_key_in_keyed_value_state():
    backend, out = count_windows(CountTumblingWindowAssigner.of(2), ["a", "b", "a", "a", "b", "c"])
    assert out == [[0], [0], [0], [1], [0], [0]]
    table, _ = backend.value_table(StateSpec("tumble-count-assigner", StateKind.VALUE))
    assert table == {("a", VOID_NAMESPACE): 3, ("b", VOID_NAMESPACE): 2, ("c", VOID_NAMESPACE): 1}
    backend, _ = count_windows(CountSlidingWindowAssigner.of(2, 1), ["a", "b"])
    assert "slide-count-assigner" in set(backend.state_kinds())


# -- default triggers (imported lazily from engine.time.triggers) -------------------------------

@pytest.fixture
def fake_triggers(monkeypatch):
    module = types.ModuleType("engine.time.triggers")

    class Made:
        def __init__(self, name, *args):
            self.made = (name, *args)

    for name in ("EventTimeTrigger", "ProcessingTimeTrigger"):
        setattr(module, name, type(name, (), {"create": staticmethod(
            lambda name=name: Made(name))}))
    module.CountTrigger = type("CountTrigger", (), {"of": staticmethod(
        lambda n: Made("CountTrigger", n))})
    module.NeverTrigger = lambda: Made("NeverTrigger")
    monkeypatch.setitem(sys.modules, "engine.time.triggers", module)
    monkeypatch.setattr(engine.time, "triggers", module, raising=False)
    return module


@pytest.mark.parametrize("assigner, made", [
    (TumblingEventTimeWindows.of(1000), ("EventTimeTrigger",)),
    (SlidingEventTimeWindows.of(1000, 500), ("EventTimeTrigger",)),
    (EventTimeSessionWindows.with_gap(1000), ("EventTimeTrigger",)),
    (EventTimeSessionWindows.with_dynamic_gap(GapOf()), ("EventTimeTrigger",)),
    (TumblingProcessingTimeWindows.of(1000), ("ProcessingTimeTrigger",)),
    (SlidingProcessingTimeWindows.of(1000, 500), ("ProcessingTimeTrigger",)),
    (ProcessingTimeSessionWindows.with_gap(1000), ("ProcessingTimeTrigger",)),
    (ProcessingTimeSessionWindows.with_dynamic_gap(GapOf()), ("ProcessingTimeTrigger",)),
    (GlobalWindows.create(), ("NeverTrigger",)),
    (CountTumblingWindowAssigner.of(3), ("CountTrigger", 3)),
    (CountSlidingWindowAssigner.of(4, 2), ("CountTrigger", 4)),
])
def test_default_triggers_as_pyflink(fake_triggers, assigner, made):
    assert assigner.get_default_trigger(None).made == made


def test_merging_assigners():
    for assigner in (EventTimeSessionWindows.with_gap(5), ProcessingTimeSessionWindows.with_gap(5),
                     EventTimeSessionWindows.with_dynamic_gap(GapOf()),
                     ProcessingTimeSessionWindows.with_dynamic_gap(GapOf())):
        assert isinstance(assigner, MergingWindowAssigner)
        merges = Merges()
        assigner.merge_windows([W(0, 5), W(5, 8), W(9, 10)], merges)
        assert merges.merges == [([W(0, 5), W(5, 8)], W(0, 8))]
    for assigner in (TumblingEventTimeWindows.of(5), SlidingEventTimeWindows.of(5, 1),
                     GlobalWindows.create(), CountTumblingWindowAssigner.of(1)):
        assert not isinstance(assigner, MergingWindowAssigner)


def test_user_assigners_subclass_the_generic_interfaces():
    class EveryTenth(WindowAssigner[int, TimeWindow]):
        def assign_windows(self, element, timestamp, context):
            return [W(timestamp - timestamp % 10, timestamp - timestamp % 10 + 10)]

        def get_default_trigger(self, env):
            return None

        def is_event_time(self):
            return True

    assert EveryTenth().assign_windows(0, 23, None) == [W(20, 30)]
    with pytest.raises(TypeError):
        WindowAssigner()


# -- MergingWindowSet ------------------------------------------------------------------------

class MergeLog:
    """A merge function that records its calls."""

    def __init__(self):
        self.calls = []

    def __call__(self, merge_result, merged_windows, state_window_result, merged_state_windows):
        self.calls.append((merge_result, sorted(merged_windows), state_window_result,
                           sorted(merged_state_windows)))


def test_merging_window_set_transcript():
    windows = MergingWindowSet(EventTimeSessionWindows.with_gap(3))
    log = MergeLog()
    # A new window stands alone: it is its own state window.
    assert windows.add_window(W(0, 3), log) == W(0, 3)
    assert windows.add_window(W(10, 13), log) == W(10, 13)
    assert log.calls == [] and windows.to_dict() == {W(0, 3): W(0, 3), W(10, 13): W(10, 13)}
    # Merging with one window: the result keeps that window's state window.
    assert windows.add_window(W(2, 5), log) == W(0, 5)
    assert log.calls == [(W(0, 5), [W(0, 3), W(2, 5)], W(0, 3), [])]
    assert windows.get_state_window(W(0, 5)) == W(0, 3)
    # Bridging two windows: the earlier one's state window wins, the other is merged into it.
    log.calls.clear()
    assert windows.add_window(W(5, 10), log) == W(0, 13)
    assert log.calls == [(W(0, 13), [W(0, 5), W(5, 10), W(10, 13)], W(0, 3), [W(10, 13)])]
    assert windows.to_dict() == {W(0, 13): W(0, 3)}
    # A window inside an in-flight window merges into it (the result is the window itself).
    log.calls.clear()
    assert windows.add_window(W(4, 7), log) == W(0, 13)
    assert log.calls == [(W(0, 13), [W(0, 13), W(4, 7)], W(0, 3), [])]
    # A window equal to an in-flight window joins it without a merge.
    log.calls.clear()
    windows.changed = False
    assert windows.add_window(W(0, 13), log) == W(0, 13)
    assert log.calls == [] and windows.to_dict() == {W(0, 13): W(0, 3)} and not windows.changed
    # Retiring.
    windows.retire_window(W(0, 13))
    assert len(windows) == 0 and windows.changed and windows.get_state_window(W(0, 13)) is None
    with pytest.raises(ValueError, match="is not in in-flight window set"):
        windows.retire_window(W(0, 13))


def test_merging_window_set_merge_function_object_and_persistence():
    class Recorder:
        def __init__(self):
            self.calls = []

        def merge(self, merge_result, merged_windows, state_window_result, merged_state_windows):
            self.calls.append((merge_result, state_window_result, list(merged_state_windows)))

    assigner = EventTimeSessionWindows.with_gap(3)
    windows = MergingWindowSet(assigner)
    recorder = Recorder()
    windows.add_window(W(0, 3), recorder)
    windows.add_window(W(4, 7), recorder)
    stored = pickle.loads(pickle.dumps(windows.to_dict()))
    restored = MergingWindowSet.from_dict(assigner, stored)
    assert not restored.changed and set(restored) == {W(0, 3), W(4, 7)}
    assert W(0, 3) in restored and W(0, 4) not in restored
    assert restored.add_window(W(3, 6), recorder) == W(0, 7)
    assert recorder.calls == [(W(0, 7), W(0, 3), [W(4, 7)])]
    assert restored.changed and restored.to_dict() == {W(0, 7): W(0, 3)}
    assert stored == {W(0, 3): W(0, 3), W(4, 7): W(4, 7)}   # to_dict hands out a copy
    assert MergingWindowSet.from_dict(assigner, None).to_dict() == {}


def test_merging_window_set_keeps_mapping_when_the_merge_function_fails():
    windows = MergingWindowSet(EventTimeSessionWindows.with_gap(3))
    windows.add_window(W(0, 3), MergeLog())

    def late(*args):
        raise RuntimeError("late merge")

    with pytest.raises(RuntimeError):
        windows.add_window(W(1, 4), late)
    assert windows.to_dict() == {W(0, 3): W(0, 3)}


def brute_force_sessions(intervals):
    """The union of ``[start, end)`` intervals, touching ones joined, as sorted windows."""
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [W(start, end) for start, end in merged]


def run_sessions(elements, restore_every=None):
    """Drives a MergingWindowSet like a window operator: each element's value lands in the
    state of its window's state window; merges move state as the merge function says."""
    assigner = EventTimeSessionWindows.with_dynamic_gap(GapOf())
    windows = MergingWindowSet(assigner)
    state = {}

    def merge(merge_result, merged_windows, state_window_result, merged_state_windows):
        assert state_window_result not in merged_state_windows
        for merged in merged_state_windows:
            state[state_window_result] += state.pop(merged)

    for index, (timestamp, gap) in enumerate(elements):
        if restore_every and index % restore_every == 0:
            windows = MergingWindowSet.from_dict(assigner, windows.to_dict())
        (new_window,) = assigner.assign_windows(gap, timestamp, None)
        actual = windows.add_window(new_window, merge)
        assert actual.start <= new_window.start and new_window.end <= actual.end
        state_window = windows.get_state_window(actual)
        state.setdefault(state_window, []).append((timestamp, gap))
    return windows, state


session_elements = st.lists(st.tuples(st.integers(-50, 50), st.integers(1, 12)),
                            min_size=1, max_size=30)


@settings(max_examples=300, deadline=None)
@given(session_elements, st.randoms(use_true_random=False), st.sampled_from([None, 1, 3]))
def test_merging_window_set_matches_brute_force_union(elements, random, restore_every):
    expected = brute_force_sessions((ts, ts + gap) for ts, gap in elements)
    shuffled = list(elements)
    random.shuffle(shuffled)
    for order in (elements, shuffled):
        windows, state = run_sessions(order, restore_every)
        assert sorted(windows) == expected
        mapping = windows.to_dict()
        # Every window has its own state window, and holds exactly the elements inside it.
        assert len(set(mapping.values())) == len(mapping) == len(state)
        for window, state_window in mapping.items():
            assert sorted(state[state_window]) == sorted(
                (ts, gap) for ts, gap in elements if window.start <= ts and ts + gap <= window.end)
