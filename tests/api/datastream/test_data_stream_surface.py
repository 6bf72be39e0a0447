"""DataStream methods beyond the transformations: cache, the execution config, the
refusals of a KeyedStream, and metrics in user functions. Expected values observed on
PyFlink 2.3.0."""
import pytest

from api.datastream import KeyedStream, MapFunction, StreamExecutionEnvironment
from api.datastream.data_stream import CachedDataStream
from tests.conftest import make_env


def test_a_cached_stream_gives_the_same_results_to_every_job(capfd):
    env = make_env("local")
    cached = env.from_collection([1, 2, 3]).map(lambda x: x * 10).cache()
    assert isinstance(cached, CachedDataStream)
    cached.print()
    env.execute("first")
    cached.map(lambda x: ("again", x)).print()
    env.execute("second")
    cached.invalidate()
    assert capfd.readouterr().out.splitlines() == [
        "10", "20", "30", "('again', 10)", "('again', 20)", "('again', 30)"]


@pytest.mark.parametrize("call, message", [
    (lambda c: c.set_parallelism(2), "Set parallelism for CachedDataStream is not supported."),
    (lambda c: c.uid("x"), "Set uid for CachedDataStream is not supported."),
    (lambda c: c.name("x"), "Set name for CachedDataStream is not supported."),
    (lambda c: c.get_name(), "Get name of CachedDataStream is not supported."),
])
def test_a_cached_streams_operator_cannot_change(call, message):
    cached = StreamExecutionEnvironment.get_execution_environment().from_collection([1]).cache()
    with pytest.raises(ValueError, match=message):
        call(cached)


def test_a_keyed_stream_keeps_its_partitioning_and_cannot_be_cached():
    keyed = StreamExecutionEnvironment.get_execution_environment().from_collection([1]) \
        .key_by(lambda x: x)
    for call in [keyed.shuffle, keyed.rebalance, keyed.rescale, keyed.forward,
                 lambda: keyed.partition_custom(lambda k, n: 0, lambda x: x)]:
        with pytest.raises(ValueError, match="Cannot override partitioning for KeyedStream."):
            call()
    with pytest.raises(ValueError, match="Cache for KeyedStream is not supported."):
        keyed.cache()
    assert [t.name for t in KeyedStream.AccumulateType] == ["MIN", "MAX", "MIN_BY", "MAX_BY",
                                                            "SUM"]


def test_metrics_count_within_a_parallel_instance(executor):
    class Counting(MapFunction):
        def open(self, runtime_context):
            group = runtime_context.get_metrics_group()
            self.counter = group.add_group("my", "g").counter("seen")
            self.meter = group.meter("m")
            group.gauge("g", lambda: 1)
            self.distribution = group.distribution("d")

        def map(self, value):
            self.counter.inc()
            self.meter.mark_event()
            self.distribution.update(value)
            return value, self.counter.get_count()

    env = make_env(executor)
    assert env.from_collection([5, 6, 7]).map(Counting()).execute_and_collect(limit=5) == \
        [(5, 1), (6, 2), (7, 3)]
