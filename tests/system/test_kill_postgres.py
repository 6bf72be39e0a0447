"""Files -> keyed state -> PostgreSQL, killed with SIGKILL at random points and restarted
until it finishes: the table holds exactly the rows of a failure-free run."""
import os
import random
import sys

from tests.postgres_server import PASSWORD, USER
from tests.system.crash import check_counted_once, run_with_kills

JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "pg_crash_job.py")


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
    command = [sys.executable, JOB, str(tmp_path / "in"), str(tmp_path / "checkpoints"),
               postgres_db.url, USER, PASSWORD]
    # (the job runs ~30 batches)
    run_with_kills(command, metadata, random.Random(5).sample(range(1, 8), 2), seed=5)

    rows = postgres_db.query("SELECT k, n, v FROM counts")
    check_counted_once(rows, [(key, int(value))
                              for key, value in (line.split(",") for line in lines)])
