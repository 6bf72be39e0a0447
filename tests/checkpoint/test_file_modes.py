"""A job's local storage is readable by its user only, whatever the umask: every directory
the engine makes under the checkpoint and savepoint directories is 0700 and every file
0600 (its state, checkpoints, savepoints, metadata, status and metrics hold or quote its
keys and values), or 0770/0660 with ``state.checkpoints.group-access``. Sink output
follows the umask."""
import os
import stat
import subprocess
import time

import pytest

from api.common import Types
from api.datastream.connectors.file_system import BucketAssigner, Encoder, FileSink
from api.datastream.functions import MapFunction
from core.private_paths import set_group_access
from tests.checkpoint.test_savepoints import Count
from tests.conftest import NOBODY, make_env, needs_another_user

JOB = "private"
BACKENDS = {"hashmap": {}, "rocksdb-incremental": {"state.backend.type": "rocksdb",
                                                   "state.backend.incremental": "true"}}


class FailLate(MapFunction):
    """Slow enough for a savepoint to be taken; fails on record 300."""

    def map(self, value):
        time.sleep(0.001)
        if value[1] == 300:
            raise ValueError("bad record")
        return value


@pytest.fixture
def umask_022():
    """The common umask (new files world-readable), for the test; this process's storage
    modes back to private after it."""
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)
        set_group_access(False)


def failed_job(root, executor="local", **conf) -> str:
    """Runs a keyed job that checkpoints every batch and fails after a savepoint of its
    first batch was taken (a failed job keeps its directory); the savepoint's path."""
    env = make_env(executor, parallelism=2, micro_batch_size=20, **{
        "state.checkpoints.dir": str(root / "checkpoints"),
        "state.savepoints.dir": str(root / "savepoints"),
        "restart-strategy.type": "none"}, **conf)
    env.enable_checkpointing(10)
    records = [(f"k{i % 6}", i) for i in range(400)]
    record_type = Types.TUPLE([Types.STRING(), Types.LONG()])
    (env.from_collection(records, record_type)
        .map(FailLate(), record_type).set_parallelism(1)
        .key_by(lambda e: e[0])
        .process(Count(), Types.STRING()).uid("counts")
        .sink_to(FileSink.for_row_format(str(root / "out"), Encoder.simple_string_encoder())
                 .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
                 .build()))
    client = env.execute_async(JOB)
    path = client.trigger_savepoint().result(timeout=60)
    with pytest.raises(Exception, match="bad record"):
        client.get_job_execution_result().result(timeout=60)
    return path


def modes(root) -> dict:
    """Every directory and file under ``root`` (itself included): its mode."""
    found = {str(root): stat.S_IMODE(os.stat(root).st_mode)}
    for directory, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(directory, name)
            found[path] = stat.S_IMODE(os.lstat(path).st_mode)
    return found


def check_modes(tmp_path, savepoint: str, backend: str, group_access: bool) -> None:
    """Every directory and file of the job's directory and savepoints under ``tmp_path`` has
    the mode ``group_access`` says; the job's output has the umask's."""
    directory_mode, file_mode = (0o770, 0o660) if group_access else (0o700, 0o600)
    stored = {**modes(tmp_path / "checkpoints"), **modes(tmp_path / "savepoints")}
    job_dir = tmp_path / "checkpoints" / JOB
    names = {os.path.relpath(p, job_dir) for p in stored}
    assert {"state", "metadata", "status.json", "metrics.jsonl"} <= names
    assert any(n.startswith("chk-") for n in names) and savepoint in stored
    assert any(p.endswith(".sst") for p in stored) == (backend == "rocksdb-incremental")
    wrong = {p: f"{m:o}" for p, m in stored.items()
             if m != (directory_mode if os.path.isdir(p) else file_mode)}
    assert not wrong
    # Output is the user's, for other tools: the umask's modes.
    assert {m for m in modes(tmp_path / "out").values()} <= {0o755, 0o644}


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("group_access", [False, True])
def test_a_jobs_directory_and_savepoint_are_private_whatever_the_umask(
        tmp_path, umask_022, backend, group_access):
    conf = dict(BACKENDS[backend])
    if group_access:
        conf["state.checkpoints.group-access"] = "true"
    check_modes(tmp_path, failed_job(tmp_path, **conf), backend, group_access)


def test_group_access_reaches_the_spark_tasks(tmp_path, umask_022, spark):
    savepoint = failed_job(tmp_path, "spark", **BACKENDS["rocksdb-incremental"],
                           **{"state.checkpoints.group-access": "true"})
    check_modes(tmp_path, savepoint, "rocksdb-incremental", True)


def test_group_access_takes_true_or_false_only(tmp_path):
    env = make_env("local", **{"state.checkpoints.dir": str(tmp_path),
                               "state.checkpoints.group-access": "yes"})
    env.from_collection([1, 2]).print()
    with pytest.raises(ValueError, match="'state.checkpoints.group-access' takes true or "
                                         "false, not 'yes'"):
        env.execute(JOB)


def as_nobody(*command: str) -> subprocess.CompletedProcess:
    return subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}",
                           "--clear-groups", *command], capture_output=True, text=True,
                          timeout=30)


@needs_another_user
def test_another_user_cannot_read_the_state_of_a_failed_job(open_tmp, umask_022):
    failed_job(open_tmp)
    state_files = [os.path.join(d, n) for d, _, names in os.walk(open_tmp / "checkpoints")
                   for n in names if n.endswith(".snapshot") or n.endswith(".changelog")]
    assert state_files
    refused = as_nobody("cat", state_files[0])
    assert refused.returncode != 0 and "Permission denied" in refused.stderr
    # (The directories alone keep it out; the file's own mode does too.)
    for directory, _, _ in os.walk(open_tmp / "checkpoints"):
        os.chmod(directory, 0o755)
    refused = as_nobody("cat", state_files[0])
    assert refused.returncode != 0 and "Permission denied" in refused.stderr
    # ... while the job's output, under the same open directory, is readable.
    output = next(os.path.join(d, n) for d, _, names in os.walk(open_tmp / "out")
                  for n in names)
    assert as_nobody("cat", output).returncode == 0
