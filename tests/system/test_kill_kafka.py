"""Kafka -> keyed state -> Kafka (EXACTLY_ONCE), killed with SIGKILL at random points and
restarted until it finishes: the output topic, read read_committed, holds exactly the
records of a failure-free run, on a broker (Tansu) that does not hide aborted
transactions."""
import os
import random
import sys

import pytest

from benchmarks.kafka_broker import create_topic, produce_many, read_values, unique_topic
from tests.system.crash import check_counted_once, run_with_kills

JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kafka_crash_job.py")
RECORDS = 1200


def value(i: int) -> str:
    return f"k{i * 7 % 13},{i}"


@pytest.mark.parametrize("executor, kills", [("local", 20), ("spark", 5)])
def test_a_killed_kafka_job_writes_every_record_once(tmp_path, kafka_broker, executor, kills):
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
    stderr = run_with_kills(command, metadata, random.Random(3).sample(range(1, 28), kills),
                            seed=3)

    rows = [(k, int(n), int(v)) for k, n, v in
            (line.split(",") for line in read_values(bootstrap, out_topic))]
    check_counted_once(rows, [(value(i).split(",")[0], i) for i in range(RECORDS)])
    assert "fenced" not in stderr  # (a producer fenced while in use logs FATAL)
