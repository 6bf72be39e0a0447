"""State TTL end to end: a keyed process function with TTL on all five kinds of state.

The expected outputs of ``test_ttl_state_in_a_keyed_process_function`` were checked
against PyFlink 2.3.0 (TTL ``Time.milliseconds(2000)``, parallelism 1,
``python.execution-mode: thread``): there the same function ran on
``from_collection`` with ``time.sleep(1.2)`` where this test's TestStream advances the
processing time by 1200 ms. (In PyFlink's default process mode the Python worker's
state cache keeps expired values visible, so thread mode is the reference.)
"""
import pickle

import cloudpickle
import pytest

from api.common import Duration, Time, WatermarkStrategy
from api.datastream import EmbeddedRocksDBStateBackend, KeyedProcessFunction
from api.datastream.functions import AggregateFunction
from api.datastream.state import (
    AggregatingStateDescriptor, ListStateDescriptor, MapStateDescriptor,
    ReducingStateDescriptor, StateTtlConfig, ValueStateDescriptor,
)
from api.testing.test_stream import TestStream
from engine.runtime.context import StreamingRuntimeContext
from statebackends.base import DEFAULT_SNAPSHOT_INTERVAL
from statebackends.hashmap import HashMapKeyedStateBackend
from core.state_spec import StateKind, StateSpec
from tests.conftest import make_env


class Average(AggregateFunction):
    def create_accumulator(self):
        return 0, 0

    def add(self, value, accumulator):
        return accumulator[0] + value, accumulator[1] + 1

    def get_result(self, accumulator):
        return accumulator[0] / accumulator[1]

    def merge(self, a, b):
        return a[0] + b[0], a[1] + b[1]


def ttl_config(read: bool, return_expired: bool) -> StateTtlConfig:
    builder = StateTtlConfig.new_builder(Time.milliseconds(2000))
    builder = builder.return_expired_if_not_cleaned_up() if return_expired else \
        builder.never_return_expired()
    builder = builder.update_ttl_on_read_and_write() if read else \
        builder.update_ttl_on_create_and_write()
    return builder.build()


class AllKindsOfState(KeyedProcessFunction):
    """("put", x) writes x to every state; ("get", _) only reads; both emit the states."""

    def __init__(self, config: StateTtlConfig):
        self.config = config

    def open(self, runtime_context):
        descriptors = [ValueStateDescriptor("v", None), ListStateDescriptor("l", None),
                       MapStateDescriptor("m", None, None),
                       ReducingStateDescriptor("r", lambda a, b: a + b, None),
                       AggregatingStateDescriptor("a", Average(), None)]
        for descriptor in descriptors:
            descriptor.enable_time_to_live(self.config)
        self.value = runtime_context.get_state(descriptors[0])
        self.list = runtime_context.get_list_state(descriptors[1])
        self.map = runtime_context.get_map_state(descriptors[2])
        self.sum = runtime_context.get_reducing_state(descriptors[3])
        self.average = runtime_context.get_aggregating_state(descriptors[4])

    def process_element(self, value, ctx):
        key, op, x = value
        if op == "put":
            self.value.update(x)
            self.list.add(x)
            self.map.put(x, x * 10)
            self.sum.add(x)
            self.average.add(x)
        yield (key, op, x, self.value.value(), list(self.list.get()),
               sorted(self.map.items()), self.sum.get(), self.average.get())


# Processing time 0, then 1200, then 2400: what was last written (or, with
# OnReadAndWrite, read) at 0 has expired at 2400, what was touched at 1200 has not.
STEPS = (TestStream()
         .add_elements([(("a", "put", 1), 0), (("b", "put", 1), 0), (("c", "put", 1), 0)])
         .advance_processing_time(1200)
         .add_elements([(("a", "get", 0), 0), (("c", "put", 2), 0)])
         .advance_processing_time(1200)
         .add_elements([(("a", "get", 0), 0), (("b", "get", 0), 0), (("c", "get", 0), 0),
                        (("a", "get", 0), 0), (("c", "get", 0), 0)]))

ONE = [1, [1], [(1, 10)], 1, 1.0]
NONE = [None, [], [], None, None]
C2 = [2, [1, 2], [(1, 10), (2, 20)], 3, 1.5]
FIRST_TWO_BATCHES = [
    ("a", "put", 1, *ONE), ("b", "put", 1, *ONE), ("c", "put", 1, *ONE),
    ("a", "get", 0, *ONE), ("c", "put", 2, *C2)]
EXPECTED = {  # (OnReadAndWrite, ReturnExpiredIfNotCleanedUp): the last batch's outputs
    (False, False): [("a", "get", 0, *NONE), ("b", "get", 0, *NONE),
                     ("c", "get", 0, 2, [2], [(2, 20)], 3, 1.5),
                     ("a", "get", 0, *NONE), ("c", "get", 0, 2, [2], [(2, 20)], 3, 1.5)],
    (True, False): [("a", "get", 0, *ONE), ("b", "get", 0, *NONE), ("c", "get", 0, *C2),
                    ("a", "get", 0, *ONE), ("c", "get", 0, *C2)],
    # expired values are returned by the read that cleans them up; an expired list
    # element stays until the whole list has expired (Flink's TtlListState)
    (False, True): [("a", "get", 0, *ONE), ("b", "get", 0, *ONE), ("c", "get", 0, *C2),
                    ("a", "get", 0, *NONE),
                    ("c", "get", 0, 2, [1, 2], [(2, 20)], 3, 1.5)],
    (True, True): [("a", "get", 0, *ONE), ("b", "get", 0, *ONE), ("c", "get", 0, *C2),
                   ("a", "get", 0, *ONE), ("c", "get", 0, *C2)],
}


def run(env, function):
    return list(env.from_source(STEPS, WatermarkStrategy.no_watermarks(), "steps")
                .key_by(lambda r: r[0]).process(function).execute_and_collect())


@pytest.mark.parametrize("read, return_expired", sorted(EXPECTED))
@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_ttl_state_in_a_keyed_process_function(read, return_expired, backend):
    env = make_env("local", parallelism=1)
    if backend == "rocksdb":
        env.set_state_backend(EmbeddedRocksDBStateBackend())
    got = run(env, AllKindsOfState(ttl_config(read, return_expired)))
    assert got == FIRST_TWO_BATCHES + EXPECTED[(read, return_expired)]


def test_ttl_state_on_spark_with_two_partitions(spark):
    env = make_env("spark", parallelism=2)
    got = run(env, AllKindsOfState(ttl_config(False, False)))
    by_key = lambda rows: sorted(rows, key=lambda r: r[0])  # noqa: E731 (stable per key)
    assert by_key(got) == by_key(FIRST_TWO_BATCHES + EXPECTED[(False, False)])


def test_the_builder_defaults_and_getters():
    config = StateTtlConfig.new_builder(Time.seconds(1)).build()
    assert config.get_ttl() == Time.seconds(1)
    assert config.get_update_type() == StateTtlConfig.UpdateType.OnCreateAndWrite
    assert config.get_state_visibility() == StateTtlConfig.StateVisibility.NeverReturnExpired
    assert config.get_ttl_time_characteristic() == \
        StateTtlConfig.TtlTimeCharacteristic.ProcessingTime
    assert config.is_enabled()
    strategies = config.get_cleanup_strategies()
    assert strategies.is_cleanup_in_background() and not strategies.in_full_snapshot()
    assert strategies.get_incremental_cleanup_strategy().get_cleanup_size() == 5
    assert strategies.get_rocksdb_compact_filter_cleanup_strategy() \
        .get_query_time_after_num_entries() == 1000

    config = (StateTtlConfig.new_builder(Time.seconds(1)).set_ttl(Duration.of_millis(5))
              .set_update_type(StateTtlConfig.UpdateType.OnReadAndWrite)
              .set_state_visibility(StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp)
              .use_processing_time().disable_cleanup_in_background()
              .cleanup_full_snapshot().cleanup_incrementally(7, True).build())
    assert config.get_ttl().to_milliseconds() == 5
    assert config.get_update_type() == StateTtlConfig.UpdateType.OnReadAndWrite
    strategies = config.get_cleanup_strategies()
    assert not strategies.is_cleanup_in_background() and strategies.in_full_snapshot()
    incremental = strategies.get_incremental_cleanup_strategy()
    assert (incremental.get_cleanup_size(), incremental.run_cleanup_for_every_record()) == \
        (7, True)
    assert strategies.get_rocksdb_compact_filter_cleanup_strategy() is None


def test_bad_ttl_configurations_fail_clearly():
    with pytest.raises(ValueError, match="TTL is expected to be positive, got 0 ms"):
        StateTtlConfig.new_builder(Time.milliseconds(0)).build()
    with pytest.raises(TypeError, match="the TTL must be a Time or Duration, got 5"):
        StateTtlConfig.new_builder(5).build()
    with pytest.raises(TypeError, match="enable_time_to_live\\(\\) of state 'v' needs a "
                                        "StateTtlConfig, got int"):
        ValueStateDescriptor("v", None).enable_time_to_live(5)


def test_descriptors_with_ttl_survive_pickling():
    descriptor = ListStateDescriptor("l", None)
    descriptor.enable_time_to_live(
        StateTtlConfig.new_builder(Time.seconds(3)).update_ttl_on_read_and_write()
        .cleanup_in_rocksdb_compact_filter(10).build())
    for dumps in (pickle.dumps, cloudpickle.dumps):
        config = pickle.loads(dumps(descriptor))._ttl_config
        assert config.get_update_type() is StateTtlConfig.UpdateType.OnReadAndWrite
        assert config.get_cleanup_strategies().get_rocksdb_compact_filter_cleanup_strategy() \
            .get_query_time_after_num_entries() == 10


class Clock:
    processing_time = 0


def runtime_context(backend, clock=None):
    return StreamingRuntimeContext("op", 0, 1, 128, 0, {}, backend, clock)


def test_state_without_ttl_or_with_disabled_ttl_is_the_backends_own():
    backend = HashMapKeyedStateBackend("op", (0, 127), 128)
    context = runtime_context(backend, Clock())
    plain = ValueStateDescriptor("plain", None)
    disabled = ValueStateDescriptor("disabled", None)
    disabled.enable_time_to_live(StateTtlConfig.new_builder(Time.seconds(1))
                                 .set_update_type(StateTtlConfig.UpdateType.Disabled).build())
    assert context.get_state(plain) is backend.state(StateSpec("plain", StateKind.VALUE))
    assert context.get_state(disabled) is backend.state(StateSpec("disabled", StateKind.VALUE))


def test_ttl_state_needs_a_clock_and_the_matching_getter():
    backend = HashMapKeyedStateBackend("op", (0, 127), 128)
    descriptor = ListStateDescriptor("l", None)
    descriptor.enable_time_to_live(StateTtlConfig.new_builder(Time.seconds(1)).build())
    with pytest.raises(RuntimeError, match="State 'l' has time-to-live enabled, but "
                                           "operator 'op' has no processing-time clock"):
        runtime_context(backend).get_list_state(descriptor)
    with pytest.raises(TypeError, match=r"get_map_state\(\) needs a MapStateDescriptor, "
                                         r"got ListStateDescriptor 'l'"):
        runtime_context(backend, Clock()).get_map_state(descriptor)


class ReadsOnGet(KeyedProcessFunction):
    def __init__(self, config: StateTtlConfig):
        self.config = config

    def open(self, runtime_context):
        descriptor = ValueStateDescriptor("v", None)
        descriptor.enable_time_to_live(self.config)
        self.value = runtime_context.get_state(descriptor)

    def process_element(self, value, ctx):
        if value[1] == "put":
            self.value.update(value[2])
        else:
            yield self.value.value()


@pytest.mark.parametrize("cleanup, expected", [
    (lambda builder: builder, [None]),  # background cleanup (the default) drops it
    (lambda builder: builder.disable_cleanup_in_background(), [1]),  # only access does
])
def test_full_state_snapshots_drop_expired_state(cleanup, expected):
    """The state is written as a full snapshot every DEFAULT_SNAPSHOT_INTERVAL batches
    (batch 0, then batch 10): the value expires in batch 1, the snapshot of batch 10
    drops it, and batch 11 reads it (ReturnExpiredIfNotCleanedUp would return it)."""
    builder = StateTtlConfig.new_builder(Time.milliseconds(1000)) \
        .return_expired_if_not_cleaned_up()
    steps = TestStream().add_elements([(("a", "put", 1), 0)]).advance_processing_time(1000)
    for _ in range(2, DEFAULT_SNAPSHOT_INTERVAL + 1):
        steps = steps.advance_processing_time(0)
    steps = steps.add_elements([(("a", "get", 0), 0)])
    env = make_env("local", parallelism=1)
    got = list(env.from_source(steps, WatermarkStrategy.no_watermarks(), "steps")
               .key_by(lambda r: r[0]).process(ReadsOnGet(cleanup(builder).build()))
               .execute_and_collect())
    assert got == expected


def test_ttl_on_the_global_state_of_a_process_window_function(executor):
    """A window function's global_state() honours the descriptor's time-to-live, on the
    scripted processing time: a count written at 500 ms expires 1 s later."""
    from api.common import Types
    from api.datastream.functions import ProcessWindowFunction
    from api.datastream.window import TumblingEventTimeWindows

    class FiringsPerKey(ProcessWindowFunction):
        def process(self, key, context, elements):
            descriptor = ValueStateDescriptor("firings", Types.LONG())
            descriptor.enable_time_to_live(StateTtlConfig.new_builder(Time.seconds(1)).build())
            firings = context.global_state().get_state(descriptor)
            firings.update((firings.value() or 0) + 1)
            yield key, context.window().start, firings.value()

    stream = (TestStream()
              .add_elements([("a", 1000)]).advance_watermark_to(5000)       # at 0 ms
              .advance_processing_time(500)
              .add_elements([("a", 6000)]).advance_watermark_to(10000)      # at 500 ms
              .advance_processing_time(2000)
              .add_elements([("a", 11000)]).advance_watermark_to(15000))    # at 2500 ms
    env = make_env(executor, parallelism=1)
    got = list(env.from_source(stream, WatermarkStrategy.no_watermarks(), "events")
               .key_by(lambda e: e)
               .window(TumblingEventTimeWindows.of(Time.seconds(5)))
               .process(FiringsPerKey())
               .execute_and_collect())
    assert got == [("a", 0, 1), ("a", 5000, 2), ("a", 10000, 1)]
