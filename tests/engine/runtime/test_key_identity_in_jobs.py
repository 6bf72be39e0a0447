"""Keyed jobs treat keys as their canonical bytes (``core.codec.serialize_key``) whatever
the state backend, parallelism, runtime mode or micro-batch size: 1, 1.0 and True are
three keys, every NaN is one, -0.0 is not 0.0, (1, 2) is not (1.0, 2), None is a key,
and every key the user sees is the object the record carried. Each job is compared with
a brute-force reference that groups records by those bytes."""
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from api.common import Duration, Time, TimestampAssigner, Types, WatermarkStrategy
from api.datastream import (KeyedProcessFunction, ProcessWindowFunction,
                            RuntimeExecutionMode)
from api.datastream.state import ValueStateDescriptor
from api.datastream.window import TumblingEventTimeWindows
from benchmarks.nexmark.queries import CountAggregate
from core.codec import serialize_key
from engine.runtime import task
from tests.conftest import make_env

WINDOW_MS = 10
END_TIMER = 1_000  # after every record: fires at the end of input
SCALARS = st.one_of(
    st.sampled_from([0, 1, 1.0, True, False, 0.0, -0.0, None, "1", "a", b"1"]),
    st.builds(float, st.just("nan")),  # a new NaN object each time
)
KEYS = st.one_of(SCALARS, st.tuples(SCALARS, SCALARS))
RECORDS = st.lists(st.tuples(KEYS, st.integers(0, 39)), max_size=25)


class SecondField(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class CountPerKey(KeyedProcessFunction):
    """Emits each key's running count; a timer per key (registered once per key) emits its
    final count at the end of input."""

    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value, ctx):
        count = (self.count.value() or 0) + 1
        self.count.update(count)
        ctx.timer_service().register_event_time_timer(END_TIMER)
        yield "count", ctx.get_current_key(), count

    def on_timer(self, timestamp, ctx):
        yield "end", ctx.get_current_key(), self.count.value()


class WithKey(ProcessWindowFunction):
    def __init__(self, tag):
        self.tag = tag

    def process(self, key, context, elements):
        elements = list(elements)
        count = elements[0] if self.tag == "aggregated" else len(elements)
        yield self.tag, key, context.window().start, count


def run(data, backend, parallelism, mode, batch_size):
    """The job's outputs: a process function with state and timers, a rolling reduce, and
    tumbling windows through the batched (aggregate) and the general (process) operator."""
    env = make_env("local", parallelism=parallelism, micro_batch_size=batch_size,
                   **{"state.backend.type": backend})
    env.set_runtime_mode(mode)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(100)) \
        .with_timestamp_assigner(SecondField())
    records = env.from_collection(data).assign_timestamps_and_watermarks(strategy)
    key_of = lambda record: record[0]  # noqa: E731
    counted = records.key_by(key_of).process(CountPerKey())
    reduced = records.map(lambda record: (record[0], 1)).key_by(key_of) \
        .reduce(lambda a, b: (a[0], a[1] + b[1])).map(lambda pair: ("reduce", *pair))
    windows = records.key_by(key_of).window(TumblingEventTimeWindows.of(
        Time.milliseconds(WINDOW_MS)))
    aggregated = windows.aggregate(CountAggregate(), window_function=WithKey("aggregated"))
    processed = records.key_by(key_of).window(TumblingEventTimeWindows.of(
        Time.milliseconds(WINDOW_MS))).process(WithKey("processed"))
    return list(counted.union(reduced, aggregated, processed).execute_and_collect())


def reference(data, batch_mode):
    """The outputs ``run`` gives, grouping records by their keys' bytes."""
    out = []
    counts, first_key, windows = Counter(), {}, Counter()
    for key, timestamp in data:
        identity = serialize_key(key)
        first_key.setdefault(identity, key)
        counts[identity] += 1
        out.append(("count", key, counts[identity]))
        if not batch_mode:
            out.append(("reduce", first_key[identity], counts[identity]))
        windows[identity, timestamp - timestamp % WINDOW_MS] += 1
    for identity, count in counts.items():
        out.append(("end", first_key[identity], count))
        if batch_mode:
            out.append(("reduce", first_key[identity], count))
    for (identity, start), count in windows.items():
        out.append(("aggregated", first_key[identity], start, count))
        out.append(("processed", first_key[identity], start, count))
    return out


def by_key_bytes(outputs):
    """Outputs with each key as its bytes (type-exact, NaN equal to NaN), sorted."""
    return sorted((tag, serialize_key(key), *rest) for tag, key, *rest in outputs)


@settings(max_examples=25, deadline=None)
@given(data=RECORDS, parallelisms=st.tuples(st.sampled_from([1, 2]), st.sampled_from([1, 2])),
       batch_mode=st.booleans(), batch_size=st.sampled_from([1, 3, 1000]),
       restore_each_batch=st.booleans())
def test_keys_are_their_bytes_on_every_backend(data, parallelisms, batch_mode, batch_size,
                                               restore_each_batch):
    mode = RuntimeExecutionMode.BATCH if batch_mode else RuntimeExecutionMode.STREAMING
    expected = by_key_bytes(reference(data, batch_mode))
    cached = task.CACHED_INSTANCES
    if restore_each_batch:  # state comes from the stored files of the previous batch
        task.CACHED_INSTANCES = 0
    try:
        results = {backend: by_key_bytes(run(data, backend, parallelism, mode, batch_size))
                   for backend, parallelism in zip(("hashmap", "rocksdb"), parallelisms)}
    finally:
        task.CACHED_INSTANCES = cached
    assert results["hashmap"] == expected
    assert results["rocksdb"] == expected


def test_an_unhashable_key_is_a_key_by_its_bytes():
    """As in PyFlink, whose keys are pickled bytes: a list key groups records too."""
    env = make_env("local", parallelism=2)
    reduced = env.from_collection([("a", 1), ("b", 2), ("a", 3)]).key_by(lambda r: [r[0]]) \
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
    assert sorted(reduced.execute_and_collect()) == [("a", 1), ("a", 4), ("b", 2)]
