"""The Table bridge against PyFlink 2.3.0: ``oracle_table_job.py`` runs unchanged on both
(``python oracle_table_job.py pyflink`` in a venv with apache-flink==2.3.0, where this
file's expected output was recorded); schemas, printed rows, collected rows, append and
retract streams and an aggregation must match. Lines of the two print sinks of one job
may interleave in any order, so the job's printed lines are compared as a multiset and
the rest in order."""
import os
import subprocess
import sys

PYFLINK_2_3_0_OUTPUT = """\
(
  `f0` INT NOT NULL,
  `f1` STRING,
  `f2` BIGINT NOT NULL
)
root
 |-- f0: INT NOT NULL
 |-- f1: STRING
 |-- f2: BIGINT NOT NULL

(
  `id` INT,
  `name` STRING,
  `v` BIGINT
)
(
  `name` STRING,
  `v` BIGINT
)
+I[b,20]
+I[a,30]
["<Row('b', 20)>", "<Row('a', 30)>"]
(true,+I[b, 20])
(true,+I[a, 30])
+I[b,20]
+I[a,30]
(
  `name` STRING,
  `c` BIGINT NOT NULL
)
["<Row('a', 2)>", "<Row('b', 1)>"]
"""

JOB = os.path.join(os.path.dirname(__file__), "oracle_table_job.py")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))


def _sections(text: str):
    """(schema and collected lines in order, printed rows as a sorted list)."""
    lines = text.splitlines()
    printed = [line for line in lines if line.startswith(("+I[", "(true,"))]
    return [line for line in lines if line not in printed], sorted(printed)


def test_the_table_bridge_prints_what_pyflink_prints():
    done = subprocess.run([sys.executable, JOB, "api"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env=dict(os.environ, PYTHONPATH=ROOT))
    assert done.returncode == 0, done.stderr[-3000:]
    assert _sections(done.stdout) == _sections(PYFLINK_2_3_0_OUTPUT)
