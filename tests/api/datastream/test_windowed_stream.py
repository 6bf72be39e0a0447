"""Windows: assigners, window functions, lateness and non-keyed windows, against a
brute-force reference that groups the whole input by key and window."""
from collections import defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from api.common import Duration, Time, TimestampAssigner, WatermarkStrategy
from api.datastream import (AggregateFunction, AllWindowFunction, OutputTag,
                            ProcessWindowFunction, WindowFunction)
from api.datastream.window import (EventTimeSessionWindows, SlidingEventTimeWindows,
                                   TumblingEventTimeWindows)
from tests.conftest import make_env

MIN_TIME, MAX_TIME = -2 ** 63, 2 ** 63 - 1

DATA = [("a", 1, 1000), ("a", 2, 2000), ("b", 3, 4500), ("a", 4, 6000), ("b", 5, 12000),
        ("a", 6, 3000)]


class ThirdField(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[2]


def timestamped(env, data, disorder_ms=2000):
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(disorder_ms)) \
        .with_timestamp_assigner(ThirdField())
    return env.from_collection(data).assign_timestamps_and_watermarks(strategy)


class Contents(ProcessWindowFunction):
    def process(self, key, context, elements):
        window = context.window()
        yield key, window.start, window.end, sorted(e[1] for e in elements)


class CountAndSum(AggregateFunction):
    def create_accumulator(self):
        return 0, 0

    def add(self, value, accumulator):
        return accumulator[0] + 1, accumulator[1] + value[1]

    def get_result(self, accumulator):
        return accumulator

    def merge(self, a, b):
        return a[0] + b[0], a[1] + b[1]


def reference(data, windows_of, sessions_gap=None):
    """Brute force: every (key, window) with the sorted values it contains.
    ``sessions_gap``: a session gap in ms, or a function of the value giving one."""
    groups = defaultdict(list)
    if sessions_gap is None:
        for key, value, ts in data:
            for start, end in windows_of(ts):
                groups[(key, start, end)].append(value)
    else:
        gap_of = sessions_gap if callable(sessions_gap) else (lambda value: sessions_gap)
        for key in {k for k, _, _ in data}:
            intervals = sorted((ts, ts + gap_of(v), v) for k, v, ts in data if k == key)
            session = None
            for start, end, value in intervals:
                if session and start <= session[1]:  # Flink merges touching windows
                    session = [session[0], max(session[1], end), session[2] + [value]]
                else:
                    if session:
                        groups[(key, session[0], session[1])] = session[2]
                    session = [start, end, [value]]
            groups[(key, session[0], session[1])] = session[2]
    return sorted((k, s, e, sorted(vs)) for (k, s, e), vs in groups.items())


def tumbling(size):
    return lambda ts: [(ts - ts % size, ts - ts % size + size)]


def sliding(size, slide):
    def windows(ts):
        last = ts - ts % slide
        return [(start, start + size) for start in range(last, ts - size, -slide)]
    return windows


def gap_of_value(value):
    return 1000 + (value % 3) * 1000


class ValueGap:
    """A SessionWindowTimeGapExtractor (the API class is imported lazily below)."""

    def extract(self, element):
        return gap_of_value(element[1])


def dynamic_sessions():
    from api.datastream.window import SessionWindowTimeGapExtractor

    class Gap(ValueGap, SessionWindowTimeGapExtractor):
        pass
    return EventTimeSessionWindows.with_dynamic_gap(Gap())


ASSIGNERS = {
    "tumbling": (lambda: TumblingEventTimeWindows.of(Time.seconds(5)), tumbling(5000), None),
    "dynamic_session": (dynamic_sessions, None, gap_of_value),
    "sliding": (lambda: SlidingEventTimeWindows.of(Time.seconds(10), Time.seconds(5)),
                sliding(10000, 5000), None),
    "session": (lambda: EventTimeSessionWindows.with_gap(Time.seconds(3)), None, 3000),
}


@pytest.mark.parametrize("kind", sorted(ASSIGNERS))
def test_process_window_function_per_assigner(env_factory, kind):
    make_assigner, windows_of, gap = ASSIGNERS[kind]
    env = env_factory(parallelism=2)
    got = list(timestamped(env, DATA).key_by(lambda r: r[0]).window(make_assigner())
               .process(Contents()).execute_and_collect())
    assert sorted(got) == reference(DATA, windows_of, gap)


@settings(max_examples=40, deadline=None)
@given(draws=st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 30_000),
                                st.integers(0, 3000)), max_size=25),
       kind=st.sampled_from(sorted(ASSIGNERS)), parallelism=st.sampled_from([1, 2, 4]),
       batch_size=st.sampled_from([1, 2, 5, 1000]))
def test_windows_match_the_brute_force_reference(draws, kind, parallelism, batch_size):
    """With disorder inside the bound no element is late, so every window holds exactly
    the elements the reference puts in it, whatever the batch size and parallelism."""
    bases = sorted(base for _, base, _ in draws)
    data = [(key, i, base - jitter)
            for i, ((key, _, jitter), base) in enumerate(zip(draws, bases))]
    make_assigner, windows_of, gap = ASSIGNERS[kind]
    env = make_env("local", parallelism=parallelism, micro_batch_size=batch_size)
    got = list(timestamped(env, data, disorder_ms=3000).key_by(lambda r: r[0])
               .window(make_assigner()).process(Contents()).execute_and_collect())
    assert sorted(got) == reference(data, windows_of, gap)


def test_incremental_reduce_and_aggregate_with_and_without_window_functions(env_factory):
    env = env_factory(parallelism=2)
    windowed = timestamped(env, DATA).key_by(lambda r: r[0]) \
        .window(TumblingEventTimeWindows.of(Time.seconds(5)))
    reduced = windowed.reduce(lambda a, b: (a[0], a[1] + b[1], max(a[2], b[2])))
    assert sorted(reduced.execute_and_collect()) == [
        ("a", 4, 6000), ("a", 9, 3000), ("b", 3, 4500), ("b", 5, 12000)]

    class WithWindow(WindowFunction):
        def apply(self, key, window, inputs):
            yield key, window.start, list(inputs)

    env = env_factory(parallelism=2)
    aggregated = timestamped(env, DATA).key_by(lambda r: r[0]) \
        .window(TumblingEventTimeWindows.of(Time.seconds(5))) \
        .aggregate(CountAndSum(), window_function=WithWindow())
    assert sorted(aggregated.execute_and_collect()) == [
        ("a", 0, [(3, 9)]), ("a", 5000, [(1, 4)]), ("b", 0, [(1, 3)]), ("b", 10000, [(1, 5)])]


class Late(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


@pytest.mark.parametrize("lateness, expected_main, expected_late", [
    (0, [("w0", [100, 200])], [("late", 300)]),
    (40_000, [("w0", [100, 200]), ("w0", [100, 200, 300])], []),
])
def test_late_elements_are_dropped_side_output_or_refire(lateness, expected_main,
                                                          expected_late, capfd):
    """One record per batch: the record at 30 s moves the watermark past the first
    window before the late record (at 300 ms) arrives."""
    late_tag = OutputTag("late")

    class Named(ProcessWindowFunction):
        def process(self, key, context, elements):
            if context.window().start == 0:
                yield "w0", sorted(e[1] for e in elements)

    data = [("k", 100), ("k", 200), ("k", 30_000), ("k", 30_001), ("k", 300)]
    env = make_env("local", micro_batch_size=1)
    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Late())
    windowed = env.from_collection(data).assign_timestamps_and_watermarks(strategy) \
        .key_by(lambda r: r[0]).window(TumblingEventTimeWindows.of(Time.seconds(1))) \
        .allowed_lateness(lateness).side_output_late_data(late_tag)
    main = windowed.process(Named())
    main.get_side_output(late_tag).map(lambda r: ("late", r[1])).print()
    assert list(main.execute_and_collect()) == expected_main
    assert capfd.readouterr().out.splitlines() == [str(r) for r in expected_late]


def test_count_windows(env_factory):
    env = env_factory(parallelism=2)
    got = sorted(env.from_collection([("a", 1), ("a", 2), ("b", 3), ("a", 4), ("a", 5),
                                      ("a", 6)])
                 .key_by(lambda r: r[0]).count_window(2)
                 .reduce(lambda x, y: (x[0], x[1] + y[1])).execute_and_collect())
    # a full window of two fires; 'b' (one element) and the last 'a' never fill
    assert got == [("a", 3), ("a", 9)]


def test_window_all_sees_the_whole_stream_at_the_environment_parallelism(env_factory):
    # As in PyFlink, the window operator has the environment's parallelism (2 here) and
    # one subtask gets every element.
    class Everything(AllWindowFunction):
        def apply(self, window, inputs):
            yield window.start, sorted(e[1] for e in inputs)

    env = env_factory(parallelism=2)
    stream = timestamped(env, DATA).window_all(TumblingEventTimeWindows.of(Time.seconds(5))) \
        .apply(Everything())
    assert stream._transformation.parallelism == 2
    assert sorted(stream.execute_and_collect()) == [(0, [1, 2, 3, 6]), (5000, [4]),
                                                   (10000, [5])]


# --- differential checks: expected outputs captured from PyFlink 2.3.0 -----------------

class Listing(WindowFunction):
    def apply(self, key, window, inputs):
        yield key, str(window), [v[1] for v in inputs]


def keyed(env):
    return timestamped(env, DATA).key_by(lambda r: r[0])


def sum_values(a, b):
    return a[0], a[1] + b[1], max(a[2], b[2])


def test_count_and_global_windows_as_pyflink(env_factory):
    from api.datastream.window import (CountSlidingWindowAssigner, CountTrigger, GlobalWindows,
                                       PurgingTrigger)
    runs = {
        "count_window(2) reduce": (lambda ks: ks.count_window(2).reduce(sum_values),
                                   [("a", 3, 2000), ("b", 8, 12000), ("a", 10, 6000)]),
        "count_window(2) apply": (lambda ks: ks.count_window(2).apply(Listing()),
                                  [("a", "CountWindow(id=0)", [1, 2]),
                                   ("b", "CountWindow(id=0)", [3, 5]),
                                   ("a", "CountWindow(id=1)", [4, 6])]),
        "count_window(3, 1)": (lambda ks: ks.count_window(3, 1).apply(Listing()),
                               [("a", "CountWindow(id=0)", [1, 2, 4]),
                                ("a", "CountWindow(id=1)", [2, 4, 6])]),
        "sliding count 3/2": (lambda ks: ks.window(CountSlidingWindowAssigner.of(3, 2))
                              .apply(Listing()), [("a", "CountWindow(id=0)", [1, 2, 4])]),
        "global + count": (lambda ks: ks.window(GlobalWindows.create())
                           .trigger(CountTrigger.of(2)).apply(Listing()),
                           [("a", "GlobalWindow", [1, 2]), ("b", "GlobalWindow", [3, 5]),
                            ("a", "GlobalWindow", [1, 2, 4, 6])]),
        "global + purging count": (lambda ks: ks.window(GlobalWindows.create())
                                   .trigger(PurgingTrigger.of(CountTrigger.of(2)))
                                   .apply(Listing()),
                                   [("a", "GlobalWindow", [1, 2]), ("b", "GlobalWindow", [3, 5]),
                                    ("a", "GlobalWindow", [4, 6])]),
        "global, default trigger": (lambda ks: ks.window(GlobalWindows.create())
                                    .apply(Listing()), []),
    }
    for name, (build, expected) in runs.items():
        env = env_factory(parallelism=1)
        assert sorted(build(keyed(env)).execute_and_collect()) == sorted(expected), name


class WithWatermark(ProcessWindowFunction):
    def process(self, key, context, elements):
        yield (key, context.window().start, context.window().end, context.current_watermark(),
               [e[1] for e in elements])


MAX = 2 ** 63 - 1


# Firings of ContinuousEventTimeTrigger.of(2 s) on 10 s windows when the watermark jumps to
# the end: every interval from the first element's, then the window end. ('a' [0, 10 s):
# 2, 4, 6, 8 s and 9.999 s; 'b' [0, 10 s): 6, 8, 9.999 s; 'b' [10, 20 s): 14, 16, 18,
# 19.999 s.) This is Flink's documented rule (timers that come due while the watermark
# advances fire in the same advance); PyFlink 2.3.0 fires only twice per window here
# (the first interval and the end), which we do not imitate.
CONTINUOUS_FIRINGS = {("a", 0): 5, ("b", 0): 3, ("b", 10000): 4}


def test_continuous_event_time_trigger_fires_at_each_interval_and_at_the_end(env_factory):
    """Wrapped in a PurgingTrigger, only the first firing finds elements (as in PyFlink)."""
    from api.datastream.window import ContinuousEventTimeTrigger, PurgingTrigger
    once = [("a", 0, 10000, MAX, [1, 2, 4, 6]), ("b", 0, 10000, MAX, [3]),
            ("b", 10000, 20000, MAX, [5])]
    every = [r for r in once for _ in range(CONTINUOUS_FIRINGS[(r[0], r[1])])]
    for trigger, expected in ((ContinuousEventTimeTrigger.of(Time.seconds(2)), every),
                              (PurgingTrigger.of(ContinuousEventTimeTrigger.of(Time.seconds(2))),
                               once)):
        env = env_factory(parallelism=1)
        got = keyed(env).window(TumblingEventTimeWindows.of(Time.seconds(10))) \
            .trigger(trigger).process(WithWatermark()).execute_and_collect()
        assert sorted(got, key=str) == sorted(expected, key=str)


def test_custom_trigger_as_pyflink(env_factory):
    from api.datastream.window import Trigger, TriggerResult

    class EvenTrigger(Trigger):
        def on_element(self, element, timestamp, window, ctx):
            ctx.register_event_time_timer(window.max_timestamp())
            return TriggerResult.FIRE if element[1] % 2 == 0 else TriggerResult.CONTINUE

        def on_processing_time(self, time, window, ctx):
            return TriggerResult.CONTINUE

        def on_event_time(self, time, window, ctx):
            return TriggerResult.FIRE_AND_PURGE if time == window.max_timestamp() \
                else TriggerResult.CONTINUE

        def on_merge(self, window, ctx):
            pass

        def clear(self, window, ctx):
            ctx.delete_event_time_timer(window.max_timestamp())

    class Show(ProcessWindowFunction):
        def process(self, key, context, elements):
            yield key, str(context.window()), context.current_watermark(), \
                [e[1] for e in elements]

    env = env_factory(parallelism=1)
    got = list(keyed(env).window(TumblingEventTimeWindows.of(Time.seconds(5)))
               .trigger(EvenTrigger()).process(Show()).execute_and_collect())
    MIN = -2 ** 63
    assert sorted(got, key=str) == sorted([
        ("a", "TimeWindow(start=0, end=5000)", MIN, [1, 2]),
        ("a", "TimeWindow(start=5000, end=10000)", MIN, [4]),
        ("a", "TimeWindow(start=0, end=5000)", MIN, [1, 2, 6]),
        ("a", "TimeWindow(start=0, end=5000)", MAX, [1, 2, 6]),
        ("b", "TimeWindow(start=0, end=5000)", MAX, [3]),
        ("a", "TimeWindow(start=5000, end=10000)", MAX, [4]),
        ("b", "TimeWindow(start=10000, end=15000)", MAX, [5])], key=str)


def test_window_state_global_state_and_clear_as_pyflink(env_factory, tmp_path):
    from api.common import Types
    from api.datastream.state import ValueStateDescriptor
    from api.datastream.window import ContinuousEventTimeTrigger
    log = tmp_path / "clear.log"

    class Firings(ProcessWindowFunction):
        def process(self, key, context, elements):
            per_window = context.window_state().get_state(
                ValueStateDescriptor("per_window", Types.INT()))
            per_key = context.global_state().get_state(ValueStateDescriptor("per_key", Types.INT()))
            per_window.update((per_window.value() or 0) + 1)
            per_key.update((per_key.value() or 0) + 1)
            yield key, str(context.window()), per_window.value(), per_key.value()

        def clear(self, context):
            per_window = context.window_state().get_state(
                ValueStateDescriptor("per_window", Types.INT()))
            with open(log, "a") as f:
                f.write(f"{context.window()} {per_window.value()}\n")
            per_window.clear()

    env = env_factory(parallelism=1)
    got = list(keyed(env).window(TumblingEventTimeWindows.of(Time.seconds(10)))
               .trigger(ContinuousEventTimeTrigger.of(Time.seconds(2))).process(Firings())
               .execute_and_collect())
    # PyFlink's transcript (two firings per window, see CONTINUOUS_FIRINGS) shows the same
    # counting: per-window state counts a window's firings, global state the key's, and
    # clear(context) sees the window's last count before the window goes.
    windows = {("a", 0): "TimeWindow(start=0, end=10000)",
               ("b", 0): "TimeWindow(start=0, end=10000)",
               ("b", 10000): "TimeWindow(start=10000, end=20000)"}
    per_key = {"a": 0, "b": 0}
    expected = []
    for (key, start), window in windows.items():
        for firing in range(1, CONTINUOUS_FIRINGS[(key, start)] + 1):
            per_key[key] += 1
            expected.append((key, window, firing, per_key[key]))
    assert sorted(got) == sorted(expected)
    assert sorted(log.read_text().splitlines()) == sorted(
        f"{window} {CONTINUOUS_FIRINGS[ks]}" for ks, window in windows.items())


def test_processing_time_windows_with_a_scripted_clock(env_factory):
    from api.datastream.window import TumblingProcessingTimeWindows
    from api.testing import TestStream
    stream = (TestStream()
              .add_elements([(("k", 1), 0), (("k", 2), 0)])          # processing time 0
              .advance_processing_time(1500)                          # window [0, 1 s) fires
              .add_elements([(("k", 3), 0)])                          # lands in [1 s, 2 s)
              .advance_processing_time(1000))                         # that window fires
    env = env_factory(parallelism=1)
    got = list(env.from_source(stream, WatermarkStrategy.no_watermarks(), "clock")
               .key_by(lambda r: r[0])
               .window(TumblingProcessingTimeWindows.of(Time.seconds(1)))
               .process(Contents()).execute_and_collect())
    assert got == [("k", 0, 1000, [1, 2]), ("k", 1000, 2000, [3])]


def test_dynamic_session_gaps_and_a_user_written_assigner(env_factory):
    from api.datastream.window import (EventTimeSessionWindows, SessionWindowTimeGapExtractor,
                                       TimeWindow, WindowAssigner)

    class GapFromValue(SessionWindowTimeGapExtractor):
        def extract(self, element):
            return element[1] * 1000

    env = env_factory(parallelism=2)
    got = list(timestamped(env, DATA).key_by(lambda r: r[0])
               .window(EventTimeSessionWindows.with_dynamic_gap(GapFromValue()))
               .process(Contents()).execute_and_collect())
    # a: [1000,2000) [2000,4000) [3000,9000) [6000,10000) merge; b: [4500,7500), [12000,17000)
    assert sorted(got) == [("a", 1000, 10000, [1, 2, 4, 6]), ("b", 4500, 7500, [3]),
                           ("b", 12000, 17000, [5])]

    class EvenOdd(WindowAssigner):
        """A user assigner: one window per parity of the value."""

        def assign_windows(self, element, timestamp, context):
            return [TimeWindow(element[1] % 2, element[1] % 2 + 1)]

        def get_default_trigger(self, env):
            from api.datastream.window import EventTimeTrigger
            return EventTimeTrigger.create()

        def is_event_time(self):
            return True

    env = env_factory(parallelism=1)
    got = list(timestamped(env, DATA).window_all(EvenOdd())
               .reduce(lambda a, b: ("all", a[1] + b[1], 0)).execute_and_collect())
    assert sorted(got) == [("all", 9, 0), ("all", 12, 0)]


def test_batch_mode_windows_emit_once_at_end_of_input():
    from api.datastream import RuntimeExecutionMode
    for kind in sorted(ASSIGNERS):
        make_assigner, windows_of, gap = ASSIGNERS[kind]
        env = make_env("local", parallelism=2)
        env.set_runtime_mode(RuntimeExecutionMode.BATCH)
        got = list(timestamped(env, DATA).key_by(lambda r: r[0]).window(make_assigner())
                   .process(Contents()).execute_and_collect())
        assert sorted(got) == reference(DATA, windows_of, gap), kind


@settings(max_examples=30, deadline=None)
@given(keys=st.lists(st.sampled_from("abc"), max_size=30), size=st.integers(1, 4),
       slide=st.integers(0, 3), parallelism=st.sampled_from([1, 2, 4]),
       batch_size=st.sampled_from([1, 3, 1000]))
def test_count_windows_match_the_brute_force_reference(keys, size, slide, parallelism,
                                                       batch_size):
    """Count windows of each key's elements in arrival order; only full windows fire
    (PyFlink: a sliding count window fires once it holds ``size`` elements)."""
    data = [(key, i) for i, key in enumerate(keys)]
    per_key = defaultdict(list)
    for key, i in data:
        per_key[key].append(i)
    step = slide or size
    expected = sorted((key, values[start:start + size]) for key, values in per_key.items()
                      for start in range(0, len(values) - size + 1, step))

    class Values(WindowFunction):
        def apply(self, key, window, inputs):
            yield key, [v[1] for v in inputs]

    env = make_env("local", parallelism=parallelism, micro_batch_size=batch_size)
    got = list(env.from_collection(data).key_by(lambda r: r[0]).count_window(size, slide)
               .apply(Values()).execute_and_collect())
    assert sorted(got) == expected


def test_process_all_window_function(env_factory):
    from api.datastream import ProcessAllWindowFunction

    class Everything(ProcessAllWindowFunction):
        def process(self, context, elements):
            yield context.window().start, context.current_watermark(), \
                sorted(e[1] for e in elements)

    env = env_factory(parallelism=2)
    got = sorted(timestamped(env, DATA).window_all(TumblingEventTimeWindows.of(Time.seconds(5)))
                 .process(Everything()).execute_and_collect())
    assert got == [(0, MAX, [1, 2, 3, 6]), (5000, MAX, [4]), (10000, MAX, [5])]


def test_a_user_written_merging_assigner(env_factory):
    from api.datastream.window import (EventTimeTrigger, MergingWindowAssigner, TimeWindow)

    class TwoSecondSessions(MergingWindowAssigner):
        def assign_windows(self, element, timestamp, context):
            return [TimeWindow(timestamp, timestamp + 2000)]

        def merge_windows(self, windows, callback):
            TimeWindow.merge_windows(windows, callback)

        def get_default_trigger(self, env):
            return EventTimeTrigger.create()

        def is_event_time(self):
            return True

    env = env_factory(parallelism=2)
    got = list(timestamped(env, DATA).key_by(lambda r: r[0]).window(TwoSecondSessions())
               .process(Contents()).execute_and_collect())
    assert sorted(got) == reference(DATA, None, 2000)


@pytest.mark.parametrize("kind", sorted(ASSIGNERS))
def test_windows_on_the_rocksdb_state_backend(kind):
    from api.datastream import EmbeddedRocksDBStateBackend
    make_assigner, windows_of, gap = ASSIGNERS[kind]
    env = make_env("local", parallelism=2, micro_batch_size=1)
    env.set_state_backend(EmbeddedRocksDBStateBackend())
    got = list(timestamped(env, DATA).key_by(lambda r: r[0]).window(make_assigner())
               .process(Contents()).execute_and_collect())
    assert sorted(got) == reference(DATA, windows_of, gap)


def test_only_a_process_window_functions_own_clear_is_called_at_cleanup(env_factory):
    """The interfaces' clear does nothing, so the operator skips it; a clear of the
    function's own is called once per window; a WindowFunction has no clear to call."""
    from api.datastream.functions import ProcessAllWindowFunction, WindowFunction
    from api.datastream.windowed_stream import WindowedStream

    class Plain(ProcessWindowFunction):
        def process(self, key, context, elements):
            yield key

    class Clearing(Plain):
        def clear(self, context):
            pass

    class AllClearing(ProcessAllWindowFunction):
        def process(self, context, elements):
            yield len(elements)

        def clear(self, context):
            pass

    class ApplyWithClear(WindowFunction):
        def apply(self, key, window, inputs):
            yield key

        def clear(self, context):
            raise AssertionError("not part of WindowFunction")

    env = env_factory(parallelism=1)
    stream = keyed(env).window(TumblingEventTimeWindows.of(Time.seconds(5)))
    def clears(stream, function):  # what the operator is told
        return WindowedStream._call(stream, function, single=False).clears

    assert [clears(stream, f) for f in (Plain(), Clearing(), ApplyWithClear())] == \
        [False, True, False]
    all_stream = timestamped(env, DATA).window_all(TumblingEventTimeWindows.of(Time.seconds(5)))
    assert clears(all_stream, AllClearing())
    assert sorted(stream.apply(ApplyWithClear()).execute_and_collect()) == \
        sorted(stream.process(Plain()).execute_and_collect())


class FiredAt(ProcessWindowFunction):
    """A window's key, start and timestamps, and the processing time it fired at."""

    def process(self, key, context, elements):
        yield (key, context.window().start, sorted(t for _, t in elements),
               context.current_processing_time())


def fired_in_batches(batches, bound, size):
    """Brute force: per (key, window start) its timestamps and the (1-based) batch that
    fires it. After batch i the watermark is the largest timestamp so far - bound - 1
    (the last batch's: +inf); a record whose window the watermark before its batch
    passed is late and dropped."""
    watermark, largest = MIN_TIME, None
    contents, fired = defaultdict(list), {}
    for i, batch in enumerate(batches, 1):
        for key, t in batch:
            if t - t % size + size - 1 > watermark:
                contents[key, t - t % size].append(t)
        largest = max([t for _, t in batch] + ([] if largest is None else [largest]),
                      default=None)
        if i == len(batches):
            watermark = MAX_TIME
        elif largest is not None:
            watermark = max(watermark, largest - bound - 1)
        for (key, start) in contents:
            if start + size - 1 <= watermark:
                fired.setdefault((key, start), i)
    return sorted((key, start, sorted(ts), fired[key, start])
                  for (key, start), ts in contents.items())


@settings(max_examples=30, deadline=None)
@given(batches=st.lists(st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 40_000)),
                                 max_size=5), min_size=1, max_size=6),
       bound=st.sampled_from([0, 3000]), parallelism=st.sampled_from([1, 2]))
def test_a_window_fires_in_the_batch_whose_records_pass_its_end(batches, bound, parallelism):
    """The watermark travels with the records: a window fires in the micro-batch whose
    records move the watermark past its end (seen by the processing time it fires at:
    each batch of the script has its own), not in a later one."""
    from api.testing import TestStream
    stream = TestStream()
    for batch in batches:  # batch i's processing time is i (with an empty batch before)
        stream.advance_processing_time(1).add_elements([((key, t), t) for key, t in batch])
    env = make_env("local", parallelism=1)  # (one watermark input: the script's)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(bound))
    got = list(env.from_source(stream, strategy, "steps").key_by(lambda r: r[0])
               .window(TumblingEventTimeWindows.of(Time.seconds(5))).process(FiredAt())
               .set_parallelism(parallelism).execute_and_collect())
    assert sorted(got) == fired_in_batches(batches, bound, 5000)


@settings(max_examples=20, deadline=None)
@given(draws=st.lists(st.tuples(st.sampled_from("ab"), st.integers(0, 30_000),
                                st.integers(0, 3000)), max_size=25),
       parallelism=st.sampled_from([1, 2, 3]), batch_size=st.sampled_from([1, 3, 1000]))
def test_a_window_of_windows_matches_the_brute_force_reference(draws, parallelism, batch_size):
    """Windows of 1 s, then windows of 5 s over their results (stamped with their ends):
    the second takes the watermark from its input too (the timestamps pass through the
    first), and no result of the first is late in it, whatever the batch size and
    parallelism."""
    bases = sorted(base for _, base, _ in draws)
    data = [(key, i, base - jitter)
            for i, ((key, _, jitter), base) in enumerate(zip(draws, bases))]
    env = make_env("local", parallelism=parallelism, micro_batch_size=batch_size)
    got = list(timestamped(env, data, disorder_ms=3000).key_by(lambda r: r[0])
               .window(TumblingEventTimeWindows.of(Time.seconds(1)))
               .reduce(lambda a, b: (a[0], a[1] + b[1], a[2])).key_by(lambda r: r[0])
               .window(TumblingEventTimeWindows.of(Time.seconds(5))).process(Contents())
               .execute_and_collect())
    sums = defaultdict(int)
    for key, value, ts in data:
        sums[key, ts - ts % 1000] += value
    expected = reference([(key, total, start) for (key, start), total in sums.items()],
                         tumbling(5000))
    assert sorted(got) == expected
