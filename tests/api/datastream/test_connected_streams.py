"""connect() with Co-Map, Co-Flat Map, CoProcessFunction and KeyedCoProcessFunction.

Expected outputs were printed by PyFlink 2.3.0 (parallelism 2, STREAMING) for the same
programs; subtask prefixes are left out (key-to-subtask placement differs). The property
test at the end checks results against a plain-Python reference instead."""
from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

from api.common import Types, WatermarkStrategy
from api.common.watermark_strategy import TimestampAssigner
from api.datastream import (CoFlatMapFunction, CoMapFunction, CoProcessFunction,
                            KeyedCoProcessFunction, OutputTag,
                            RuntimeExecutionMode)
from api.datastream.state import ListStateDescriptor, ValueStateDescriptor
from engine.errors import JobExecutionException
from tests.conftest import make_env

LEFT = [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("b", 50), ("a", 60)]
RIGHT = [("a", 5, "x"), ("c", 7, "y"), ("b", 8, "z"), ("a", 70, "w")]


class EventTime(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


def _timed(stream):
    return stream.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(EventTime()))


class Tag(CoMapFunction):
    def map1(self, value):
        return ("left", value[0], value[1] * 2)

    def map2(self, value):
        return ("right", value[0], value[1] + 1000)


class Spread(CoFlatMapFunction):
    def flat_map1(self, value):
        for i in range(value[1] % 3):
            yield (value[0], i)

    def flat_map2(self, value):
        yield value[0].upper()


class Join(KeyedCoProcessFunction):
    """Sums input 1, collects input 2's labels; a timer 100 ms after each record reports."""

    def open(self, runtime_context):
        self.total = runtime_context.get_state(ValueStateDescriptor("total", Types.LONG()))
        self.seen = runtime_context.get_list_state(ListStateDescriptor("seen", Types.STRING()))

    def process_element1(self, value, ctx):
        self.total.update((self.total.value() or 0) + value[1])
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 100)

    def process_element2(self, value, ctx):
        self.seen.add(value[2])
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 100)

    def on_timer(self, timestamp, ctx):
        yield (ctx.get_current_key(), timestamp, self.total.value(), sorted(self.seen.get()),
               str(ctx.time_domain()))


def test_co_map_and_co_flat_map_see_each_input_with_its_method(env_factory):
    env = env_factory(parallelism=2)
    left, right = env.from_collection(LEFT), env.from_collection(RIGHT)
    mapped = left.connect(right).map(Tag()).execute_and_collect()
    assert Counter(mapped) == Counter([
        ("left", "a", 2), ("left", "b", 4), ("left", "a", 6), ("left", "c", 8),
        ("left", "b", 100), ("left", "a", 120), ("right", "a", 1005), ("right", "c", 1007),
        ("right", "b", 1008), ("right", "a", 1070)])
    env = env_factory(parallelism=2)
    spread = env.from_collection(LEFT).connect(env.from_collection(RIGHT)).flat_map(Spread())
    assert Counter(spread.execute_and_collect()) == Counter([
        ("a", 0), ("b", 0), ("b", 1), ("c", 0), ("b", 0), ("b", 1), "A", "C", "B", "A"])


@pytest.mark.parametrize("mode", [RuntimeExecutionMode.STREAMING, RuntimeExecutionMode.BATCH])
def test_keyed_co_process_shares_keyed_state_and_timers_across_inputs(env_factory, mode):
    env = env_factory(parallelism=2)
    env.set_runtime_mode(mode)
    joined = _timed(env.from_collection(LEFT)).connect(_timed(env.from_collection(RIGHT))) \
        .key_by(lambda v: v[0], lambda v: v[0]).process(Join())
    # PyFlink 2.3.0 STREAMING gives these; its BATCH mode loses input 2's state of key 'a'
    # (a known fault): BATCH here gives what the documents describe, the same result.
    domain = "TimeDomain.EVENT_TIME"
    assert sorted(joined.execute_and_collect()) == sorted(
        [("a", t, 64, ["w", "x"], domain) for t in (101, 103, 105, 160, 170)]
        + [("b", t, 52, ["z"], domain) for t in (102, 108, 150)]
        + [("c", t, 4, ["y"], domain) for t in (104, 107)])


def test_connected_keyed_streams_are_keyed_and_connect_keeps_both_key_selectors(env_factory):
    class Count(KeyedCoProcessFunction):
        def open(self, runtime_context):
            self.count = runtime_context.get_state(ValueStateDescriptor("n", Types.INT()))

        def process_element1(self, value, ctx):
            self.count.update((self.count.value() or 0) + 1)
            yield ctx.get_current_key(), self.count.value()

        process_element2 = process_element1

    env = env_factory(parallelism=2)
    left = env.from_collection(LEFT).key_by(lambda v: v[0])
    right = env.from_collection([("A", 0), ("B", 0)]).key_by(lambda v: v[0].lower())
    counted = sorted(left.connect(right).process(Count()).execute_and_collect())
    assert counted == [("a", 1), ("a", 2), ("a", 3), ("a", 4), ("b", 1), ("b", 2), ("b", 3),
                       ("c", 1)]


def test_co_process_side_outputs_timestamps_and_watermark(env_factory):
    small = OutputTag("small", Types.TUPLE([Types.STRING(), Types.INT()]))

    class Split(CoProcessFunction):
        def process_element1(self, value, ctx):
            if value[1] < 10:
                yield small, value
            else:
                yield ("big", value[1], ctx.timestamp(),
                       ctx.timer_service().current_watermark() < value[1])

        def process_element2(self, value, ctx):
            yield small, (value[2], value[1])
            yield "right", ctx.timestamp()

    env = env_factory(parallelism=2)
    split = _timed(env.from_collection(LEFT)).connect(_timed(env.from_collection(RIGHT))) \
        .process(Split())
    main = list(split.execute_and_collect())
    assert sorted(main, key=repr) == sorted([
        ("big", 50, 50, True), ("big", 60, 60, True), ("right", 5), ("right", 7),
        ("right", 70), ("right", 8)], key=repr)
    env = env_factory(parallelism=2)
    split = _timed(env.from_collection(LEFT)).connect(_timed(env.from_collection(RIGHT))) \
        .process(Split())
    with split.get_side_output(small).execute_and_collect() as records:
        assert sorted(records) == [("a", 1), ("a", 3), ("b", 2), ("c", 4), ("w", 70), ("x", 5),
                                   ("y", 7), ("z", 8)]


def test_union_of_streams_from_different_stages(env_factory):
    env = env_factory(parallelism=2)
    sums = env.from_collection(LEFT).key_by(lambda v: v[0]).reduce(
        lambda a, b: (a[0], a[1] + b[1]))
    doubled = env.from_collection([("d", 1), ("e", 2)]).map(lambda v: (v[0], v[1] * 2))
    assert sorted(sums.union(doubled).execute_and_collect()) == sorted(
        [("a", 1), ("b", 2), ("a", 4), ("c", 4), ("b", 52), ("a", 64), ("d", 2), ("e", 4)])


def test_a_keyed_stream_consumed_by_a_non_keyed_operator_sees_values(env_factory):
    env = env_factory(parallelism=2)
    assert sorted(env.from_collection([3, 1, 2]).key_by(lambda x: x % 2)
                  .execute_and_collect()) == [1, 2, 3]


def test_wrong_functions_fail_when_the_job_is_built():
    env = make_env("local")
    connected = env.from_collection(LEFT).connect(env.from_collection(RIGHT))
    with pytest.raises(TypeError, match="CoMapFunction"):
        connected.map(lambda v: v)
    with pytest.raises(TypeError, match="CoFlatMapFunction"):
        connected.flat_map(Tag())
    with pytest.raises(TypeError, match="KeyedCoProcessFunction needs keyed streams"):
        connected.process(Join())
    with pytest.raises(TypeError, match="DataStream or a BroadcastStream"):
        env.from_collection(LEFT).connect([1, 2])


def test_a_failing_co_function_names_the_operator_and_record():
    class Fails(CoMapFunction):
        def map1(self, value):
            return value

        def map2(self, value):
            raise ValueError("no right side")

    env = make_env("local")
    env.from_collection(LEFT).connect(env.from_collection(RIGHT)).map(Fails()).print()
    with pytest.raises(JobExecutionException, match=r"'Co-Map' failed on record \('a', 5, 'x'\)"
                                                    r": ValueError: no right side"):
        env.execute()


class CountAndReport(KeyedCoProcessFunction):
    """Running count per key over both inputs (the multiset of counts does not depend on
    the order of a key's records) and, at a timer 10 ms after each record, how many of the
    key's records are at or before the timer (the records are kept in state)."""

    def open(self, runtime_context):
        self.times = runtime_context.get_list_state(ListStateDescriptor("t", Types.LONG()))

    def _element(self, value, ctx):
        self.times.add(value[1])
        yield "count", ctx.get_current_key(), len(list(self.times.get()))
        ctx.timer_service().register_event_time_timer(value[1] + 10)

    process_element1 = process_element2 = _element

    def on_timer(self, timestamp, ctx):
        yield ("timer", ctx.get_current_key(), timestamp,
               sum(1 for t in self.times.get() if t <= timestamp))


def _reference(left, right):
    out = Counter()
    records = left + right
    for key in {k for k, _ in records}:
        times = [t for k, t in records if k == key]
        out.update(("count", key, n) for n in range(1, len(times) + 1))
        out.update(("timer", key, t + 10, sum(1 for u in times if u <= t + 10))
                   for t in set(times))
    return out


ELEMENTS = st.lists(st.tuples(st.sampled_from("abcde"), st.integers(0, 50)), max_size=30)


@settings(max_examples=40, deadline=None)
@given(left=ELEMENTS, right=ELEMENTS, parallelism=st.sampled_from([1, 2, 4]),
       batch=st.sampled_from([1, 3, 1000]))
def test_keyed_two_input_results_do_not_depend_on_parallelism_or_batch_size(
        left, right, parallelism, batch):
    left = sorted(left, key=lambda e: e[1])   # monotonous timestamps per input
    right = sorted(right, key=lambda e: e[1])
    env = make_env("local", parallelism=parallelism, micro_batch_size=batch)
    out = _timed(env.from_collection(left or [("a", 0)])).connect(
        _timed(env.from_collection(right or [("a", 0)]))) \
        .key_by(lambda v: v[0], lambda v: v[0]).process(CountAndReport())
    assert Counter(out.execute_and_collect()) == _reference(left or [("a", 0)],
                                                            right or [("a", 0)])


def test_keyed_two_input_job_on_spark_at_small_batches(spark):
    left = [(k, t) for t, k in enumerate("abcabcaab")]
    right = [(k, t) for t, k in enumerate("ccbad")]
    env = make_env("spark", parallelism=2, micro_batch_size=2)
    out = _timed(env.from_collection(left)).connect(_timed(env.from_collection(right))) \
        .key_by(lambda v: v[0], lambda v: v[0]).process(CountAndReport())
    assert Counter(out.execute_and_collect()) == _reference(left, right)
