"""A job program runs unchanged under ``spark-submit``, on the master spark-submit gives."""
import os
import subprocess
import sys

PROGRAM = """
from pyspark.sql import SparkSession
from api.datastream import StreamExecutionEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
env.from_collection([1, 2, 3]).map(lambda x: x * 10).print()
env.execute("submitted")
print("master:", SparkSession.getActiveSession().sparkContext.master)
"""


def test_a_job_program_runs_under_spark_submit_on_its_master(tmp_path):
    program = tmp_path / "submitted.py"
    program.write_text(PROGRAM)
    spark_submit = os.path.join(os.path.dirname(sys.executable), "spark-submit")
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable)
    result = subprocess.run([spark_submit, "--master", "local[1]", str(program)],
                            capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.splitlines() == ["10", "20", "30", "master: local[1]"]
