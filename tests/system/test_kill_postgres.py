"""Files -> keyed state -> PostgreSQL, killed with SIGKILL at random points and restarted
until it finishes: the table holds exactly the rows of a failure-free run."""
import os
import random
import subprocess
import sys
import time
from collections import Counter

from tests.postgres_server import PASSWORD, USER

JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pg_crash_job.py")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(JOB)))


def write_inputs(directory, seed=11):
    """Three files of ``key,value`` lines; returns the lines."""
    rng = random.Random(seed)
    os.makedirs(directory)
    lines = []
    for f in range(3):
        part = [f"k{rng.randrange(12)},{rng.randrange(1000)}" for _ in range(300)]
        with open(os.path.join(directory, f"part-{f}.csv"), "w") as out:
            out.write("\n".join(part) + "\n")
        lines += part
    return lines


def test_a_killed_file_to_postgres_job_writes_every_row_once(tmp_path, postgres_db):
    lines = write_inputs(tmp_path / "in")
    postgres_db.execute("CREATE TABLE counts (k TEXT, n INT, v INT)")
    metadata = tmp_path / "checkpoints" / "pg-crash-job" / "metadata"

    def start():
        return subprocess.Popen(
            [sys.executable, JOB, str(tmp_path / "in"), str(tmp_path / "checkpoints"),
             postgres_db.url, USER, PASSWORD],
            cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def committed():
        return max((int(n) for n in os.listdir(metadata) if n.isdigit()), default=-1) \
            if metadata.exists() else -1

    rng = random.Random(5)
    for batch_id in sorted(rng.sample(range(1, 8), 2)):  # the job runs ~30 batches
        process = start()
        while committed() < batch_id:
            assert process.poll() is None, process.stderr.read().decode()
            time.sleep(0.005)
        time.sleep(rng.uniform(0, 0.2))
        assert process.poll() is None, "the job ended before it was killed"
        process.kill()
        process.wait()
    process = start()
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr.decode()

    rows = postgres_db.query("SELECT k, n, v FROM counts")
    assert len(rows) == len(lines)
    # every record once: its key and value, and each key's counts 1..n exactly once
    assert Counter((k, v) for k, _, v in rows) == Counter(
        (key, int(value)) for key, value in (line.split(",") for line in lines))
    per_key = Counter(line.split(",")[0] for line in lines)
    assert sorted((k, n) for k, n, _ in rows) == sorted(
        (k, n) for k, count in per_key.items() for n in range(1, count + 1))
