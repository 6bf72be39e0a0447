"""Savepoints through the JobClient, restore with execution.savepoint.path (also at another
parallelism), the compatibility checks, retention and reading state offline."""
import glob
import os
import tempfile
import time
from collections import Counter

import pytest

from api.common import Types
from api.common.watermark_strategy import TimestampAssigner, WatermarkStrategy
from api.datastream import FileSystemCheckpointStorage, FsStateBackend
from api.datastream.connectors.file_system import BucketAssigner, Encoder, FileSink
from api.datastream.functions import KeyedProcessFunction, MapFunction, RuntimeContext
from api.datastream.state import ListStateDescriptor, StateTtlConfig, ValueStateDescriptor
from api.datastream.window import TumblingEventTimeWindows
from api.common.time import Time
from checkpoint.metadata import IncompatibleCheckpointError
from engine.driver.state_reader import read_keyed_state
from engine.errors import JobExecutionException
from tests.conftest import finished_lines, make_env

RECORDS = 400
KEYS = 6
BATCH = 20
RECORD_TYPE = Types.TUPLE([Types.STRING(), Types.LONG()])


def _events():
    return [(f"k{i % KEYS}", i) for i in range(RECORDS)]


def _count_lines(events):
    counts, lines = Counter(), []
    for key, _ in events:
        counts[key] += 1
        lines.append(f"{key},{counts[key]}")
    return lines


class Slow(MapFunction):
    def map(self, value):
        time.sleep(0.001)
        return value


class FailWhileBroken(MapFunction):
    """Fails on record 250 while the file ``broken`` exists."""

    def __init__(self, broken):
        self.broken = broken

    def map(self, value):
        if value[1] == 250 and os.path.exists(self.broken):
            raise ValueError("bad record")
        return value


class Count(KeyedProcessFunction):
    def open(self, runtime_context: RuntimeContext):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value, ctx):
        self.count.update((self.count.value() or 0) + 1)
        yield f"{value[0]},{self.count.value()}"


def _env(tmp_path, parallelism=2, **conf):
    conf.setdefault("state.savepoints.dir", str(tmp_path / "savepoints"))
    return make_env("local", parallelism=parallelism, micro_batch_size=BATCH, **conf)


def _build(env, out, counter_uid="counts", first_map=None, counter=None):
    (env.from_collection(_events(), RECORD_TYPE).uid("events")
        .map(first_map or Slow(), RECORD_TYPE).set_parallelism(1).uid("slow")
        .key_by(lambda e: e[0])
        .process(counter or Count(), Types.STRING()).uid(counter_uid)
        .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder())
                 .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
                 .build()))



def _stopped_with_savepoint(tmp_path, out, counter=None, **conf):
    """Runs the job until its first batch commits, stops it with a savepoint; the path."""
    env = _env(tmp_path, **conf)
    _build(env, out, counter=counter)
    client = env.execute_async("counting")
    path = client.stop_with_savepoint(False).result(timeout=60)
    client.get_job_execution_result().result(timeout=60)
    assert client.get_job_status().result().name == "FINISHED"
    return path


BACKENDS = {"hashmap": {}, "rocksdb": {"state.backend.type": "rocksdb"},
            "rocksdb-incremental": {"state.backend.type": "rocksdb",
                                    "state.backend.incremental": "true"}}


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("restore_parallelism", [1, 4])
def test_stop_with_savepoint_then_restore_at_another_parallelism(tmp_path, restore_parallelism,
                                                                 backend):
    out = tmp_path / "out"
    path = _stopped_with_savepoint(tmp_path, out, **BACKENDS[backend])
    assert os.path.dirname(path) == str(tmp_path / "savepoints")
    stored = [name for _, _, names in os.walk(path) for name in names]
    assert any(n.endswith(".incremental") for n in stored) == (backend == "rocksdb-incremental")
    first = finished_lines(out)
    assert first and len(first) < RECORDS  # stopped early: the rest is still to come
    env = _env(tmp_path, parallelism=restore_parallelism,
               **{"execution.savepoint.path": path}, **BACKENDS[backend])
    _build(env, out)
    env.execute("counting")
    assert Counter(finished_lines(out)) == Counter(_count_lines(_events()))


def test_trigger_savepoint_lets_the_job_go_on_and_captures_its_state(tmp_path):
    env = _env(tmp_path)
    _build(env, tmp_path / "out")
    client = env.execute_async("counting")
    path = client.trigger_savepoint(str(tmp_path / "mine")).result(timeout=60)
    client.get_job_execution_result().result(timeout=60)
    assert client.get_job_status().result().name == "FINISHED"
    assert Counter(finished_lines(tmp_path / "out")) == Counter(_count_lines(_events()))
    # The savepoint holds the counts after the first batch, offline and on restore.
    counts = {row.key: row.value for row in read_keyed_state(path, "counts", "count")}
    expected_counts = Counter(key for key, _ in _events()[:sum(counts.values())])
    assert counts == dict(expected_counts) and 0 < sum(counts.values()) < RECORDS
    env = _env(tmp_path, parallelism=3, **{"execution.savepoint.path": path})
    _build(env, tmp_path / "again")
    env.execute("counting")
    restored = finished_lines(tmp_path / "again")
    assert Counter(restored) == Counter(_count_lines(_events())[sum(counts.values()):])


def test_restoring_into_a_job_without_the_operator_fails_unless_allowed(tmp_path):
    path = _stopped_with_savepoint(tmp_path, tmp_path / "out")
    env = _env(tmp_path, **{"execution.savepoint.path": path})
    _build(env, tmp_path / "other", counter_uid="renamed")
    with pytest.raises(IncompatibleCheckpointError, match="'counts'.*does not have"):
        env.execute("counting")
    env = _env(tmp_path, **{"execution.savepoint.path": path,
                            "execution.savepoint.ignore-unclaimed-state": "true"})
    _build(env, tmp_path / "other", counter_uid="renamed")
    env.execute("counting")  # counts start afresh for the records after the savepoint
    assert Counter(finished_lines(tmp_path / "other")) == Counter(
        _count_lines(_events()[len(finished_lines(tmp_path / "out")):]))


def test_changing_max_parallelism_is_refused_with_a_clear_error(tmp_path):
    path = _stopped_with_savepoint(tmp_path, tmp_path / "out")
    env = _env(tmp_path, **{"execution.savepoint.path": path})
    env.set_max_parallelism(64)
    _build(env, tmp_path / "other")
    with pytest.raises(IncompatibleCheckpointError, match="max parallelism 128 and now has 64"):
        env.execute("counting")


def test_a_savepoint_path_that_is_no_savepoint_is_refused(tmp_path):
    (tmp_path / "nothing").mkdir()
    env = _env(tmp_path, **{"execution.savepoint.path": str(tmp_path / "nothing")})
    _build(env, tmp_path / "out")
    state_dirs = set(glob.glob(os.path.join(tempfile.gettempdir(), "spark-datastream-state-*")))
    with pytest.raises(IncompatibleCheckpointError, match="not a complete checkpoint"):
        env.execute("counting")
    # the job's temporary state directory is gone too
    assert set(glob.glob(os.path.join(tempfile.gettempdir(),
                                      "spark-datastream-state-*"))) <= state_dirs


def test_savepoint_without_a_directory_fails_clearly(tmp_path):
    env = make_env("local", parallelism=1, micro_batch_size=BATCH)
    _build(env, tmp_path / "out")
    client = env.execute_async("counting")
    with pytest.raises(ValueError, match="No savepoint directory"):
        client.trigger_savepoint().result(timeout=60)
    client.get_job_execution_result().result(timeout=60)


class _Timestamp(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1] * 10


@pytest.mark.parametrize("drain", [True, False])
def test_stop_with_savepoint_and_drain_fires_pending_windows(tmp_path, drain):
    env = _env(tmp_path, parallelism=1)
    windows = []

    def collect(value):
        windows.append(value)
        return value

    (env.from_collection(_events(), RECORD_TYPE)
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(_Timestamp()))
        .key_by(lambda e: e[0])
        .window(TumblingEventTimeWindows.of(Time.milliseconds(100_000)))
        .reduce(lambda a, b: (a[0], a[1] + b[1]))
        .map(lambda v: f"{v[0]},{v[1]}", Types.STRING())
        .sink_to(FileSink.for_row_format(str(tmp_path / "out"), Encoder.simple_string_encoder())
                 .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner()).build()))
    client = env.execute_async("windows")
    client.stop_with_savepoint(drain).result(timeout=60)
    client.get_job_execution_result().result(timeout=60)
    lines = Counter(finished_lines(tmp_path / "out"))
    # One window holds everything: only draining (MAX_WATERMARK) fires it, over the records
    # of the batches before the stop (the first, or a few more on a busy machine).
    if not drain:
        assert lines == Counter()
        return

    def window_sums(records):
        sums = Counter()
        for key, value in _events()[:records]:
            sums[key] += value
        return Counter(f"{k},{v}" for k, v in sums.items())
    assert any(lines == window_sums(n) for n in range(BATCH, RECORDS, BATCH))


def test_a_job_restored_from_a_drained_savepoint_goes_on_in_event_time(tmp_path):
    # Draining ends event time for the stop (MAX_WATERMARK); the job restored from it goes
    # on in event time from where its inputs are (Flink keeps no watermark in a
    # savepoint): the windows of the records after the stop fire, none is late.
    out = tmp_path / "out"

    def run(**conf):
        env = _env(tmp_path, parallelism=1, **conf)
        (env.from_collection(_events(), RECORD_TYPE).uid("events")
            .map(Slow(), RECORD_TYPE).uid("slow")
            .assign_timestamps_and_watermarks(WatermarkStrategy.for_monotonous_timestamps()
                                              .with_timestamp_assigner(_Timestamp()))
            .key_by(lambda e: e[0])
            .window(TumblingEventTimeWindows.of(Time.milliseconds(500)))
            .reduce(lambda a, b: (a[0], a[1] + b[1])).uid("windows")
            .map(lambda v: f"{v[0]},{v[1]}", Types.STRING())
            .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder())
                     .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
                     .build()))
        return env.execute_async("windows")
    client = run()
    path = client.stop_with_savepoint(True).result(timeout=60)
    client.get_job_execution_result().result(timeout=60)
    stopped = len(finished_lines(out))
    run(**{"execution.savepoint.path": path}).get_job_execution_result().result(timeout=120)
    lines = finished_lines(out)
    assert len(lines) > stopped
    sums = Counter()
    for key, value in _events():
        sums[key] += value
    found = Counter()
    for line in lines:
        key, value = line.split(",")
        found[key] += int(value)
    assert found == sums  # every record in a window once


def test_checkpoints_are_retained_while_running_and_removed_when_finished(tmp_path):
    checkpoints = tmp_path / "checkpoints"
    env = _env(tmp_path, **{"state.checkpoints.dir": str(checkpoints),
                            "state.checkpoints.num-retained": "2"})
    env.enable_checkpointing(10)
    _build(env, tmp_path / "out")
    client = env.execute_async("counting")
    job_dir = checkpoints / "counting"
    seen = set()
    while not client.get_job_execution_result().done():
        names = os.listdir(job_dir) if job_dir.exists() else []
        checkpoint_names = {n for n in names if n.startswith("chk-")}
        assert len(checkpoint_names) <= 3  # 2 retained, + a new one before the oldest goes
        seen |= checkpoint_names
        time.sleep(0.01)
    client.get_job_execution_result().result()
    assert len(seen) >= 3  # checkpoints were taken, and old ones deleted
    assert os.listdir(job_dir) == ["status.json"]  # (kept for ``spark-datastream list``)


def test_a_failed_job_keeps_its_state_and_the_next_run_resumes(tmp_path):
    checkpoints = tmp_path / "checkpoints"
    broken = tmp_path / "input-is-broken"
    broken.touch()

    env = _env(tmp_path, **{"state.checkpoints.dir": str(checkpoints)})
    _build(env, tmp_path / "out", first_map=FailWhileBroken(str(broken)))
    with pytest.raises(JobExecutionException, match="bad record"):
        env.execute("counting")
    committed = finished_lines(tmp_path / "out")
    assert len(committed) == 240  # the batches before the failing one
    broken.unlink()  # the input is fixed; the job runs again and resumes
    env = _env(tmp_path, **{"state.checkpoints.dir": str(checkpoints)})
    _build(env, tmp_path / "out", first_map=FailWhileBroken(str(broken)))
    env.execute("counting")
    assert Counter(finished_lines(tmp_path / "out")) == Counter(_count_lines(_events()))


class CountInList(KeyedProcessFunction):
    """Uses the name of Count's value state for a list state."""

    def open(self, runtime_context: RuntimeContext):
        self.count = runtime_context.get_list_state(ListStateDescriptor("count", Types.LONG()))

    def process_element(self, value, ctx):
        self.count.add(1)
        yield value[0]


def test_restoring_a_state_as_another_kind_fails_naming_the_state(tmp_path):
    path = _stopped_with_savepoint(tmp_path, tmp_path / "out")
    env = _env(tmp_path, **{"execution.savepoint.path": path})
    (env.from_collection(_events(), RECORD_TYPE).uid("events")
        .key_by(lambda e: e[0])
        .process(CountInList(), Types.STRING()).uid("counts")
        .print())
    with pytest.raises(JobExecutionException, match="'count' .* is value state"):
        env.execute("counting")


def test_offline_state_as_a_spark_data_frame(tmp_path, spark):
    path = _stopped_with_savepoint(tmp_path, tmp_path / "out")
    rows = read_keyed_state(path, "counts", "count")
    frame = read_keyed_state(path, "counts", "count", spark=spark)
    assert sorted(tuple(r) for r in frame.collect()) == sorted(tuple(r) for r in rows)
    assert frame.columns == ["key", "namespace", "value"]
    with pytest.raises(KeyError, match="no state 'missing'.*'count'"):
        read_keyed_state(path, "counts", "missing")
    with pytest.raises(KeyError, match="no keyed state of operator 'nope'"):
        read_keyed_state(path, "nope", "count")


def test_a_run_restored_from_a_savepoint_that_fails_resumes_from_its_own_progress(tmp_path):
    out = tmp_path / "out"
    path = _stopped_with_savepoint(tmp_path, out)
    broken = tmp_path / "broken"
    broken.touch()
    conf = {"execution.savepoint.path": path, "state.checkpoints.dir": str(tmp_path / "chk")}

    def run():
        env = _env(tmp_path, **conf)
        _build(env, out, first_map=FailWhileBroken(str(broken)))
        env.execute("counting")

    with pytest.raises(JobExecutionException, match="bad record"):
        run()
    broken.unlink()
    run()  # same configuration, savepoint path included: goes on after the failure
    assert Counter(finished_lines(out)) == Counter(_count_lines(_events()))


class CountWithTtl(Count):
    """Count, with time-to-live on its state."""

    def open(self, runtime_context: RuntimeContext):
        descriptor = ValueStateDescriptor("count", Types.LONG())
        descriptor.enable_time_to_live(StateTtlConfig.new_builder(Time.hours(1)).build())
        self.count = runtime_context.get_state(descriptor)


def test_turning_on_time_to_live_for_stored_state_fails_naming_the_state(tmp_path):
    path = _stopped_with_savepoint(tmp_path, tmp_path / "out")
    env = _env(tmp_path, **{"execution.savepoint.path": path})
    (env.from_collection(_events(), RECORD_TYPE).uid("events")
        .key_by(lambda e: e[0])
        .process(CountWithTtl(), Types.STRING()).uid("counts")
        .print())
    with pytest.raises(JobExecutionException,
                       match="'count' .* is value state; it cannot be used as value with TTL"):
        env.execute("counting")


@pytest.mark.parametrize("configure", ["storage", "storage_dir", "fs_state_backend"])
def test_checkpoint_storage_set_through_the_api_is_where_a_failed_job_resumes(tmp_path,
                                                                             configure):
    broken = tmp_path / "broken"
    broken.touch()
    out, storage = tmp_path / "out", f"file://{tmp_path / 'storage'}"

    def run():
        env = _env(tmp_path)
        if configure == "storage":
            env.get_checkpoint_config().set_checkpoint_storage(
                FileSystemCheckpointStorage(storage))
        elif configure == "storage_dir":
            env.get_checkpoint_config().set_checkpoint_storage_dir(storage)
        else:
            env.set_state_backend(FsStateBackend(storage))
        _build(env, out, first_map=FailWhileBroken(str(broken)))
        env.execute("counting")

    with pytest.raises(JobExecutionException, match="bad record"):
        run()
    assert (tmp_path / "storage" / "counting" / "metadata").is_dir()
    broken.unlink()
    run()
    assert Counter(finished_lines(out)) == Counter(_count_lines(_events()))
    assert os.listdir(tmp_path / "storage" / "counting") == ["status.json"]


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_offline_state_with_time_to_live_reads_plain_values(tmp_path, backend):
    path = _stopped_with_savepoint(tmp_path, tmp_path / "out", counter=CountWithTtl(),
                                   **BACKENDS[backend])
    counts = {row.key: row.value for row in read_keyed_state(path, "counts", "count")}
    processed = len(finished_lines(tmp_path / "out"))
    assert counts == dict(Counter(key for key, _ in _events()[:processed]))


@pytest.mark.parametrize("tolerable", [0, 100])
def test_failed_checkpoints_fail_the_job_beyond_the_tolerable_number(tmp_path, tolerable):
    job_dir = tmp_path / "checkpoints" / "counting"
    job_dir.mkdir(parents=True)
    (job_dir / "chk-1").write_text("in the way")  # checkpoint 1 cannot be written
    env = _env(tmp_path, **{"state.checkpoints.dir": str(tmp_path / "checkpoints")})
    env.enable_checkpointing(10)
    env.get_checkpoint_config().set_tolerable_checkpoint_failure_number(tolerable)
    _build(env, tmp_path / "out")
    if tolerable:
        env.execute("counting")  # checkpoint 1 fails, the job goes on
        assert Counter(finished_lines(tmp_path / "out")) == Counter(_count_lines(_events()))
    else:
        with pytest.raises(JobExecutionException, match="tolerable failure threshold"):
            env.execute("counting")


def _build_windows(env, out, broken):
    """Counts per key and tumbling 150 ms window of event time (record i at 10 i ms: the
    batch of records 20 k to 20 k + 19 passes the end of a window); fails on record 250
    while ``broken`` exists."""
    (env.from_collection(_events(), RECORD_TYPE).uid("events")
        .map(FailWhileBroken(broken), RECORD_TYPE).set_parallelism(1).uid("failing")
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(_Timestamp()))
        .set_parallelism(1)
        .map(lambda e: (e[0], 1), RECORD_TYPE)
        .key_by(lambda e: e[0])
        .window(TumblingEventTimeWindows.of(Time.milliseconds(150)))
        .reduce(lambda a, b: (a[0], a[1] + b[1])).uid("windows")
        .map(lambda v: f"{v[0]},{v[1]}", Types.STRING())
        .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder())
                 .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner()).build()))


@pytest.mark.parametrize("resume_parallelism", [2, 1, 3])
def test_windows_fired_in_the_batches_before_a_failure_are_not_fired_again(
        tmp_path, resume_parallelism):
    """Windows fire in the batch whose records pass their end, and the committed watermark
    is the one they reached: resumed after a failure (also at another parallelism), the
    job emits every window once."""
    checkpoints = {"state.checkpoints.dir": str(tmp_path / "checkpoints")}
    broken = tmp_path / "input-is-broken"
    broken.touch()
    env = _env(tmp_path, **checkpoints)
    _build_windows(env, tmp_path / "out", str(broken))
    with pytest.raises(JobExecutionException, match="bad record"):
        env.execute("windows")
    fired = Counter(finished_lines(tmp_path / "out"))
    # the batches before the failing one (records 0-239, up to 2390 ms) fired the windows
    # their watermark passed (2389 ms: those before [2250, 2400) ms), with records 0-224
    assert sum(int(line.split(",")[1]) for line in fired.elements()) == 225
    broken.unlink()
    env = _env(tmp_path, parallelism=resume_parallelism, **checkpoints)
    _build_windows(env, tmp_path / "out", str(broken))
    env.execute("windows")
    counts = Counter((key, i * 10 // 150) for key, i in _events())
    assert Counter(finished_lines(tmp_path / "out")) == Counter(
        f"{key},{n}" for (key, _), n in counts.items())
