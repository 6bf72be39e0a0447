"""A streaming SQL job (INSERT INTO a Kafka table SELECT ... FROM a Kafka table, with
'sink.delivery-guarantee' = 'exactly-once') killed with SIGKILL at random points and
restarted from its checkpoint until it finishes: the output topic, read read_committed,
holds every input row exactly once (on Tansu, which does not hide aborted transactions
from read_committed readers: the sink never lets one abort with records in it)."""
import json
import os
import random
import sys

import pytest

from benchmarks.kafka_broker import create_topic, produce_many, read_values, unique_topic
from tests.system.crash import run_with_kills

JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sql_kafka_crash_job.py")
RECORDS = 600


@pytest.mark.slow
def test_a_killed_streaming_sql_job_writes_every_row_once(tmp_path, kafka_broker):
    bootstrap = kafka_broker.bootstrap
    in_topic = create_topic(bootstrap, unique_topic("sql-crash-in"), 2)
    out_topic = create_topic(bootstrap, unique_topic("sql-crash-out"), 2)
    produce_many(bootstrap, in_topic, RECORDS, lambda i: f"k{i % 7},{i}")  # i in i % 2
    offsets = f"partition:0,offset:{(RECORDS + 1) // 2};partition:1,offset:{RECORDS // 2}"
    metadata = (tmp_path / "checkpoints" / "insert-into_default_catalog.default_database."
                "kafka_sink" / "metadata")
    command = [sys.executable, JOB, bootstrap, in_topic, out_topic,
               str(tmp_path / "checkpoints"), offsets]
    # 15 batches of 20 offsets per partition; kills land 0-200 ms after a batch committed
    run_with_kills(command, metadata, random.Random(5).sample(range(1, 13), 5), seed=5)
    rows = [json.loads(v) for v in read_values(bootstrap, out_topic)]
    assert sorted((r["k"], r["v"]) for r in rows) == sorted(
        (f"k{i % 7}", i) for i in range(RECORDS))
