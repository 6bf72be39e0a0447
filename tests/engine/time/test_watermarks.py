"""Flink's watermark rules as small state machines: generators, idleness, the combined minimum."""
import pytest
from hypothesis import given, settings, strategies as st

from engine.time.watermarks import (
    MAX_WATERMARK, MIN_WATERMARK, BoundedOutOfOrderness, NoWatermarks, WatermarkSpec,
    WatermarkStep, WatermarkTracker)

BOUNDED_5 = WatermarkSpec("bounded", max_out_of_orderness_ms=5)
MONOTONOUS = WatermarkSpec("monotonous")
NONE = WatermarkSpec("no_watermarks")


def idle_after(ms, kind="monotonous"):
    return WatermarkSpec(kind, idle_timeout_ms=ms)


# -- generators -----------------------------------------------------------------

def test_constants_are_java_long_bounds():
    assert MIN_WATERMARK == -9223372036854775808
    assert MAX_WATERMARK == 9223372036854775807


@pytest.mark.parametrize("spec", [BOUNDED_5, MONOTONOUS, NONE, WatermarkSpec("bounded", 10 ** 9)])
def test_first_watermark_is_min(spec):
    assert spec.build().current() == MIN_WATERMARK


def test_bounded_is_max_minus_out_of_orderness_minus_one():
    gen = BOUNDED_5.build()
    assert isinstance(gen, BoundedOutOfOrderness)
    gen.on_event(100)
    assert gen.current() == 94
    gen.on_event(90)                 # out of order: the maximum stays
    assert gen.current() == 94
    gen.observe(None)                # a batch without records
    assert gen.current() == 94
    gen.observe(1000)
    assert gen.current() == 994


def test_monotonous_is_max_minus_one():
    gen = MONOTONOUS.build()
    gen.on_event(0)
    assert gen.current() == -1
    gen.on_event(7)
    assert gen.current() == 6


def test_timestamps_below_the_initial_maximum_leave_min():
    gen = BOUNDED_5.build()
    gen.on_event(MIN_WATERMARK)      # Flink's "no timestamp"
    assert gen.current() == MIN_WATERMARK
    gen.on_event(MIN_WATERMARK + 6)  # exactly the initial maximum
    assert gen.current() == MIN_WATERMARK
    gen.on_event(MIN_WATERMARK + 7)
    assert gen.current() == MIN_WATERMARK + 1


def test_no_watermarks_never_advances():
    gen = NONE.build()
    assert isinstance(gen, NoWatermarks)
    gen.on_event(10 ** 12)
    assert gen.current() == MIN_WATERMARK


@pytest.mark.parametrize("kwargs", [
    {"kind": "periodic"},
    {"kind": "bounded", "max_out_of_orderness_ms": -1},
    {"kind": "monotonous", "max_out_of_orderness_ms": 3},
    {"kind": "bounded", "idle_timeout_ms": 0},
])
def test_invalid_specs(kwargs):
    with pytest.raises(ValueError):
        WatermarkSpec(**kwargs)


@settings(max_examples=200)
@given(st.integers(0, 10_000), st.lists(st.integers(-10 ** 6, 10 ** 6)))
def test_generator_is_monotone_and_follows_the_maximum(d, timestamps):
    gen = WatermarkSpec("bounded", d).build()
    last = gen.current()
    for i, ts in enumerate(timestamps):
        gen.on_event(ts)
        assert gen.current() >= last
        last = gen.current()
        assert last == max(timestamps[:i + 1]) - d - 1


# -- the tracker -----------------------------------------------------------------

def test_tracker_starts_at_min_and_stays_without_inputs():
    tracker = WatermarkTracker()
    assert tracker.watermark() == MIN_WATERMARK
    assert tracker.advance(0) == MIN_WATERMARK
    assert not tracker.is_finished() and not tracker.is_idle()


def test_single_input_follows_its_generator():
    tracker = WatermarkTracker()
    tracker.add_input("s0", BOUNDED_5)
    assert tracker.advance(0) == MIN_WATERMARK
    tracker.observe("s0", 100)
    assert tracker.watermark() == MIN_WATERMARK     # only advance() moves it
    assert tracker.advance(1) == 94


def test_minimum_over_inputs():
    tracker = WatermarkTracker()
    tracker.add_input("a", MONOTONOUS)
    tracker.add_input("b", MONOTONOUS)
    tracker.observe("a", 50)
    assert tracker.advance(0) == MIN_WATERMARK      # b has seen nothing
    tracker.observe("b", 20)
    assert tracker.advance(1) == 19
    tracker.observe("b", 80)
    assert tracker.advance(2) == 49
    assert tracker.input_watermark("a") == 49 and tracker.input_watermark("b") == 79


def test_no_watermarks_input_holds_the_minimum_at_min():
    tracker = WatermarkTracker()
    tracker.add_input("a", MONOTONOUS)
    tracker.add_input("b", NONE)
    tracker.observe("a", 50)
    tracker.observe("b", 50)
    assert tracker.advance(0) == MIN_WATERMARK


def test_finished_inputs_stop_holding_back_and_all_finished_is_max():
    tracker = WatermarkTracker()
    tracker.add_input("a", MONOTONOUS)
    tracker.add_input("b", MONOTONOUS)
    tracker.observe("a", 10)
    tracker.observe("b", 30)
    assert tracker.advance(0) == 9
    tracker.observe("a", 12, finished=True)
    assert tracker.advance(1) == 29
    assert not tracker.is_finished()
    tracker.observe("b", None, finished=True)
    assert tracker.advance(2) == MAX_WATERMARK
    assert tracker.is_finished()
    assert tracker.advance(3) == MAX_WATERMARK


def test_all_finished_is_max_even_without_watermarks():
    # PyFlink 2.3: a bounded no_watermarks source still ends with Long.MAX_VALUE.
    tracker = WatermarkTracker()
    tracker.add_input("a", NONE)
    tracker.observe("a", 5, finished=True)
    assert tracker.advance(0) == MAX_WATERMARK


def test_dynamic_inputs_wait_for_end_of_input():
    # Splits discovered while running: all current ones finished is not the end.
    tracker = WatermarkTracker(dynamic_inputs=True)
    tracker.add_input("a", MONOTONOUS)
    tracker.observe("a", 10, finished=True)
    assert tracker.advance(0) == MIN_WATERMARK and tracker.is_idle()
    tracker.add_input("b", MONOTONOUS)
    tracker.observe("b", 20)
    assert tracker.advance(1) == 19 and not tracker.is_idle()
    tracker.observe("b", None, finished=True)
    assert tracker.advance(2) == 19 and not tracker.is_finished()
    assert tracker.end_of_input() == MAX_WATERMARK
    assert tracker.advance(3) == MAX_WATERMARK and tracker.is_finished()


def test_no_inputs_after_end_of_input():
    tracker = WatermarkTracker()
    tracker.add_input("a", MONOTONOUS)
    tracker.observe("a", None, finished=True)
    tracker.advance(0)
    with pytest.raises(ValueError):
        tracker.add_input("b", MONOTONOUS)


def test_end_of_input_with_no_inputs():
    tracker = WatermarkTracker()
    assert tracker.end_of_input() == MAX_WATERMARK
    assert tracker.watermark() == MAX_WATERMARK and tracker.is_finished()


def test_records_after_finish_are_an_error():
    tracker = WatermarkTracker()
    tracker.add_input("a", MONOTONOUS)
    tracker.observe("a", None, finished=True)
    tracker.observe("a", None)                      # an empty report is harmless
    with pytest.raises(ValueError):
        tracker.observe("a", 3)


def test_unknown_and_duplicate_inputs():
    tracker = WatermarkTracker()
    with pytest.raises(KeyError):
        tracker.observe("x", 1)
    tracker.add_input("x", MONOTONOUS)
    with pytest.raises(ValueError):
        tracker.add_input("x", MONOTONOUS)


def test_late_registered_input_holds_but_never_lowers():
    tracker = WatermarkTracker()
    tracker.add_input("a", MONOTONOUS)
    tracker.observe("a", 100)
    assert tracker.advance(0) == 99
    tracker.add_input(("assigner", 0), MONOTONOUS)
    tracker.observe("a", 200)
    assert tracker.advance(1) == 99                 # held, not lowered to MIN
    tracker.observe(("assigner", 0), 150)
    assert tracker.advance(2) == 149


# -- idleness ----------------------------------------------------------------------

def test_idle_input_stops_holding_back():
    tracker = WatermarkTracker()
    tracker.add_input("busy", MONOTONOUS)
    tracker.add_input("quiet", idle_after(1000))
    tracker.observe("busy", 500)
    assert tracker.advance(0) == MIN_WATERMARK      # registration counts as activity
    tracker.observe("busy", 600)
    assert tracker.advance(1000) == MIN_WATERMARK   # exactly the timeout: not yet idle
    assert not tracker.is_input_idle("quiet")
    tracker.observe("busy", 700)
    assert tracker.advance(1001) == 699             # strictly more: idle
    assert tracker.is_input_idle("quiet") and not tracker.is_idle()


def test_idle_input_becomes_active_again_with_records():
    tracker = WatermarkTracker()
    tracker.add_input("busy", MONOTONOUS)
    tracker.add_input("quiet", idle_after(100))
    tracker.observe("busy", 50)
    tracker.observe("quiet", 40)
    assert tracker.advance(0) == 39
    tracker.observe("busy", 500)
    assert tracker.advance(101) == 499              # quiet is idle
    tracker.observe("quiet", 45)                    # back, but behind: holds, never lowers
    tracker.observe("busy", 600)
    assert tracker.advance(150) == 499
    assert not tracker.is_input_idle("quiet")
    tracker.observe("quiet", 1000)                  # caught up and ahead
    tracker.observe("busy", 700)
    assert tracker.advance(160) == 699


def test_activity_is_stamped_at_the_next_advance():
    # Records of a long batch keep the input active at the check that first sees them,
    # however long ago the previous check was; the timeout counts from that check.
    tracker = WatermarkTracker()
    tracker.add_input("a", idle_after(100))
    tracker.add_input("b", MONOTONOUS)
    tracker.advance(0)
    tracker.observe("a", 10)
    tracker.observe("b", 20)
    assert tracker.advance(10_000) == 9
    assert tracker.advance(10_100) == 9
    tracker.observe("b", 30)
    assert tracker.advance(10_101) == 29


def test_all_idle_marks_idle_and_keeps_the_watermark():
    tracker = WatermarkTracker()
    tracker.add_input("a", idle_after(10))
    tracker.add_input("b", idle_after(20))
    tracker.observe("a", 100)
    tracker.observe("b", 200)
    assert tracker.advance(0) == 99
    assert tracker.advance(15) == 199 and not tracker.is_idle()   # only a idle
    assert tracker.advance(25) == 199 and tracker.is_idle()        # both idle: stays
    tracker.observe("a", 300)
    assert tracker.advance(26) == 299 and not tracker.is_idle()


def test_idle_without_records_ever():
    tracker = WatermarkTracker()
    tracker.add_input("never", idle_after(5, "bounded"))
    tracker.add_input("b", BOUNDED_5)
    tracker.observe("b", 100)
    assert tracker.advance(0) == MIN_WATERMARK
    assert tracker.advance(6) == 94


def test_no_watermarks_input_with_idleness_releases_the_minimum():
    tracker = WatermarkTracker()
    tracker.add_input("a", idle_after(5, "no_watermarks"))
    tracker.add_input("b", MONOTONOUS)
    tracker.observe("a", 1)
    tracker.observe("b", 10)
    assert tracker.advance(0) == MIN_WATERMARK
    tracker.observe("b", 11)
    assert tracker.advance(6) == 10


def test_idle_and_finished_with_all_others_finished_is_not_max():
    tracker = WatermarkTracker()
    tracker.add_input("a", idle_after(5))
    tracker.add_input("b", MONOTONOUS)
    tracker.observe("b", 10, finished=True)
    tracker.advance(0)
    assert tracker.advance(100) == MIN_WATERMARK and tracker.is_idle()
    tracker.observe("a", None, finished=True)
    assert tracker.advance(101) == MAX_WATERMARK and not tracker.is_idle()


# -- checkpoints -------------------------------------------------------------------

def test_snapshot_and_restore():
    import json
    tracker = WatermarkTracker()
    tracker.add_input(("src", 0), BOUNDED_5)
    tracker.add_input(("src", 1), idle_after(50, "bounded"))
    tracker.observe(("src", 0), 100)
    tracker.observe(("src", 1), 80, finished=True)
    assert tracker.advance(0) == 94
    restored = WatermarkTracker.restore(json.loads(json.dumps(tracker.snapshot())))
    assert restored.watermark() == 94
    assert restored.input_watermark(("src", 0)) == 94
    restored.observe(("src", 0), 110)
    assert restored.advance(1) == 104
    assert restored.has_input(("src", 1))
    restored.observe(("src", 0), None, finished=True)
    assert restored.advance(2) == MAX_WATERMARK
    again = WatermarkTracker.restore(restored.snapshot())
    assert again.is_finished() and again.advance(3) == MAX_WATERMARK


def test_restored_watermark_is_a_floor():
    tracker = WatermarkTracker(watermark=1000)
    tracker.add_input("a", MONOTONOUS)
    tracker.observe("a", 10)
    assert tracker.advance(0) == 1000


# -- properties ----------------------------------------------------------------------

specs = st.builds(
    WatermarkSpec,
    kind=st.sampled_from(["bounded", "no_watermarks"]),
    max_out_of_orderness_ms=st.integers(0, 50),
    idle_timeout_ms=st.one_of(st.none(), st.integers(1, 30)))

batch = st.tuples(
    st.integers(0, 20),                                         # processing time step
    st.lists(st.tuples(st.integers(0, 7),                       # input index
                       st.one_of(st.none(), st.integers(-100, 1000)),
                       st.integers(0, 9).map(lambda n: n == 0))),  # finished, rarely
    st.one_of(st.none(), specs))                                # maybe a late input


@settings(max_examples=400, deadline=None)
@given(st.lists(specs, min_size=1, max_size=6), st.lists(batch, max_size=25), st.booleans())
def test_combined_watermark_is_monotone_and_a_minimum(initial, batches, dynamic):
    tracker = WatermarkTracker(dynamic_inputs=dynamic)
    ids = []
    for spec in initial:
        ids.append(len(ids))
        tracker.add_input(ids[-1], spec)
    finished = set()
    now, last = 0, tracker.watermark()
    for step, reports, late in batches:
        if late is not None and not tracker.is_finished():
            ids.append(len(ids))
            tracker.add_input(ids[-1], late)
        for index, max_ts, fin in reports:
            input_id = ids[index % len(ids)]
            if input_id in finished:
                continue
            tracker.observe(input_id, max_ts, finished=fin)
            if fin:
                finished.add(input_id)
        now += step
        wm = tracker.advance(now)
        assert wm >= last                                           # never goes back
        remaining = [i for i in ids if i not in finished]
        if not remaining and not dynamic:
            assert wm == MAX_WATERMARK and tracker.is_finished()
        elif not remaining:
            assert wm == last and tracker.is_idle() and not tracker.is_finished()
        else:
            assert wm < MAX_WATERMARK and not tracker.is_finished()
            active = [i for i in remaining if not tracker.is_input_idle(i)]
            assert tracker.is_idle() == (not active)
            if active:   # the minimum over active, unfinished inputs, or held where it was
                assert wm == max(last, min(tracker.input_watermark(i) for i in active))
            else:        # all idle: unchanged
                assert wm == last
        last = wm


def test_records_without_timestamps_are_activity():
    tracker = WatermarkTracker()
    tracker.add_input("a", idle_after(10))
    tracker.add_input("b", MONOTONOUS)
    tracker.advance(0)
    tracker.observe("a", MIN_WATERMARK)             # records, but no timestamps
    tracker.observe("b", 50)
    assert tracker.advance(100) == MIN_WATERMARK    # a active, at MIN
    assert tracker.advance(111) == 49               # then idle


@settings(max_examples=200, deadline=None)
@given(st.lists(specs, min_size=1, max_size=4),
       st.lists(st.tuples(st.integers(0, 20),
                          st.dictionaries(st.integers(0, 3), st.integers(-100, 1000)),
                          st.sets(st.integers(0, 3), max_size=1)), max_size=12))
def test_a_step_is_the_batchs_observations_and_advance_and_leaves_its_tracker(specs_, batches):
    """The driver and every stage after the watermark inputs apply one batch's step to the
    same tracker: each gets the watermark of observing the batch's largest timestamps
    (absent: no records), ending the inputs that end with it, and advancing."""
    tracker, reference = WatermarkTracker(), WatermarkTracker()
    for i, spec in enumerate(specs_):
        tracker.add_input(i, spec)
        reference.add_input(i, spec)
    ended, now = set(), 0
    for step_ms, reports, finishing in batches:
        now += step_ms
        reports = {i: t for i, t in reports.items() if i < len(specs_) and i not in ended}
        finishing = {i for i in finishing if i < len(specs_)}
        step = WatermarkStep(tracker, frozenset(finishing | ended), now)
        before = tracker.snapshot()
        in_a_task = step.advanced(reports).watermark()
        tracker = step.advanced(reports)
        assert step.tracker.snapshot() == before and tracker.watermark() == in_a_task
        for i in range(len(specs_)):
            if i not in ended:
                reference.observe(i, reports.get(i), finished=i in finishing)
        ended |= finishing
        assert tracker.watermark() == reference.advance(now)
