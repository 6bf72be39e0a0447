"""ExecutionConfig: defaults, round trips, errors, and its parallelism being the
environment's. Expected values observed on PyFlink 2.3.0 (local, 2 CPUs: the default
parallelism there is the number of CPUs, as here)."""
import os

import pytest

from api.common import ExecutionConfig
from api.datastream import StreamExecutionEnvironment
from engine.graph import PlanError
from tests.conftest import make_env


def test_defaults():
    config = StreamExecutionEnvironment.get_execution_environment().get_config()
    assert config.get_parallelism() == os.cpu_count()
    assert config.get_auto_watermark_interval() == 200
    assert config.get_latency_tracking_interval() == 0
    assert config.get_task_cancellation_interval() == 30000
    assert config.get_task_cancellation_timeout() == 180000
    assert config.is_closure_cleaner_enabled()
    assert config.has_auto_generated_uids_enabled()
    assert not config.is_object_reuse_enabled()
    assert not config.is_use_snapshot_compression()
    assert config.get_global_job_parameters() == {}


def test_setters_return_the_config_and_their_values_read_back():
    config = ExecutionConfig()
    for setter in ["set_latency_tracking_interval", "set_task_cancellation_interval",
                   "set_task_cancellation_timeout", "set_auto_watermark_interval"]:
        assert getattr(config, setter)(1234) is config
    assert (config.get_latency_tracking_interval(), config.get_task_cancellation_interval(),
            config.get_task_cancellation_timeout(), config.get_auto_watermark_interval()) \
        == (1234, 1234, 1234, 1234)
    for switch in ["enable_object_reuse", "disable_closure_cleaner",
                   "disable_auto_generated_uids"]:
        assert getattr(config, switch)() is config
    assert (config.is_object_reuse_enabled(), config.is_closure_cleaner_enabled(),
            config.has_auto_generated_uids_enabled()) == (True, False, False)
    assert config.set_use_snapshot_compression(True) is config
    assert config.is_use_snapshot_compression()
    config.set_global_job_parameters({"a": "1", "b": 2})
    assert config.get_global_job_parameters() == {"a": "1", "b": "2"}


def test_jvm_serializer_switches_are_recorded():
    # (PyFlink 2.3.0 fails on these: the Java methods behind them are gone)
    config = ExecutionConfig().enable_force_kryo().enable_force_avro().disable_generic_types()
    assert config.is_force_kryo_enabled() and config.is_force_avro_enabled()
    assert config.has_generic_types_disabled()
    config.register_kryo_type("com.example.A").register_pojo_type("com.example.P")
    config.add_default_kryo_serializer("com.example.B", "com.example.BSerializer")
    assert config.get_registered_kryo_types() == ["com.example.A"]
    assert config.get_registered_pojo_types() == ["com.example.P"]
    assert config.get_default_kryo_serializer_classes() == {
        "com.example.B": "com.example.BSerializer"}


@pytest.mark.parametrize("call, message", [
    (lambda c: c.set_parallelism(0), "Parallelism must be at least one, or "
                                     "ExecutionConfig.PARALLELISM_DEFAULT"),
    (lambda c: c.set_max_parallelism(0), "maximum parallelism must be between 1"),
    (lambda c: c.set_task_cancellation_timeout(-1), "Timeout needs to be >= 0."),
    (lambda c: c.set_auto_watermark_interval(-5), "Auto watermark interval must not be "
                                                  "negative."),
])
def test_invalid_values_fail(call, message):
    with pytest.raises(ValueError, match=message):
        call(ExecutionConfig())


def test_the_parallelism_is_the_environments():
    env = StreamExecutionEnvironment.get_execution_environment()
    config = env.get_config()
    env.set_parallelism(3)
    assert config.get_parallelism() == 3
    config.set_parallelism(5)
    assert env.get_parallelism() == 5
    config.set_max_parallelism(77)
    assert env.get_max_parallelism() == 77
    assert env.from_collection([1]).get_execution_config() is config


def test_without_auto_generated_uids_every_operator_needs_a_uid(capfd):
    env = StreamExecutionEnvironment.get_execution_environment()
    env.get_config().disable_auto_generated_uids()
    env.from_collection([1, 2, 3]).uid("src").map(lambda x: x + 1).name("plus").print()
    with pytest.raises(PlanError, match="Auto generated UIDs have been disabled but no UID "
                                        "or hash has been assigned to operator plus"):
        env.get_execution_plan()


def test_without_auto_generated_uids_a_job_with_uids_runs(capfd):
    env = make_env("local")
    env.get_config().disable_auto_generated_uids()
    env.from_collection([1, 2, 3]).uid("src").map(lambda x: x + 1).uid("m").print().uid("p")
    env.execute()
    assert capfd.readouterr().out.splitlines() == ["2", "3", "4"]
    # the sink of execute_and_collect needs no uid (observed)
    assert env.from_collection([1, 2]).uid("s").execute_and_collect(limit=5) == [1, 2]
