"""Bad input and failing user code: a clear error naming the operator, the record and the
cause, raised before anything runs where it can be known at build time, and no loss of
what earlier batches committed."""
import threading

import pytest

from api.common import TimestampAssigner, Types, WatermarkStrategy
from api.datastream import MapFunction, ReduceFunction
from api.datastream.state import ListStateDescriptor, ValueStateDescriptor
from engine.errors import JobExecutionException
from tests.conftest import GatheringSink, make_env


def fail_on(bad):
    def f(x):
        if x == bad:
            raise ValueError(f"cannot handle {x}")
        return x
    return f


def test_failing_map_names_operator_record_cause_and_traceback(env_factory):
    env = env_factory(parallelism=2)
    env.from_collection([1, 2, 3]).map(fail_on(2)).name("parse").print()
    with pytest.raises(JobExecutionException) as info:
        env.execute()
    message = str(info.value)
    assert "Operator 'parse'" in message
    assert "record 2" in message
    assert "ValueError: cannot handle 2" in message
    assert "Traceback" in message and "in f" in message


class ValueAsTime(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1] if isinstance(value, tuple) else value  # (key, time, amount)


def event_time(stream):
    return stream.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(ValueAsTime()))


def test_a_failing_map_or_reduce_of_an_event_time_job_names_its_record(env_factory):
    env = env_factory(parallelism=2)
    event_time(env.from_collection([1, 2, 3])).map(fail_on(2)).name("parse").print()
    with pytest.raises(JobExecutionException, match=r"(?s)Operator 'parse'.*record 2"):
        env.execute()
    env = env_factory(parallelism=2)
    (event_time(env.from_collection([("a", 1, 5), ("a", 2, "x")])).key_by(lambda r: r[0])
     .reduce(lambda a, b: (a[0], b[1], a[2] + b[2])).print())
    with pytest.raises(JobExecutionException, match=r"(?s)Operator 'Reduce'.*\('a', 2, 'x'\)"):
        env.execute()


def test_a_failing_flat_map_names_its_record_with_or_without_event_time_or_keys(
        env_factory):
    for build in (lambda s: s, event_time, lambda s: event_time(s).key_by(lambda x: x % 2)):
        env = env_factory(parallelism=2)
        build(env.from_collection([1, 2, 3])).flat_map(lambda x: [fail_on(2)(x)]) \
            .name("split").print()
        with pytest.raises(JobExecutionException,
                           match=r"(?s)Operator 'split' failed on record 2.*cannot handle 2"):
            env.execute()


class FailsOn20(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        if value == 20:
            raise ValueError("no time for 20")
        return value


def test_a_map_and_the_assigner_after_it_each_name_their_own_record(env_factory):
    # At parallelism 1 the source, the map and the timestamp assigner form one chain
    # that runs in one loop over the records; a failure still names the one of them
    # that failed, with its record.
    env = env_factory(parallelism=1)
    event_time(env.from_collection([1, 2, 3]).map(fail_on(2)).name("parse")).print()
    with pytest.raises(JobExecutionException, match=r"(?s)Operator 'parse'.*record 2"):
        env.execute()
    env = env_factory(parallelism=1)
    (env.from_collection([1, 2, 3]).map(lambda x: x * 10).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(FailsOn20()))
     .print())
    with pytest.raises(JobExecutionException,
                       match=r"(?s)Operator 'Timestamps/Watermarks'.*record 20.*no time for 20"):
        env.execute()


def test_error_message_truncates_a_huge_record():
    env = make_env("local")
    env.from_collection(["x" * 100_000]).map(fail_on("x" * 100_000)).print()
    with pytest.raises(JobExecutionException) as info:
        env.execute()
    assert "...(truncated)" in str(info.value)
    assert len(str(info.value)) < 5_000


def test_batches_committed_before_a_failure_keep_their_output(env_factory):
    """With one record per micro-batch, the records before the bad one are published
    exactly once; the failing batch publishes nothing."""
    env = env_factory(parallelism=1, micro_batch_size=1)
    sink = GatheringSink()
    (env.from_collection([("a", 1), ("a", 2), ("a", 3), ("a", 4)])
     .key_by(lambda r: r[0]).sum(1).map(fail_on(("a", 6))).add_sink(sink))
    with pytest.raises(JobExecutionException, match="cannot handle"):
        env.execute()
    assert sorted(sink.values()) == [("a", 1), ("a", 3)]


def test_failing_reduce_function(env_factory):
    env = env_factory(parallelism=2)
    (env.from_collection([("a", 1), ("a", "x")]).key_by(lambda r: r[0])
     .reduce(lambda a, b: (a[0], a[1] + b[1])).print())
    with pytest.raises(JobExecutionException) as info:
        env.execute()
    assert "Operator 'Reduce'" in str(info.value)
    assert "('a', 'x')" in str(info.value)
    assert "TypeError" in str(info.value)


def test_failing_key_selector():
    env = make_env("local", parallelism=2)
    env.from_collection([(1,), ()]).key_by(lambda r: r[0]).sum(0).print()
    with pytest.raises(JobExecutionException, match=r"key selector.*record \(\).*IndexError"):
        env.execute()


def test_int_overflow_in_declared_output_type(capfd):
    env = make_env("local")
    env.from_collection([1, 2 ** 40]).map(lambda x: x, output_type=Types.INT()).print()
    with pytest.raises(JobExecutionException) as info:
        env.execute()
    assert "Operator 'Map'" in str(info.value)
    assert str(2 ** 40) in str(info.value)
    assert "OverflowError" in str(info.value)


def test_a_value_not_of_its_declared_type_names_operator_field_and_value():
    env = make_env("local")
    row = Types.ROW_NAMED(["name", "pair"], [Types.STRING(),
                                             Types.TUPLE([Types.STRING(), Types.INT()])])
    env.from_collection(["a"]).map(lambda x: (x, ("z", "seven")), output_type=row).print()
    with pytest.raises(JobExecutionException) as info:
        env.execute()
    assert ("Operator 'Map' failed on record ('a', ('z', 'seven')): TypeError: field 'pair': "
            "field 'f1': Integer expects int, got str: 'seven'") in str(info.value)


def test_a_tuple_that_does_not_fit_among_fitting_ones_names_its_record_and_field():
    # (the chunk's one-pass conversion fails, then converting each value names the misfit)
    env = make_env("local")
    pair = Types.TUPLE([Types.STRING(), Types.INT()])
    env.from_collection(list(range(100))).map(
        lambda x: ("a", "seven" if x == 57 else x), output_type=pair) \
        .key_by(lambda p: p[0]).map(str).print()
    with pytest.raises(JobExecutionException) as info:
        env.execute()
    assert ("Operator 'Map' failed on record ('a', 'seven'): TypeError: field 'f1': Integer "
            "expects int, got str: 'seven'") in str(info.value)


def test_unserializable_function_fails_before_anything_runs(capfd):
    lock = threading.Lock()
    env = make_env("spark")  # Spark is never reached: the error comes first
    env.from_collection([1, 2]).print()
    env.from_collection([1, 2]).map(lambda x: (x, lock)).name("with_lock").print()
    with pytest.raises(TypeError, match="operator 'with_lock' cannot be serialized.*lock"):
        env.execute()
    assert capfd.readouterr().out == ""


def test_keyed_only_operations_fail_at_build_time():
    ds = make_env("local").from_collection([(1, 2)])
    for call in (lambda: ds.reduce(lambda a, b: a), lambda: ds.sum(1), lambda: ds.min(0),
                 lambda: ds.max(0), lambda: ds.min_by(0), lambda: ds.max_by(0)):
        with pytest.raises(TypeError, match="KeyedStream: call key_by"):
            call()


def test_wrong_function_kind_fails_at_build_time():
    class Adder(ReduceFunction):
        def reduce(self, a, b):
            return a + b

    ds = make_env("local").from_collection([1])
    with pytest.raises(TypeError, match="map\\(\\) expects a MapFunction"):
        ds.map(Adder())
    with pytest.raises(TypeError, match="filter\\(\\) expects a FilterFunction"):
        ds.filter(42)
    with pytest.raises(TypeError, match="reduce\\(\\) expects a ReduceFunction"):
        ds.key_by(lambda x: x).reduce(object())
    with pytest.raises(TypeError, match="KeyedProcessFunction"):
        ds.key_by(lambda x: x).process(lambda x, ctx: [x])


class WrongKindOfState(MapFunction):
    def open(self, runtime_context):
        self.state = runtime_context.get_state(ListStateDescriptor("xs", Types.INT()))

    def map(self, value):
        return value


class KeyedStateOnPlainStream(MapFunction):
    def open(self, runtime_context):
        self.state = runtime_context.get_state(ValueStateDescriptor("x", Types.INT()))

    def map(self, value):
        return value


@pytest.mark.parametrize("build, expected", [
    (lambda ds: ds.key_by(lambda x: x).map(WrongKindOfState()),
     r"get_state\(\) needs a ValueStateDescriptor, got ListStateDescriptor 'xs'"),
    (lambda ds: ds.map(KeyedStateOnPlainStream()),
     r"Keyed state can only be used on a 'keyed stream'"),
])
def test_state_misuse_fails_in_open_before_any_record(build, expected, capfd):
    env = make_env("local", parallelism=2)
    build(env.from_collection([1, 2, 3])).print()
    with pytest.raises(JobExecutionException, match=expected) as info:
        env.execute()
    assert "open()" in str(info.value)
    assert capfd.readouterr().out == ""


def test_missing_java_fails_at_once_with_a_clear_message(monkeypatch):
    from pyspark.sql import SparkSession

    from engine.executor import spark
    monkeypatch.setattr(SparkSession, "getActiveSession", staticmethod(lambda: None))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(RuntimeError, match="Java 17 or newer"):
        spark.get_spark_session("local[1]", {})


def test_a_record_that_cannot_cross_a_shuffle_is_named(env_factory):
    env = env_factory(parallelism=2)
    env.from_collection([1, 2]).map(lambda x: (x, threading.Lock()) if x == 2 else (x, None)) \
        .name("locker").rebalance().map(lambda x: x).print()
    with pytest.raises(JobExecutionException,
                       match=r"Operator 'locker' failed on record \(2, <unlocked _thread.lock"
                             r".*cannot be pickled to reach the next stage"):
        env.execute()


def test_a_record_that_cannot_reach_a_keyed_operator_is_named_with_its_key(env_factory):
    env = env_factory(parallelism=2)
    env.from_collection(["a", "b"]).map(lambda x: (x, threading.Lock() if x == "b" else None)) \
        .name("locker").key_by(lambda r: r[0]).reduce(lambda a, b: a).print()
    with pytest.raises(JobExecutionException,
                       match=r"Operator 'locker' failed on record \('b', \('b', <unlocked "
                             r"_thread.lock.*cannot be pickled to reach the next stage"):
        env.execute()


def test_records_that_refer_to_themselves_cross_a_shuffle():
    def self_referring(x):
        record = {"x": x}
        record["self"] = record
        return record

    env = make_env("local", parallelism=2)
    got = env.from_collection([1, 2, 3]).map(self_referring).rebalance() \
        .map(lambda r: (r["x"], r["self"] is r)).execute_and_collect()
    assert sorted(got) == [(1, True), (2, True), (3, True)]


def test_keyed_process_function_on_a_plain_stream_fails_at_build_time():
    from api.datastream import KeyedProcessFunction

    class PerKey(KeyedProcessFunction):
        def process_element(self, value, ctx):
            yield value

    with pytest.raises(TypeError, match="needs a KeyedStream: call key_by"):
        make_env("local").from_collection([1]).process(PerKey())


class UnprintableRecord:
    def __repr__(self):
        raise RuntimeError("no repr")


def nested(levels):
    value = []
    for _ in range(levels):
        value = [value]
    return value


@pytest.mark.parametrize("make, shown", [
    (lambda: nested(100_000), "record [[[[[[[...]]]]]]]"),
    (UnprintableRecord, "record <UnprintableRecord instance at"),
])
def test_the_error_names_operator_and_record_whatever_the_record(make, shown):
    # Neither a record too deep for repr nor one whose repr fails breaks the error report.
    env = make_env("local")

    def fail(record):
        raise ValueError("bad record")
    env.from_collection([1]).map(lambda _: make()).map(fail).name("check").print()
    with pytest.raises(JobExecutionException) as info:
        env.execute()
    message = str(info.value)
    assert "Operator 'check' failed on " + shown in message
    assert "ValueError: bad record" in message
