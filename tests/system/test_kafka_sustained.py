"""EXACTLY_ONCE Kafka -> keyed count -> Kafka on Spark (parallelism 2) while a producer
offers 5,000 records/s for 60 s: every record reaches the output once, and no producer
is fenced (a subtask's commits run in its host, the one owner of its transactional id).
How fast results come is measured in benchmarks/, not here."""
import os
import signal
import subprocess
import sys
import tempfile
import time

from benchmarks.kafka_broker import CLIENT_LOG, create_topic, read_values, unique_topic
from tests.system.crash import ROOT, check_counted_once

JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kafka_crash_job.py")
RATE = 5_000
SECONDS = 60


def value(i: int) -> str:
    return f"k{i * 7 % 13},{i}"


def offer(bootstrap: str, topic: str, count: int, rate: int) -> None:
    """Produces record ``i`` to partition ``i % 2`` at ``rate`` records/s; each
    partition's last record alone, once the others are in (Tansu's high watermark then
    shows them all)."""
    from confluent_kafka import Producer
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 5,
                         "logger": CLIENT_LOG})
    started = time.monotonic()
    for i in range(count - 2):
        producer.produce(topic, value(i).encode(), partition=i % 2)
        if i % 100 == 99:
            producer.poll(0)
            time.sleep(max(0.0, started + (i + 1) / rate - time.monotonic()))
    assert producer.flush(60) == 0
    for i in (count - 2, count - 1):
        producer.produce(topic, value(i).encode(), partition=i % 2)
    assert producer.flush(60) == 0


def test_exactly_once_holds_at_a_sustained_rate(tmp_path, kafka_broker):
    bootstrap = kafka_broker.bootstrap
    count = RATE * SECONDS
    in_topic = create_topic(bootstrap, unique_topic("sustained-in"), 2)
    out_topic = create_topic(bootstrap, unique_topic("sustained-out"), 2)
    ends = f"0:{count // 2},1:{count // 2}"
    with tempfile.TemporaryFile() as log:
        job = subprocess.Popen(
            [sys.executable, JOB, bootstrap, in_topic, out_topic, str(tmp_path / "checkpoints"),
             ends, "spark", "5000"], cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
            stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
        try:
            offer(bootstrap, in_topic, count, RATE)
            job.wait(timeout=300)
        finally:
            if job.poll() is None:  # (the job, its Spark JVM and workers)
                os.killpg(job.pid, signal.SIGKILL)
        log.seek(0)
        stderr = log.read().decode(errors="replace")
    assert job.returncode == 0, stderr[-3000:]
    rows = [(k, int(n), int(v)) for k, n, v in
            (line.split(",") for line in read_values(bootstrap, out_topic))]
    check_counted_once(rows, [(value(i).split(",")[0], i) for i in range(count)])
    assert "fenced" not in stderr
