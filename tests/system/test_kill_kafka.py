"""Kafka -> keyed state -> Kafka (EXACTLY_ONCE), killed with SIGKILL at random points and
restarted until it finishes: the output topic, read read_committed, holds exactly the
records of a failure-free run, on a broker (Tansu) that does not hide aborted
transactions."""
import os
import random
import subprocess
import sys
import time
from collections import Counter

from tests.kafka_broker import create_topic, produce_many, read_values, unique_topic

JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kafka_crash_job.py")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(JOB)))
RECORDS = 600


def value(i: int) -> str:
    return f"k{i * 7 % 13},{i}"


def test_a_killed_kafka_job_writes_every_record_once(tmp_path, kafka_broker):
    bootstrap = kafka_broker.bootstrap
    in_topic = create_topic(bootstrap, unique_topic("crash-in"), 2)
    out_topic = create_topic(bootstrap, unique_topic("crash-out"), 2)
    produce_many(bootstrap, in_topic, RECORDS, value)  # record i in partition i % 2
    ends = f"0:{(RECORDS + 1) // 2},1:{RECORDS // 2}"
    metadata = tmp_path / "checkpoints" / "kafka-crash-job" / "metadata"

    def start():
        return subprocess.Popen(
            [sys.executable, JOB, bootstrap, in_topic, out_topic,
             str(tmp_path / "checkpoints"), ends],
            cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def committed():
        return max((int(n) for n in os.listdir(metadata) if n.isdigit()), default=-1) \
            if metadata.exists() else -1

    rng = random.Random(3)
    for batch_id in sorted(rng.sample(range(1, 10), 3)):  # the job runs ~15 batches
        process = start()
        while committed() < batch_id:
            assert process.poll() is None, process.stderr.read().decode()
            time.sleep(0.005)
        time.sleep(rng.uniform(0, 0.3))
        assert process.poll() is None, "the job ended before it was killed"
        process.kill()
        process.wait()
    process = start()
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr.decode()

    out = [line.split(",") for line in read_values(bootstrap, out_topic)]
    assert len(out) == RECORDS
    # every input record once, and each key's counts 1..n once
    assert Counter((k, int(v)) for k, _, v in out) == Counter(
        (value(i).split(",")[0], i) for i in range(RECORDS))
    per_key = Counter(value(i).split(",")[0] for i in range(RECORDS))
    assert sorted((k, int(n)) for k, n, _ in out) == sorted(
        (k, n) for k, count in per_key.items() for n in range(1, count + 1))
