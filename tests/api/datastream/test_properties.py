"""Property tests: keyed programs give the results of a plain-Python reference, whatever
the parallelism and micro-batch size, on the in-process executor (many examples) and on
Spark (a few)."""
from collections import defaultdict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.common import Duration, Time, TimestampAssigner, Types, WatermarkStrategy
from api.datastream import KeyedProcessFunction, RuntimeExecutionMode
from api.datastream.window import TumblingEventTimeWindows
from api.datastream.state import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
from engine.runtime import task
from tests.conftest import make_env

records = st.lists(st.tuples(st.sampled_from("abcdefg"), st.integers(-50, 50)), max_size=40)
parallelisms = st.sampled_from([1, 2, 4])
batch_sizes = st.sampled_from([1, 2, 3, 7, 1000])


def per_key(outputs, key=lambda r: r[0]):
    """Output sequences per key: the order within a key is deterministic."""
    grouped = defaultdict(list)
    for r in outputs:
        grouped[key(r)].append(r)
    return dict(grouped)


def rolling_reference(data, step):
    """Per-key rolling aggregation: step(accumulated, record) -> new accumulated."""
    acc, out = {}, []
    for r in data:
        acc[r[0]] = r if r[0] not in acc else step(acc[r[0]], r)
        out.append(acc[r[0]])
    return out


class CountAndHistory(KeyedProcessFunction):
    """Keyed state of three kinds: a count, the last three values, and a value histogram."""

    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.INT()))
        self.last = runtime_context.get_list_state(ListStateDescriptor("last", Types.INT()))
        self.seen = runtime_context.get_map_state(
            MapStateDescriptor("seen", Types.INT(), Types.INT()))

    def process_element(self, value, ctx):
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        self.last.update((list(self.last.get()) + [value[1]])[-3:])
        self.seen.put(value[1], (self.seen.get(value[1]) or 0) + 1)
        yield ctx.get_current_key(), count, tuple(self.last.get()), self.seen.get(value[1])


def state_reference(data):
    count, last, seen, out = defaultdict(int), defaultdict(list), defaultdict(dict), []
    for k, v in data:
        count[k] += 1
        last[k] = (last[k] + [v])[-3:]
        seen[k][v] = seen[k].get(v, 0) + 1
        out.append((k, count[k], tuple(last[k]), seen[k][v]))
    return out


PROGRAMS = {
    "reduce": (lambda ks: ks.reduce(lambda a, b: (a[0], a[1] + b[1])),
               lambda data: rolling_reference(data, lambda a, b: (a[0], a[1] + b[1]))),
    "sum": (lambda ks: ks.sum(1),
            lambda data: rolling_reference(data, lambda a, b: (a[0], a[1] + b[1]))),
    "min_by": (lambda ks: ks.min_by(1),
               lambda data: rolling_reference(data, lambda a, b: b if b[1] < a[1] else a)),
    "max": (lambda ks: ks.max(1),
            lambda data: rolling_reference(data, lambda a, b: (a[0], max(a[1], b[1])))),
    "keyed_state": (lambda ks: ks.process(CountAndHistory()), state_reference),
}


def run(executor, program, data, parallelism, batch_size, mode=RuntimeExecutionMode.STREAMING):
    env = make_env(executor, parallelism=parallelism, micro_batch_size=batch_size)
    env.set_runtime_mode(mode)
    build, _ = PROGRAMS[program]
    stream = build(env.from_collection(data).key_by(lambda r: r[0]))
    return list(stream.execute_and_collect())


@settings(max_examples=60, deadline=None)
@given(data=records, parallelism=parallelisms, batch_size=batch_sizes,
       program=st.sampled_from(sorted(PROGRAMS)))
def test_streaming_matches_reference_in_process(data, parallelism, batch_size, program):
    got = run("local", program, data, parallelism, batch_size)
    assert per_key(got) == per_key(PROGRAMS[program][1](data))


@settings(max_examples=40, deadline=None)
@given(data=records, parallelism=parallelisms, batch_size=batch_sizes,
       program=st.sampled_from(["reduce", "sum", "min_by", "max"]))
def test_batch_mode_emits_final_value_per_key(data, parallelism, batch_size, program):
    got = run("local", program, data, parallelism, batch_size, RuntimeExecutionMode.BATCH)
    expected = {k: seq[-1] for k, seq in per_key(PROGRAMS[program][1](data)).items()}
    assert sorted(got) == sorted(expected.values())


@settings(max_examples=30, deadline=None)
@given(data=records, parallelism=parallelisms, batch_size=st.sampled_from([1, 2, 5]))
def test_state_is_rebuilt_from_the_state_directory_without_cached_workers(
        data, parallelism, batch_size):
    """Every task finds no cached instance, so keyed state comes from the stored changelogs
    and snapshots of the previous batch."""
    cached = task.CACHED_INSTANCES
    task.CACHED_INSTANCES = 0
    try:
        got = run("local", "keyed_state", data, parallelism, batch_size)
    finally:
        task.CACHED_INSTANCES = cached
    assert per_key(got) == per_key(state_reference(data))


@settings(max_examples=40, deadline=None)
@given(data=st.lists(st.integers(-1000, 1000), max_size=60), parallelism=parallelisms,
       batch_size=batch_sizes)
def test_stateless_chain_with_rebalance_matches_reference(data, parallelism, batch_size):
    env = make_env("local", parallelism=parallelism, micro_batch_size=batch_size)
    got = list(env.from_collection(data).map(lambda x: x * 2).rebalance()
               .filter(lambda x: x % 3 != 0).flat_map(lambda x: [x, -x])
               .execute_and_collect())
    expected = [y for x in data if (x * 2) % 3 != 0 for y in (x * 2, -x * 2)]
    assert sorted(got) == sorted(expected)


class ValueIsTime(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value


@settings(max_examples=25, deadline=None)
@given(data=st.lists(st.integers(0, 100), max_size=40), parallelism=parallelisms,
       batch_size=batch_sizes)
def test_a_flat_maps_outputs_keep_their_records_timestamp(data, parallelism, batch_size):
    env = make_env("local", parallelism=parallelism, micro_batch_size=batch_size)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(1)) \
        .with_timestamp_assigner(ValueIsTime())
    got = list(env.from_collection(data).assign_timestamps_and_watermarks(strategy)
               .flat_map(lambda x: [x, x + 1000]).key_by(lambda x: 0)
               .window(TumblingEventTimeWindows.of(Time.milliseconds(10)))
               .reduce(lambda a, b: a + b).execute_and_collect())
    expected = defaultdict(int)
    for x in data:
        expected[x // 10] += 2 * x + 1000
    assert sorted(got) == sorted(expected.values())


@pytest.mark.usefixtures("spark")
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=records, parallelism=st.sampled_from([1, 2, 3]), batch_size=st.sampled_from([2, 5]),
       program=st.sampled_from(["sum", "keyed_state"]))
def test_streaming_matches_reference_on_spark(data, parallelism, batch_size, program):
    got = run("spark", program, data, parallelism, batch_size)
    assert per_key(got) == per_key(PROGRAMS[program][1](data))


@settings(max_examples=25, deadline=None)
@given(data=records, parallelism=parallelisms, batch_size=st.sampled_from([1, 3, 1000]),
       program=st.sampled_from(["sum", "keyed_state"]))
def test_rocksdb_state_backend_gives_the_same_results(data, parallelism, batch_size, program):
    from api.datastream import EmbeddedRocksDBStateBackend
    env = make_env("local", parallelism=parallelism, micro_batch_size=batch_size)
    env.set_state_backend(EmbeddedRocksDBStateBackend())
    build, reference_of = PROGRAMS[program]
    got = list(build(env.from_collection(data).key_by(lambda r: r[0])).execute_and_collect())
    assert per_key(got) == per_key(reference_of(data))


def test_rocksdb_state_backend_on_spark_and_windows(spark):
    from api.datastream import EmbeddedRocksDBStateBackend
    from api.common import Configuration
    from api.datastream import StreamExecutionEnvironment
    config = Configuration()
    config.set_string("state.backend.type", "rocksdb")
    assert isinstance(StreamExecutionEnvironment.get_execution_environment(config)
                      .get_state_backend(), EmbeddedRocksDBStateBackend)
    data = [("a", 1), ("b", 2), ("a", 3), ("c", 4), ("a", 5)]
    env = make_env("spark", parallelism=2, micro_batch_size=2,
                   **{"state.backend.type": "rocksdb"})
    got = list(PROGRAMS["keyed_state"][0](env.from_collection(data).key_by(lambda r: r[0]))
               .execute_and_collect())
    assert per_key(got) == per_key(state_reference(data))
