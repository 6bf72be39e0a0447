"""CheckpointConfig, checkpoint storage and the deprecated state backends. Expected defaults,
messages and enum values were read off PyFlink 2.3.0 (the oracle venv); the 1.x-only names
(ExternalizedCheckpointCleanup, set_checkpoint_storage, the deprecated backends) follow the
PyFlink 1.x reference."""
import pytest

from api.common import Configuration, Duration
from api.datastream import (CheckpointingMode, EmbeddedRocksDBStateBackend,
                            ExternalizedCheckpointCleanup, ExternalizedCheckpointRetention,
                            FileSystemCheckpointStorage, FsStateBackend, HashMapStateBackend,
                            JobManagerCheckpointStorage, MemoryStateBackend,
                            RocksDBStateBackend, StreamExecutionEnvironment)
from api.datastream.checkpoint_config import (checkpoint_directory, num_retained,
                                              savepoint_directory)


def new_env(**conf) -> StreamExecutionEnvironment:
    return StreamExecutionEnvironment.get_execution_environment(Configuration.from_dict(conf))


def settings(env: StreamExecutionEnvironment) -> dict:
    c = env.get_checkpoint_config()
    return {
        "enabled": c.is_checkpointing_enabled(), "interval": c.get_checkpoint_interval(),
        "mode": c.get_checkpointing_mode(), "timeout": c.get_checkpoint_timeout(),
        "min_pause": c.get_min_pause_between_checkpoints(),
        "max_concurrent": c.get_max_concurrent_checkpoints(),
        "tolerable": c.get_tolerable_checkpoint_failure_number(),
        "retention": c.get_externalized_checkpoint_retention(),
        "unaligned": c.is_unaligned_checkpoints_enabled(),
        "forced": c.is_force_unaligned_checkpoints(),
        "aligned_timeout": c.get_aligned_checkpoint_timeout(),
        "savepoints": env.get_default_savepoint_directory(),
        "checkpoints": checkpoint_directory(env._conf),
    }


def test_defaults_are_pyflinks():
    env = new_env()
    c = env.get_checkpoint_config()
    assert settings(env) == {
        "enabled": False, "interval": -1, "mode": CheckpointingMode.AT_LEAST_ONCE,
        "timeout": 600000, "min_pause": 0, "max_concurrent": 1, "tolerable": 0,
        "retention": ExternalizedCheckpointRetention.NO_EXTERNALIZED_CHECKPOINTS,
        "unaligned": False, "forced": False, "aligned_timeout": Duration.of_millis(0),
        "savepoints": None, "checkpoints": None}
    assert env.get_checkpoint_interval() == -1
    assert c.is_fail_on_checkpointing_errors()
    assert not c.is_externalized_checkpoints_enabled()
    assert c.get_externalized_checkpoint_cleanup() is None
    assert c.get_checkpoint_storage() is None
    assert env.get_checkpoint_config() is c
    assert [m.value for m in CheckpointingMode] == [0, 1]
    assert CheckpointingMode.EXACTLY_ONCE.name == "EXACTLY_ONCE"


def test_enable_checkpointing_sets_interval_and_mode():
    env = new_env()
    env.enable_checkpointing(1000)
    assert (env.get_checkpoint_interval(), env.get_checkpointing_mode()) == \
        (1000, CheckpointingMode.EXACTLY_ONCE)
    env.enable_checkpointing(2000, CheckpointingMode.AT_LEAST_ONCE)
    env.enable_checkpointing(3000)   # no mode: the configured one stays
    assert (env.get_checkpoint_interval(), env.get_checkpointing_mode()) == \
        (3000, CheckpointingMode.AT_LEAST_ONCE)
    assert env._conf["execution.checkpointing.interval"] == "3000"
    assert env._conf["execution.checkpointing.mode"] == "AT_LEAST_ONCE"


def test_mode_is_at_least_once_until_checkpointing_is_enabled():
    env = new_env()
    env.get_checkpoint_config().set_checkpointing_mode(CheckpointingMode.EXACTLY_ONCE)
    assert env.get_checkpointing_mode() is CheckpointingMode.AT_LEAST_ONCE
    env.get_checkpoint_config().set_checkpoint_interval(10)
    assert env.get_checkpointing_consistency_mode() is CheckpointingMode.EXACTLY_ONCE


@pytest.mark.parametrize("call, error, message", [
    (lambda c: c.set_checkpoint_interval(5), ValueError,
     "Checkpoint interval must be larger than or equal to 10 ms"),
    (lambda c: c.set_checkpoint_interval(-1), ValueError,
     "Checkpoint interval must be larger than or equal to 10 ms"),
    (lambda c: c.set_checkpoint_timeout(9), ValueError,
     "Checkpoint timeout must be larger than or equal to 10 ms"),
    (lambda c: c.set_min_pause_between_checkpoints(-1), ValueError,
     "Pause value must be zero or positive"),
    (lambda c: c.set_max_concurrent_checkpoints(0), ValueError,
     "The maximum number of concurrent attempts must be at least one."),
    (lambda c: c.set_tolerable_checkpoint_failure_number(-1), ValueError,
     "The tolerable failure checkpoint number must be non-negative."),
    (lambda c: c.set_checkpoint_interval("1000"), TypeError, "checkpoint_interval must be an int"),
    (lambda c: c.set_checkpointing_mode("EXACTLY_ONCE"), TypeError,
     "checkpointing_mode must be a CheckpointingMode"),
    (lambda c: c.set_externalized_checkpoint_retention(None), TypeError, "retention_mode"),
    (lambda c: c.set_aligned_checkpoint_timeout(100), TypeError, "must be a Duration"),
    (lambda c: c.set_checkpoint_storage(HashMapStateBackend()), TypeError,
     "storage must be a CheckpointStorage"),
    (lambda c: c.set_checkpoint_storage_dir("nosuchfs://namenode:8020/checkpoints"),
     ValueError, "no file system for 'nosuchfs://'"),
])
def test_bad_values_are_rejected_and_leave_the_config_unchanged(call, error, message):
    env = new_env()
    before = dict(env._conf)
    with pytest.raises(error, match=message):
        call(env.get_checkpoint_config())
    assert env._conf == before


def test_enable_checkpointing_rejects_a_too_short_interval():
    with pytest.raises(ValueError, match="larger than or equal to 10 ms"):
        new_env().enable_checkpointing(0)


def test_setters_round_trip_through_a_configuration(tmp_path):
    env = new_env()
    env.enable_checkpointing(5000, CheckpointingMode.EXACTLY_ONCE)
    (env.get_checkpoint_config()
        .set_checkpoint_timeout(60000).set_min_pause_between_checkpoints(500)
        .set_max_concurrent_checkpoints(3).set_tolerable_checkpoint_failure_number(4)
        .set_externalized_checkpoint_retention(
            ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION)
        .enable_unaligned_checkpoints().set_force_unaligned_checkpoints()
        .set_aligned_checkpoint_timeout(Duration.of_seconds(3))
        .set_checkpoint_storage_dir(f"file://{tmp_path}/chk"))
    env.set_default_savepoint_directory(f"file://{tmp_path}/sp")
    copy = StreamExecutionEnvironment.get_execution_environment(
        Configuration.from_dict(dict(env._conf)))
    assert settings(copy) == settings(env) == {
        "enabled": True, "interval": 5000, "mode": CheckpointingMode.EXACTLY_ONCE,
        "timeout": 60000, "min_pause": 500, "max_concurrent": 3, "tolerable": 4,
        "retention": ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION,
        "unaligned": True, "forced": True, "aligned_timeout": Duration.of_seconds(3),
        "savepoints": f"file://{tmp_path}/sp", "checkpoints": f"{tmp_path}/chk"}


def test_flink_configuration_keys_and_duration_syntax_are_read():
    env = new_env(**{
        "execution.checkpointing.interval": "5 s",
        "execution.checkpointing.mode": "at_least_once",
        "execution.checkpointing.timeout": "1 min",
        "execution.checkpointing.min-pause": "500 ms",
        "execution.checkpointing.max-concurrent-checkpoints": "3",
        "execution.checkpointing.tolerable-failed-checkpoints": "4",
        "execution.checkpointing.externalized-checkpoint-retention": "DELETE_ON_CANCELLATION",
        "execution.checkpointing.savepoint-dir": "/tmp/sp2"})
    got = settings(env)
    assert (got["interval"], got["mode"], got["timeout"], got["min_pause"],
            got["max_concurrent"], got["tolerable"], got["retention"], got["savepoints"]) == \
        (5000, CheckpointingMode.AT_LEAST_ONCE, 60000, 500, 3, 4,
         ExternalizedCheckpointRetention.DELETE_ON_CANCELLATION, "/tmp/sp2")
    assert env.get_checkpoint_config().get_externalized_checkpoint_cleanup() is \
        ExternalizedCheckpointCleanup.DELETE_ON_CANCELLATION


@pytest.mark.parametrize("key, value, getter, message", [
    ("execution.checkpointing.interval", "5 parsecs", "get_checkpoint_interval",
     "Invalid duration '5 parsecs'"),
    ("execution.checkpointing.mode", "TWICE", "get_checkpointing_mode",
     "expected one of EXACTLY_ONCE, AT_LEAST_ONCE"),
    ("execution.checkpointing.max-concurrent-checkpoints", "many",
     "get_max_concurrent_checkpoints", "expected an integer"),
])
def test_bad_configuration_values_name_the_key(key, value, getter, message):
    config = new_env(**{"execution.checkpointing.interval": "1000", key: value}) \
        .get_checkpoint_config()
    with pytest.raises(ValueError, match=message) as e:
        getattr(config, getter)()
    assert key in str(e.value)


def test_checkpoint_directory_strips_file_scheme_and_prefers_the_flink_2_key():
    assert checkpoint_directory({}) is None
    assert checkpoint_directory({"state.checkpoints.dir": "file:///data/chk"}) == "/data/chk"
    assert checkpoint_directory({"state.checkpoints.dir": "file:/data/chk"}) == "/data/chk"
    assert checkpoint_directory({"state.checkpoints.dir": "relative/chk"}) == "relative/chk"
    assert checkpoint_directory({"state.checkpoints.dir": "/old",
                                 "execution.checkpointing.dir": "file:///new"}) == "/new"
    assert checkpoint_directory({"execution.checkpointing.dir": "memory://bucket/chk"}) == \
        "memory://bucket/chk"  # (a file system fsspec opens)
    with pytest.raises(ValueError, match="names a local path"):
        checkpoint_directory({"state.checkpoints.dir": "file://host/chk"})


def test_setting_the_storage_overrides_a_configured_flink_2_directory():
    env = new_env(**{"execution.checkpointing.dir": "/configured"})
    assert env.get_checkpoint_config().get_checkpoint_storage().get_checkpoint_path() == \
        "/configured"
    env.get_checkpoint_config().set_checkpoint_storage_dir("/chosen")
    assert checkpoint_directory(env._conf) == "/chosen"


def test_savepoint_directory():
    env = new_env()
    env.set_default_savepoint_directory("file:///data/sp")
    assert env.get_default_savepoint_directory() == "file:///data/sp"
    assert savepoint_directory(env._conf) == "/data/sp"
    assert savepoint_directory({"state.savepoints.dir": "/a",
                                "execution.checkpointing.savepoint-dir": "/b"}) == "/b"
    assert savepoint_directory({}) is None
    with pytest.raises(ValueError, match="non-empty string"):
        env.set_default_savepoint_directory(None)


def test_num_retained():
    assert num_retained({}) == 1
    assert num_retained({"state.checkpoints.num-retained": "3"}) == 3
    assert num_retained({"state.checkpoints.num-retained": "3",
                         "execution.checkpointing.num-retained": "5"}) == 5
    with pytest.raises(ValueError, match="'state.checkpoints.num-retained' must be at least 1"):
        num_retained({"state.checkpoints.num-retained": "0"})


def test_checkpoint_storage_objects():
    env = new_env()
    config = env.get_checkpoint_config()
    storage = FileSystemCheckpointStorage("file:///data/chk")
    assert config.set_checkpoint_storage(storage).get_checkpoint_storage() is storage
    assert checkpoint_directory(env._conf) == "/data/chk"
    # A JobManagerCheckpointStorage without a path keeps the configured directory.
    jm = JobManagerCheckpointStorage()
    config.set_checkpoint_storage(jm)
    assert config.get_checkpoint_storage() is jm
    assert checkpoint_directory(env._conf) == "/data/chk"
    config.set_checkpoint_storage("/data/other")   # a string, as in PyFlink's migration notes
    assert isinstance(config.get_checkpoint_storage(), FileSystemCheckpointStorage)
    assert checkpoint_directory(env._conf) == "/data/other"


def test_checkpoint_storage_defaults_and_validation():
    fs = FileSystemCheckpointStorage("file:///tmp/ck")
    assert (fs.get_checkpoint_path(), fs.get_savepoint_path(), fs.get_min_file_size_threshold(),
            fs.get_write_buffer_size()) == ("file:///tmp/ck", None, 20480, 4096)
    assert FileSystemCheckpointStorage("/tmp/ck", 100, 200).get_write_buffer_size() == 200
    jm = JobManagerCheckpointStorage()
    assert (jm.get_checkpoint_path(), jm.get_max_state_size()) == (None, 5242880)
    with pytest.raises(ValueError, match="checkpoint_path must not be None"):
        FileSystemCheckpointStorage()
    with pytest.raises(ValueError, match=r"must be in \[-1, 1048576\]"):
        FileSystemCheckpointStorage("/tmp/ck", 2 * 1024 * 1024)
    with pytest.raises(ValueError, match="write buffer size must be not less than '-1'"):
        FileSystemCheckpointStorage("/tmp/ck", None, -7)
    with pytest.raises(ValueError, match="maxStateSize must be > 0"):
        JobManagerCheckpointStorage(None, 0)


def test_externalized_checkpoints_and_failures_on_errors():
    config = new_env().get_checkpoint_config()
    config.enable_externalized_checkpoints(ExternalizedCheckpointCleanup.RETAIN_ON_CANCELLATION)
    assert config.is_externalized_checkpoints_enabled()
    assert config.get_externalized_checkpoint_retention() is \
        ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION
    config.set_externalized_checkpoint_cleanup(
        ExternalizedCheckpointCleanup.NO_EXTERNALIZED_CHECKPOINTS)
    assert not config.is_externalized_checkpoints_enabled()
    config.set_fail_on_checkpointing_errors(False)
    assert config.get_tolerable_checkpoint_failure_number() == 2147483647
    assert not config.is_fail_on_checkpointing_errors()


def test_unaligned_checkpoints_are_recorded_and_apply_only_to_exactly_once():
    env = new_env()
    config = env.get_checkpoint_config().enable_unaligned_checkpoints()
    assert not config.is_unaligned_checkpoints_enabled()   # checkpointing is off
    env.enable_checkpointing(1000)
    assert config.is_unaligned_checkpoints_enabled()
    config.set_checkpointing_mode(CheckpointingMode.AT_LEAST_ONCE)
    assert not config.is_unaligned_checkpoints_enabled()
    config.set_checkpointing_mode(CheckpointingMode.EXACTLY_ONCE).disable_unaligned_checkpoints()
    assert not config.is_unaligned_checkpoints_enabled()
    assert config.set_alignment_timeout(Duration.of_millis(30)).get_alignment_timeout() == \
        Duration.of_millis(30)


def test_fs_state_backend_is_hashmap_plus_file_system_storage():
    env = new_env()
    env.set_state_backend(FsStateBackend("file:///data/chk", "file:///data/sp"))
    assert isinstance(env.get_state_backend(), HashMapStateBackend)
    assert env._conf["state.backend.type"] == "hashmap"
    storage = env.get_checkpoint_config().get_checkpoint_storage()
    assert isinstance(storage, FileSystemCheckpointStorage)
    assert storage.get_checkpoint_path() == "file:///data/chk"
    assert checkpoint_directory(env._conf) == "/data/chk"
    assert env.get_default_savepoint_directory() == "file:///data/sp"
    with pytest.raises(ValueError, match="'checkpoint_directory_uri' is required"):
        FsStateBackend()


def test_rocksdb_state_backend_is_embedded_rocksdb_plus_file_system_storage():
    env = new_env()
    env.set_state_backend(RocksDBStateBackend("file:///data/chk", True))
    backend = env.get_state_backend()
    assert isinstance(backend, EmbeddedRocksDBStateBackend)
    assert env._conf["state.backend.type"] == "rocksdb"
    assert backend.get_checkpoint_backend().get_checkpoint_path() == "file:///data/chk"
    assert checkpoint_directory(env._conf) == "/data/chk"
    # ... or the storage of the backend given to write its checkpoints with.
    env.set_state_backend(
        RocksDBStateBackend(checkpoint_stream_backend=FsStateBackend("/data/other")))
    assert checkpoint_directory(env._conf) == "/data/other"
    with pytest.raises(ValueError, match="needs a checkpoint_data_uri"):
        RocksDBStateBackend()
    with pytest.raises(TypeError, match="enable_incremental_checkpointing"):
        RocksDBStateBackend("/data/chk", "yes")


def test_memory_state_backend_is_hashmap_plus_job_manager_storage():
    env = new_env(**{"state.checkpoints.dir": "/configured"})
    env.set_state_backend(MemoryStateBackend(max_state_size=1024))
    assert isinstance(env.get_state_backend(), HashMapStateBackend)
    storage = env.get_checkpoint_config().get_checkpoint_storage()
    assert isinstance(storage, JobManagerCheckpointStorage)
    assert storage.get_max_state_size() == env.get_state_backend().get_max_state_size() == 1024
    assert checkpoint_directory(env._conf) == "/configured"   # no path: the configured one
    env.set_state_backend(MemoryStateBackend("file:///data/chk"))
    assert checkpoint_directory(env._conf) == "/data/chk"
    assert MemoryStateBackend().is_using_asynchronous_snapshots()

