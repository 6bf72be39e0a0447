"""StreamExecutionEnvironment: execute, execute_async / JobClient, execute_and_collect,
settings, the runtime context, and sinks."""
import re

import pytest

from api.common import Configuration, JobStatus, Types
from api.datastream import (MapFunction, RuntimeExecutionMode, SinkFunction,
                            StreamExecutionEnvironment)
from api.datastream.connectors import NumberSequenceSource
from api.common import WatermarkStrategy
from engine.graph import PlanError
from tests.conftest import GatheringSink, make_env


def test_execute_returns_job_execution_result_and_clears_the_job(env_factory, capfd):
    env = env_factory(parallelism=1)
    env.from_collection(["hello", "world"]).print()
    result = env.execute("greeting")
    assert capfd.readouterr().out == "hello\nworld\n"
    assert re.fullmatch(r"[0-9a-f]{32}", str(result.get_job_id()))
    assert isinstance(result.get_net_runtime(), int) and result.get_net_runtime() >= 0
    assert str(result).startswith("Program execution finished\nJob with JobID ")
    with pytest.raises(PlanError, match="No operators defined"):
        env.execute()  # as in Flink, executing clears the transformations


def test_settings_round_trip():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(3).set_max_parallelism(64)
    assert (env.get_parallelism(), env.get_max_parallelism()) == (3, 64)
    assert env.is_chaining_enabled()
    env.disable_operator_chaining()
    assert not env.is_chaining_enabled()
    config = Configuration()
    config.set_string("parallelism.default", "5")
    config.set_string("execution.runtime-mode", "batch")
    configured = StreamExecutionEnvironment.get_execution_environment(config)
    assert configured.get_parallelism() == 5
    assert configured._runtime_mode is RuntimeExecutionMode.BATCH
    with pytest.raises(ValueError):
        env.set_parallelism(0)


def test_execute_and_collect_limit_and_context_manager(env_factory):
    env = env_factory(parallelism=2, micro_batch_size=2)
    ds = env.from_collection(list(range(10))).map(lambda x: x + 1)
    assert ds.execute_and_collect(limit=3) == [1, 2, 3]
    with ds.execute_and_collect() as results:
        assert sorted(results) == list(range(1, 11))


def test_execute_and_collect_stops_the_job_when_closed():
    env = make_env("local", micro_batch_size=1)
    seen = []
    ds = env.from_collection(list(range(100))).map(lambda x: seen.append(x) or x)
    with ds.execute_and_collect() as results:
        assert next(results) == 0
    # the driver ran only the batches the iterator asked for
    assert len(seen) < 100


def test_execute_async_job_client(env_factory):
    env = env_factory(parallelism=2)
    env.from_collection([1, 2, 3]).map(lambda x: x).print()
    client = env.execute_async("async")
    result = client.get_job_execution_result().result(timeout=120)
    assert str(result.get_job_id()) == str(client.get_job_id())
    assert client.get_job_status().result() is JobStatus.FINISHED


def test_execute_async_cancel():
    env = make_env("local", micro_batch_size=1)

    class Slow(MapFunction):
        def map(self, value):
            import time
            time.sleep(0.01)
            return value

    collected = []

    class Keep(SinkFunction):
        def invoke(self, value, context):
            collected.append(value)

    env.from_collection(list(range(10_000))).map(Slow()).add_sink(Keep())
    client = env.execute_async()
    client.cancel().result(timeout=60)
    assert client.get_job_status().result() is JobStatus.CANCELED
    assert len(collected) < 10_000
    assert collected == list(range(len(collected)))  # only whole committed batches


class ContextProbe(MapFunction):
    def open(self, runtime_context):
        self.info = (runtime_context.get_task_name(),
                     runtime_context.get_number_of_parallel_subtasks(),
                     runtime_context.get_max_number_of_parallel_subtasks(),
                     runtime_context.get_index_of_this_subtask(),
                     runtime_context.get_attempt_number(),
                     runtime_context.get_job_parameter("color", "none"),
                     runtime_context.get_job_parameter("missing", "default"),
                     runtime_context.get_task_name_with_subtasks())

    def map(self, value):
        return self.info


def test_runtime_context(env_factory):
    env = env_factory(parallelism=2)
    env.get_config().set_global_job_parameters({"color": "blue"})
    got = set(env.from_collection([1, 2, 3, 4]).map(ContextProbe()).name("probe")
              .execute_and_collect())
    assert got == {("probe", 2, 128, i, 0, "blue", "default", f"probe ({i + 1}/2)#0")
                   for i in (0, 1)}


class JobParameterProbe(MapFunction):
    def open(self, runtime_context):
        self.context = runtime_context

    def map(self, key):
        return key, self.context.get_job_parameter(key, "dflt")


def job_parameters_seen(env, keys=("conf.answer", "k1", "k2", "num")):
    with env.from_collection(list(keys)).map(JobParameterProbe()).execute_and_collect() as it:
        return dict(it)


def test_global_job_parameters_from_the_configuration(env_factory):
    # Observed on PyFlink 2.3.0: 'pipeline.global-job-parameters' = 'conf.answer:42,k1:v1'
    # gives get_job_parameter('conf.answer', 'dflt') == '42', and
    # get_global_job_parameters() == {'k1': 'v1', 'conf.answer': '42'}.
    env = env_factory(**{"pipeline.global-job-parameters": "conf.answer:42,k1:v1"})
    assert env.get_config().get_global_job_parameters() == {"k1": "v1", "conf.answer": "42"}
    assert job_parameters_seen(env) == {"conf.answer": "42", "k1": "v1", "k2": "dflt",
                                        "num": "dflt"}


def test_the_last_of_configure_and_set_global_job_parameters_wins():
    # Observed on PyFlink 2.3.0: each replaces all parameters set before.
    env = make_env("local")
    env.get_config().set_global_job_parameters({"k1": "fromdict", "num": 5})
    config = Configuration()
    config.set_string("pipeline.global-job-parameters", "k2:fromconf")
    env.configure(config)
    assert job_parameters_seen(env) == {"conf.answer": "dflt", "k1": "dflt", "k2": "fromconf",
                                        "num": "dflt"}
    env.get_config().set_global_job_parameters({"k1": "fromdict"})
    assert job_parameters_seen(env) == {"conf.answer": "dflt", "k1": "fromdict", "k2": "dflt",
                                        "num": "dflt"}


@pytest.mark.parametrize("value, parameters", [
    ("k1:v1, k2:v2", {"k1": "v1", "k2": "v2"}), (" k1:v1 ", {"k1": "v1"}),
    ("k1:v 1", {"k1": "v 1"}), ("k1:v1,", {"k1": "v1"}), (",k1:v1", {"k1": "v1"}),
    ("", {})])
def test_global_job_parameters_syntax(value, parameters):
    # Each pair observed on PyFlink 2.3.0 (get_global_job_parameters()).
    config = Configuration()
    config.set_string("pipeline.global-job-parameters", value)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    assert env.get_config().get_global_job_parameters() == parameters


@pytest.mark.parametrize("value", ["a:1:2", "k1:", "k1", "k1:v1,,k2:v2", "k1:v1,k1:v2"])
def test_malformed_global_job_parameters_fail_when_configured(value):
    # PyFlink 2.3.0 rejects each of these in get_execution_environment(configuration).
    config = Configuration()
    config.set_string("pipeline.global-job-parameters", value)
    with pytest.raises(ValueError, match="pipeline.global-job-parameters"):
        StreamExecutionEnvironment.get_execution_environment(config)


def test_configure_changes_only_the_options_it_sets():
    # Observed on PyFlink 2.3.0: configure(parallelism.default=3, max-parallelism=64)
    # gives (3, 64); after set_parallelism(1), configure(max-parallelism=32) gives (1, 32).
    env = StreamExecutionEnvironment.get_execution_environment()
    config = Configuration()
    config.set_string("parallelism.default", "3")
    config.set_string("pipeline.max-parallelism", "64")
    env.configure(config)
    assert (env.get_parallelism(), env.get_max_parallelism()) == (3, 64)
    env.set_parallelism(1)
    config = Configuration()
    config.set_string("pipeline.max-parallelism", "32")
    env.configure(config)
    assert (env.get_parallelism(), env.get_max_parallelism()) == (1, 32)


def test_open_and_close_are_called_once_per_subtask_over_many_batches(tmp_path):
    env = make_env("local", parallelism=2, micro_batch_size=1)
    log = tmp_path / "lifecycle"

    class Lifecycle(MapFunction):
        def open(self, runtime_context):
            with open(log, "a") as f:
                f.write(f"open {runtime_context.get_index_of_this_subtask()}\n")

        def close(self):
            with open(log, "a") as f:
                f.write("close\n")

        def map(self, value):
            return value

    assert sorted(env.from_collection(list(range(6))).map(Lifecycle())
                  .execute_and_collect()) == list(range(6))
    assert sorted(log.read_text().split("\n")[:-1]) == ["close", "close", "open 0", "open 1"]


def test_number_sequence_source(env_factory):
    env = env_factory(parallelism=2, micro_batch_size=3)
    ds = env.from_source(NumberSequenceSource(1, 10), WatermarkStrategy.no_watermarks(), "seq")
    assert ds.get_type() == Types.LONG()
    assert sorted(ds.execute_and_collect()) == list(range(1, 11))


def test_sink_function_receives_each_record_once_in_the_tasks(env_factory):
    sink = GatheringSink()
    env = env_factory(parallelism=2, micro_batch_size=2)
    env.from_collection(list(range(7))).map(lambda x: x * 10).add_sink(sink).name("keep")
    env.execute()
    assert sorted(sink.values()) == [x * 10 for x in range(7)]


def test_union_and_partitioning(env_factory):
    env = env_factory(parallelism=2)
    a = env.from_collection([1, 2])
    b = env.from_collection([10, 20])
    c = env.from_collection([100])
    merged = a.union(b, c)
    assert sorted(merged.map(lambda x: x).execute_and_collect()) == [1, 2, 10, 20, 100]
    env = env_factory(parallelism=2)
    ds = env.from_collection([1, 2, 3])
    assert sorted(ds.broadcast().map(lambda x: x).execute_and_collect()) == [1, 1, 2, 2, 3, 3]
    for partitioned in (ds.shuffle(), ds.rebalance(), ds.rescale()):
        assert sorted(partitioned.map(lambda x: x).execute_and_collect()) == [1, 2, 3]


def test_keyed_map_with_state_counts_per_key(env_factory):
    from api.datastream.state import ValueStateDescriptor

    class Count(MapFunction):
        def open(self, runtime_context):
            self.count = runtime_context.get_state(ValueStateDescriptor("n", Types.LONG()))

        def map(self, value):
            n = (self.count.value() or 0) + 1
            self.count.update(n)
            return value, n

    env = env_factory(parallelism=2, micro_batch_size=2)
    got = list(env.from_collection(["a", "b", "a", "a", "b"]).key_by(lambda x: x)
               .map(Count()).execute_and_collect())
    assert sorted(got) == [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("b", 2)]


def test_a_given_spark_session_is_used(spark):
    env = StreamExecutionEnvironment.get_execution_environment(spark_session=spark)
    env.set_parallelism(2)
    assert sorted(env.from_collection([1, 2, 3]).map(lambda x: -x)
                  .execute_and_collect()) == [-3, -2, -1]


def test_keyed_state_on_a_cluster_needs_a_shared_state_directory(monkeypatch, spark):
    from engine.executor.spark import SparkExecutor
    monkeypatch.setattr(SparkExecutor, "__init__", lambda self, *args: setattr(
        self, "shares_driver_disk", False))
    env = make_env("spark")
    env.from_collection([("a", 1)]).key_by(lambda r: r[0]).sum(1).print()
    with pytest.raises(PlanError, match="state.checkpoints.dir"):
        env.execute()


def test_process_function_yields_outputs_and_reads_processing_time(env_factory):
    from api.datastream import ProcessFunction

    class Explode(ProcessFunction):
        def process_element(self, value, ctx):
            assert ctx.timer_service().current_processing_time() > 0
            for i in range(value):
                yield value, i

    env = env_factory(parallelism=2)
    got = sorted(env.from_collection([0, 1, 2]).process(Explode()).execute_and_collect())
    assert got == [(1, 0), (2, 0), (2, 1)]


def test_keyed_flat_map_and_filter_use_keyed_state(env_factory):
    from api.datastream import FilterFunction, FlatMapFunction
    from api.datastream.state import ValueStateDescriptor

    class FirstOnly(FilterFunction):
        def open(self, runtime_context):
            self.seen = runtime_context.get_state(ValueStateDescriptor("seen", Types.BOOLEAN()))

        def filter(self, value):
            first = not self.seen.value()
            self.seen.update(True)
            return first

    class Repeat(FlatMapFunction):
        def open(self, runtime_context):
            self.n = runtime_context.get_state(ValueStateDescriptor("n", Types.INT()))

        def flat_map(self, value):
            self.n.update((self.n.value() or 0) + 1)
            return [value] * self.n.value()

    env = env_factory(parallelism=2, micro_batch_size=1)
    ds = env.from_collection(["a", "b", "a", "c", "b", "a"])
    assert sorted(ds.key_by(lambda x: x).filter(FirstOnly()).execute_and_collect()) == [
        "a", "b", "c"]
    assert sorted(ds.key_by(lambda x: x).flat_map(Repeat()).execute_and_collect()) == sorted(
        ["a", "b", "a", "a", "c", "b", "b", "a", "a", "a"])


def test_unbounded_generator_runs_until_cancelled():
    from api.datastream.connectors import DataGeneratorSource
    sink = GatheringSink()
    env = make_env("local", parallelism=2, **{"execution.micro-batch.interval": 20})
    env.from_source(DataGeneratorSource(lambda i: i * 10, records_per_second=2000),
                    WatermarkStrategy.no_watermarks(), "numbers").add_sink(sink)
    client = env.execute_async()
    import time
    deadline = time.time() + 60
    while len(sink.values()) < 50 and time.time() < deadline:
        time.sleep(0.05)
    client.cancel().result(timeout=60)
    collected = sink.values()
    assert client.get_job_status().result() is JobStatus.CANCELED
    assert len(collected) >= 50
    # every index once, in order per split (even indexes on split 0, odd on split 1)
    assert sorted(collected) == [i * 10 for i in range(len(collected))] or \
        len(set(collected)) == len(collected)


def test_bounded_generator_and_the_unbounded_batch_mode_error(env_factory):
    from api.datastream.connectors import DataGeneratorSource
    env = env_factory(parallelism=2, micro_batch_size=3)
    ds = env.from_source(DataGeneratorSource(lambda i: -i, count=7),
                         WatermarkStrategy.no_watermarks(), "gen")
    assert sorted(ds.execute_and_collect()) == sorted(-i for i in range(7))
    env = make_env("local")
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.from_source(DataGeneratorSource(lambda i: i), WatermarkStrategy.no_watermarks(),
                    "forever").print()
    with pytest.raises(PlanError, match="UNBOUNDED source"):
        env.execute()
