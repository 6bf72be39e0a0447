"""Broadcast state: ds.broadcast(descriptor), connect, (Keyed)BroadcastProcessFunction.

Expected values were printed by PyFlink 2.3.0 at parallelism 2 for the same programs."""
from collections import Counter

import pytest

from api.common import Types, WatermarkStrategy
from api.common.watermark_strategy import TimestampAssigner
from api.datastream import (BroadcastProcessFunction, KeyedBroadcastProcessFunction,
                            RuntimeExecutionMode)
from api.datastream.state import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
from engine.errors import JobExecutionException
from tests.conftest import make_env

EVENTS = [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("b", 50), ("a", 60)]
RULES = [("a", 10), ("b", 100), ("c", 1000)]
FACTORS = MapStateDescriptor("rules", Types.STRING(), Types.INT())


class EventTime(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class ApplyAtEnd(KeyedBroadcastProcessFunction):
    """Buffers each key's values; at the end (a timer) multiplies their sum by the key's
    factor from the broadcast state."""

    def open(self, runtime_context):
        self.values = runtime_context.get_list_state(ListStateDescriptor("buf", Types.INT()))

    def process_element(self, value, ctx):
        self.values.add(value[1])
        ctx.timer_service().register_event_time_timer(10 ** 6)

    def process_broadcast_element(self, value, ctx):
        ctx.get_broadcast_state(FACTORS).put(value[0], value[1])

    def on_timer(self, timestamp, ctx):
        factors = ctx.get_broadcast_state(FACTORS)
        factor = factors.get(ctx.get_current_key()) or 0
        yield ctx.get_current_key(), sum(self.values.get()) * factor, sorted(factors.keys())


class Lookup(BroadcastProcessFunction):
    def process_element(self, value, ctx):
        factors = ctx.get_broadcast_state(FACTORS)
        yield value[0], factors.get(value[0]), factors.contains(value[0])

    def process_broadcast_element(self, value, ctx):
        ctx.get_broadcast_state(FACTORS).put(value[0], value[1])


def _events(env):
    return env.from_collection(EVENTS).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(EventTime()))


@pytest.mark.parametrize("mode", [RuntimeExecutionMode.STREAMING, RuntimeExecutionMode.BATCH])
def test_keyed_broadcast_process_function_reads_broadcast_state_in_on_timer(env_factory, mode):
    env = env_factory(parallelism=2, micro_batch_size=2)
    env.set_runtime_mode(mode)
    out = _events(env).key_by(lambda v: v[0]).connect(
        env.from_collection(RULES).broadcast(FACTORS)).process(ApplyAtEnd())
    # PyFlink 2.3.0 STREAMING; its BATCH mode loses and repeats keyed state here (known
    # faults), BATCH gives what the documents describe.
    assert sorted(out.execute_and_collect()) == [
        ("a", 640, ["a", "b", "c"]), ("b", 5200, ["a", "b", "c"]),
        ("c", 4000, ["a", "b", "c"])]


def test_a_batch_sees_the_broadcast_updates_of_the_same_batch(env_factory):
    # Broadcast records are processed first within each micro-batch (here: one batch),
    # so every element finds every rule; PyFlink's BATCH mode gives the same.
    env = env_factory(parallelism=2)
    out = env.from_collection(EVENTS).connect(env.from_collection(RULES).broadcast(FACTORS)) \
        .process(Lookup())
    assert Counter(out.execute_and_collect()) == Counter(
        [("a", 10, True), ("a", 10, True), ("b", 100, True), ("a", 10, True),
         ("b", 100, True), ("c", 1000, True)])


def test_every_parallel_instance_holds_the_whole_broadcast_state(env_factory):
    class Snapshot(BroadcastProcessFunction):
        def open(self, runtime_context):
            self.index = runtime_context.get_index_of_this_subtask()

        def process_element(self, value, ctx):
            yield self.index, sorted(ctx.get_broadcast_state(FACTORS).items())

        def process_broadcast_element(self, value, ctx):
            ctx.get_broadcast_state(FACTORS)[value[0]] = value[1]

    env = env_factory(parallelism=3)
    out = env.from_collection(range(9)).rebalance().connect(
        env.from_collection(RULES).broadcast(FACTORS)).process(Snapshot())
    seen = list(out.execute_and_collect())
    assert {index for index, _ in seen} == {0, 1, 2}
    assert all(state == sorted(RULES) for _, state in seen)


def test_apply_to_keyed_state_visits_every_key_with_state(env_factory):
    counter = ValueStateDescriptor("count", Types.INT())

    class Reset(KeyedBroadcastProcessFunction):
        def open(self, runtime_context):
            self.count = runtime_context.get_state(counter)

        def process_element(self, value, ctx):
            self.count.update((self.count.value() or 0) + 1)
            yield "count", ctx.get_current_key(), self.count.value()

        def process_broadcast_element(self, value, ctx):
            seen = []

            def add_bonus(key, state):
                seen.append(key)
                state.update(state.value() + value)
            ctx.apply_to_keyed_state(counter, add_bonus)
            yield "visited", ctx.current_watermark() is not None, sorted(seen)

    env = env_factory(parallelism=1, micro_batch_size=3)
    # Batch 1: a, b, a counted, then (batch 2) the bonus of 100 reaches every key with state
    # before a, c of batch 2 are counted.
    events = env.from_collection(["a", "b", "a", "a", "c"])
    bonuses = env.from_collection([0, 0, 0, 100]).broadcast(FACTORS)
    out = events.key_by(lambda k: k).connect(bonuses).process(Reset())
    records = list(out.execute_and_collect())
    assert [r for r in records if r[0] == "count"] == [
        ("count", "a", 1), ("count", "b", 1), ("count", "a", 2),
        ("count", "a", 103), ("count", "c", 1)]
    assert [r for r in records if r[0] == "visited"] == [
        ("visited", True, []), ("visited", True, []), ("visited", True, []),
        ("visited", True, ["a", "b"])]


def test_the_non_broadcast_side_cannot_change_broadcast_state():
    class Writes(BroadcastProcessFunction):
        def process_element(self, value, ctx):
            ctx.get_broadcast_state(FACTORS).put(value[0], 1)

        def process_broadcast_element(self, value, ctx):
            pass

    env = make_env("local")
    env.from_collection(EVENTS).connect(env.from_collection(RULES).broadcast(FACTORS)) \
        .process(Writes()).print()
    with pytest.raises(JobExecutionException,
                       match=r"'Co-Process-Broadcast' failed on record \('a', 1\): "
                             r"RuntimeError: broadcast state is read-only in process_element"):
        env.execute()


def test_an_undeclared_broadcast_state_is_a_clear_error():
    other = MapStateDescriptor("other", Types.STRING(), Types.INT())

    class UsesOther(Lookup):
        def process_broadcast_element(self, value, ctx):
            ctx.get_broadcast_state(other).put(value[0], value[1])

    env = make_env("local")
    env.from_collection(EVENTS).connect(env.from_collection(RULES).broadcast(FACTORS)) \
        .process(UsesOther()).print()
    with pytest.raises(JobExecutionException, match="no broadcast state 'other': declare"):
        env.execute()


def test_wrong_functions_and_descriptors_fail_when_the_job_is_built():
    env = make_env("local")
    with pytest.raises(TypeError, match="MapStateDescriptor"):
        env.from_collection(RULES).broadcast(ValueStateDescriptor("v", Types.INT()))
    rules = env.from_collection(RULES).broadcast(FACTORS)
    with pytest.raises(TypeError, match="expects a KeyedBroadcastProcessFunction"):
        env.from_collection(EVENTS).key_by(lambda v: v[0]).connect(rules).process(Lookup())
    with pytest.raises(TypeError, match="needs key_by"):
        env.from_collection(EVENTS).connect(rules).process(ApplyAtEnd())


def test_a_state_asked_for_per_element_is_that_descriptors_each_time():
    """Functions ask for broadcast state per element; another descriptor of the same
    name is read anew: a declared MapStateDescriptor reads the same state, one of
    another kind is still an error after the first has been used."""
    same_name = MapStateDescriptor("rules", Types.STRING(), Types.INT())
    wrong_kind = ValueStateDescriptor("rules", Types.INT())

    class Alternates(Lookup):
        def process_element(self, value, ctx):
            first = ctx.get_broadcast_state(FACTORS).get(value[0])
            again = ctx.get_broadcast_state(FACTORS).get(value[0])
            yield value[0], first, again, ctx.get_broadcast_state(same_name).get(value[0])

    env = make_env("local")
    got = list(env.from_collection(EVENTS).connect(env.from_collection(RULES)
                                                   .broadcast(FACTORS))
               .process(Alternates()).execute_and_collect())
    factor = dict(RULES)
    assert sorted(got) == sorted((k, factor[k], factor[k], factor[k]) for k, _ in EVENTS)

    class WrongKind(Lookup):
        def process_element(self, value, ctx):
            ctx.get_broadcast_state(FACTORS).get(value[0])
            ctx.get_broadcast_state(wrong_kind)
            yield value

    env = make_env("local")
    env.from_collection(EVENTS).connect(env.from_collection(RULES).broadcast(FACTORS)) \
        .process(WrongKind()).print()
    with pytest.raises(JobExecutionException, match=r"'Co-Process-Broadcast' failed on record "
                       r"\('a', 1\): TypeError: get_map_state\(\) needs a MapStateDescriptor"):
        env.execute()
