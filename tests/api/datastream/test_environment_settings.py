"""The environment's settings and sources beyond the basics: configure, the default
local parallelism, read_text_file, legacy and JVM-only calls. Expected values observed on
PyFlink 2.3.0 unless a test says otherwise."""
import os

import pytest

from api.common import Configuration, Types
from api.common.io import InputFormat
from api.datastream import (CustomStateBackend, RuntimeExecutionMode, SinkFunction,
                            SourceFunction, StreamExecutionEnvironment)
from api.datastream.checkpoint_storage import CustomCheckpointStorage
from api.datastream.time_characteristic import TimeCharacteristic
from tests.conftest import make_env


def test_configure_applies_the_options_it_is_given():
    config = Configuration()
    for key, value in [("parallelism.default", "7"), ("pipeline.max-parallelism", "99"),
                       ("execution.runtime-mode", "BATCH"),
                       ("pipeline.auto-watermark-interval", "1234 ms"),
                       ("execution.checkpointing.interval", "5 s"),
                       ("pipeline.global-job-parameters", "a:1,b:2"),
                       ("pipeline.object-reuse", "true"),
                       ("pipeline.operator-chaining.enabled", "false"),
                       ("pipeline.auto-generate-uids", "false")]:
        config.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment()
    env.configure(config)
    execution = env.get_config()
    assert (env.get_parallelism(), env.get_max_parallelism(),
            execution.get_auto_watermark_interval(), env.get_checkpoint_interval(),
            execution.get_global_job_parameters(), execution.is_object_reuse_enabled(),
            env.is_chaining_enabled(), execution.has_auto_generated_uids_enabled()) == \
        (7, 99, 1234, 5000, {"a": "1", "b": "2"}, True, False, False)
    assert env._runtime_mode is RuntimeExecutionMode.BATCH


def test_configure_leaves_other_settings_alone():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(3)
    env.configure(Configuration().set_string("pipeline.max-parallelism", "16"))
    assert (env.get_parallelism(), env.get_max_parallelism()) == (3, 16)


@pytest.mark.parametrize("key", ["state.restore.allow-pickled", "pipeline.object-reuse",
                                 "execution.progress.enabled", "state.backend.incremental",
                                 "execution.savepoint.ignore-unclaimed-state"])
@pytest.mark.parametrize("value", ["no", "0", "off", "false;", "yes", ""])
def test_a_boolean_option_takes_only_true_or_false(key, value):
    # Read loosely, "no" or "false;" would mean true for state.restore.allow-pickled:
    # an unknown value fails (when the environment reads it, at the latest when the job
    # starts) naming the key, and nothing runs.
    config = Configuration().set_string(key, value).set_string("execution.executor", "local")
    ran = []
    with pytest.raises(ValueError, match=f"'{key}' takes true or false, not {value!r}"):
        env = StreamExecutionEnvironment.get_execution_environment(config)
        env.from_collection([1]).map(ran.append).print()
        env.execute()
    assert ran == []


@pytest.mark.parametrize("value, allowed", [("false", False), (" FALSE ", False),
                                            ("True", True)])
def test_true_and_false_are_read_in_any_case(value, allowed):
    from api.datastream.job_settings import job_settings
    config = Configuration().set_string("state.restore.allow-pickled", value)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.from_collection([1]).print()
    settings = job_settings(env, env._transformations)
    assert settings.task_settings.state_backend_options["allow_pickled"] is allowed


def test_the_default_local_parallelism_is_that_of_new_environments(monkeypatch):
    monkeypatch.setattr(StreamExecutionEnvironment, "_default_local_parallelism", None)
    env = StreamExecutionEnvironment.get_execution_environment()
    StreamExecutionEnvironment.set_default_local_parallelism(3)
    assert env.get_default_local_parallelism() == 3
    assert env.get_parallelism() == os.cpu_count()  # environments made before keep theirs
    assert StreamExecutionEnvironment.get_execution_environment().get_parallelism() == 3


def test_other_settings_read_back():
    env = StreamExecutionEnvironment.get_execution_environment()
    assert env.is_changelog_state_backend_enabled() is None
    assert env.enable_changelog_state_backend(True) is env
    assert env.is_changelog_state_backend_enabled() is True
    assert env.is_chaining_of_operators_with_different_max_parallelism_enabled()
    assert (env.is_unaligned_checkpoints_enabled(), env.is_force_unaligned_checkpoints()) == \
        (False, False)
    # dropped by PyFlink 2.x, named by the reference documents
    assert env.get_stream_time_characteristic() is TimeCharacteristic.EventTime
    env.set_stream_time_characteristic(TimeCharacteristic.ProcessingTime)
    assert env.get_stream_time_characteristic() is TimeCharacteristic.ProcessingTime


def test_jvm_only_calls_are_recorded_and_change_nothing():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.add_jars("file:///tmp/a.jar")
    env.add_classpaths("file:///tmp/b")
    env.register_type("com.example.A")
    env.add_default_kryo_serializer("com.example.B", "com.example.BSerializer")
    assert env.get_config().get_registered_kryo_types() == ["com.example.A"]
    assert env.get_config().get_default_kryo_serializer_classes() == {
        "com.example.B": "com.example.BSerializer"}
    env.close()


@pytest.mark.parametrize("make", [
    lambda: SourceFunction("com.example.JavaSource"), lambda: InputFormat(object()),
    lambda: CustomStateBackend(object()), lambda: CustomCheckpointStorage(object()),
])
def test_wrappers_of_java_objects_fail_and_say_what_to_use(make):
    with pytest.raises(TypeError, match="needs a JVM"):
        make()


def test_add_source_and_create_input_need_sources_that_run_in_python():
    env = StreamExecutionEnvironment.get_execution_environment()
    with pytest.raises(TypeError, match=r"add_source\(\) cannot run object"):
        env.add_source(object())
    with pytest.raises(TypeError, match=r"create_input\(\) cannot run InputFormat"):
        env.create_input(InputFormat())


# read_text_file: gone from PyFlink 2.3.0; the expectations follow Flink 1.x's TextInputFormat
# (lines split at \n, a \r before it dropped, no empty line after a final newline).

@pytest.mark.parametrize("parallelism", [1, 3])
def test_read_text_file(executor, tmp_path, parallelism):
    path = tmp_path / "lines.txt"
    path.write_bytes("a\r\nbb\n\nccc\nnaïve\nlast".encode("utf-8"))
    env = make_env(executor, parallelism=parallelism)
    stream = env.read_text_file(f"file://{path}")
    assert stream.get_type() == Types.STRING()
    with stream.execute_and_collect() as lines:
        assert sorted(lines) == sorted(["a", "bb", "", "ccc", "naïve", "last"])


def test_read_text_file_with_a_final_newline_and_another_charset(tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes("é\nü\n".encode("latin-1"))
    env = make_env("local")
    assert env.read_text_file(str(path), "ISO-8859-1").execute_and_collect(limit=10) == \
        ["é", "ü"]
    with pytest.raises(LookupError):
        env.read_text_file(str(path), "no-such-charset")


def test_a_job_client_reports_no_accumulators():
    env = make_env("local")
    env.from_collection([1]).map(lambda x: x).add_sink(_Discard())
    client = env.execute_async("accumulators")
    assert client.get_job_execution_result().result().get_all_accumulator_results() == {}
    assert client.get_accumulators().result() == {}


class _Discard(SinkFunction):
    def invoke(self, value, context):
        pass
