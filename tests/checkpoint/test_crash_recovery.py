"""Exactly-once across crashes: the driver process is killed with SIGKILL at random
moments and started again, and Spark retries a failed task; the FileSink's output is
that of a run without failures (tests/checkpoint/crash_job.py)."""
import os
import random
import subprocess
import sys
import time
from collections import Counter

import pytest

from tests.checkpoint.crash_job import expected_lines
from tests.conftest import finished_lines

JOB = os.path.join(os.path.dirname(__file__), "crash_job.py")


def _start(tmp_path, *extra):
    return subprocess.Popen([sys.executable, JOB, str(tmp_path / "checkpoints"),
                             str(tmp_path / "out"), *extra],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)



def _commits(tmp_path):
    metadata = tmp_path / "checkpoints" / "crash-job" / "metadata"
    return sorted(int(n) for n in os.listdir(metadata) if n.isdigit()) if metadata.exists() else []


def _kill_after_commit(process, tmp_path, batch_id, rng):
    """Kills the driver a random moment after it committed ``batch_id``: in the middle of
    a later batch, of a commit, of a checkpoint or of publishing."""
    while not _commits(tmp_path) or max(_commits(tmp_path)) < batch_id:
        assert process.poll() is None, process.stderr.read().decode()
        time.sleep(0.005)
    time.sleep(rng.uniform(0, 0.15))
    process.kill()
    process.wait()


@pytest.mark.parametrize("seed,backend", [(1, "hashmap"), (2, "rocksdb"), (3, "hashmap"),
                                          (4, "rocksdb")])
def test_driver_killed_repeatedly_gives_exactly_once_output(tmp_path, seed, backend):
    rng = random.Random(seed)
    # crash_job runs 50 batches; kill it after three random batches, well before the end
    for batch_id in sorted(rng.sample(range(2, 42), 3)):
        _kill_after_commit(_start(tmp_path, "--backend", backend), tmp_path, batch_id, rng)
    process = _start(tmp_path, "--backend", backend)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr.decode()
    assert Counter(finished_lines(tmp_path / "out")) == Counter(expected_lines())
    # A finished job leaves no checkpoint state behind (only its status file); the sink
    # no pending files.
    assert os.listdir(tmp_path / "checkpoints" / "crash-job") == ["status.json"]
    assert all(not name.startswith(".") for _, _, names in os.walk(tmp_path / "out")
               for name in names)


def test_spark_retries_a_failed_task_without_applying_state_twice(tmp_path):
    marker = tmp_path / "failed-once"
    process = _start(tmp_path, "--executor", "spark", "--master", "local[2,2]",
                     "--fail-once", str(marker), "--batch-size", "500")
    _, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr.decode()[-3000:]
    assert marker.exists()  # the first attempt did fail
    assert Counter(finished_lines(tmp_path / "out")) == Counter(expected_lines())


def test_driver_killed_on_spark_resumes_exactly_once(tmp_path):
    """The Spark JVM and its Python workers die with the driver; the next run resumes."""
    spark = ("--executor", "spark", "--master", "local[2]", "--batch-size", "150")
    _kill_after_commit(_start(tmp_path, *spark), tmp_path, 3, random.Random(5))
    process = _start(tmp_path, *spark)
    _, stderr = process.communicate(timeout=600)
    assert process.returncode == 0, stderr.decode()[-3000:]
    assert Counter(finished_lines(tmp_path / "out")) == Counter(expected_lines())


def test_every_restore_point_damaged_after_a_kill_is_an_error_never_duplicates(tmp_path):
    _kill_after_commit(_start(tmp_path), tmp_path, 5, random.Random(7))
    job_dir = tmp_path / "checkpoints" / "crash-job"
    damaged = [job_dir / "metadata" / str(b) for b in _commits(tmp_path)] + \
        list(job_dir.glob("chk-*/_metadata"))
    assert damaged
    for path in damaged:
        data = bytearray(path.read_bytes())
        data[-4:] = b"\xff\xff\xff\xff"  # the checksum no longer matches
        path.write_bytes(bytes(data))
    written = Counter(finished_lines(tmp_path / "out"))
    process = _start(tmp_path)
    _, stderr = process.communicate(timeout=300)
    assert process.returncode != 0
    assert f"No restore point in {job_dir} can be restored" in stderr.decode()
    # Nothing was written again: what the first run committed stays as it was.
    assert Counter(finished_lines(tmp_path / "out")) == written
    assert set(written) <= set(expected_lines()) and set(written.values()) <= {1}
