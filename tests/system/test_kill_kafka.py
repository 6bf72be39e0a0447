"""Kafka -> keyed state -> Kafka (EXACTLY_ONCE), killed with SIGKILL at random points and
restarted until it finishes: the output topic, read read_committed, holds exactly the
records of a failure-free run, on a broker (Tansu) that does not hide aborted
transactions."""
import os
import random
import signal
import subprocess
import sys

import pytest

from benchmarks.kafka_broker import create_topic, produce_many, read_values, unique_topic
from tests.system.crash import ROOT, check_counted_once, run_with_kills

JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kafka_crash_job.py")
RECORDS = 1200


def value(i: int) -> str:
    return f"k{i * 7 % 13},{i}"


@pytest.mark.parametrize("executor", ["local", "spark"])
def test_a_killed_kafka_job_writes_every_record_once(tmp_path, kafka_broker, executor):
    # On Spark, a subtask's commits run in its host: its transactional producer has one
    # owner, and no healthy run has a producer fenced.
    bootstrap = kafka_broker.bootstrap
    in_topic = create_topic(bootstrap, unique_topic("crash-in"), 2)
    out_topic = create_topic(bootstrap, unique_topic("crash-out"), 2)
    produce_many(bootstrap, in_topic, RECORDS, value)  # record i in partition i % 2
    ends = f"0:{(RECORDS + 1) // 2},1:{RECORDS // 2}"
    metadata = tmp_path / "checkpoints" / "kafka-crash-job" / "metadata"
    command = [sys.executable, JOB, bootstrap, in_topic, out_topic,
               str(tmp_path / "checkpoints"), ends, executor]
    # The job runs 30 batches; a kill lands 0-200 ms after a batch committed, often while
    # its sink commits.
    stderr = run_with_kills(command, metadata, random.Random(3).sample(range(1, 28), 20),
                            seed=3)

    rows = [(k, int(n), int(v)) for k, n, v in
            (line.split(",") for line in read_values(bootstrap, out_topic))]
    check_counted_once(rows, [(value(i).split(",")[0], i) for i in range(RECORDS)])
    assert "fenced" not in stderr  # (a producer fenced while in use logs FATAL)



# The crash job, killed with SIGKILL once its finished run has deleted its metadata log
# (what clear() deletes first; checkpoints and state are still there).
KILLED_WHILE_CLEARING = """
import os, signal, sys
from checkpoint import job_directory
discard = job_directory._discard
def killed_after(path):
    discard(path)
    if os.path.basename(path) == "metadata":
        os.kill(os.getpid(), signal.SIGKILL)
job_directory._discard = killed_after
sys.argv = sys.argv[1:]
exec(compile(open(sys.argv[0]).read(), sys.argv[0], "exec"))
"""


def test_a_job_killed_while_it_clears_its_finished_directory_does_not_run_again(
        tmp_path, kafka_broker):
    # Killed there, a finished job used to start afresh when run again, and wrote every
    # record a second time (issue 32).
    bootstrap = kafka_broker.bootstrap
    in_topic = create_topic(bootstrap, unique_topic("clear-in"), 2)
    out_topic = create_topic(bootstrap, unique_topic("clear-out"), 2)
    produce_many(bootstrap, in_topic, 100, value)
    job = [JOB, bootstrap, in_topic, out_topic, str(tmp_path), "0:50,1:50", "local", "10"]

    def run(*prefix):
        return subprocess.run([sys.executable, *prefix, *job], cwd=ROOT, capture_output=True,
                              env=dict(os.environ, PYTHONPATH=ROOT)).returncode
    assert run("-c", KILLED_WHILE_CLEARING) == -signal.SIGKILL
    assert run() == 0
    rows = [(k, int(n), int(v)) for k, n, v in
            (line.split(",") for line in read_values(bootstrap, out_topic))]
    check_counted_once(rows, [(value(i).split(",")[0], i) for i in range(100)])
    assert run() == 0  # a finished job run again is a new run, as in Flink
    assert len(read_values(bootstrap, out_topic)) == 200
