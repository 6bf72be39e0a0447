"""The Spark session as a PyFlink program's client sees it."""
import logging
import os
import subprocess
import sys
import textwrap

from engine.executor.spark import _quiet_client_loggers

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))

PROGRAM = textwrap.dedent("""
    import logging, sys
    logging.basicConfig(stream=sys.stdout, level=logging.INFO)
    from api.datastream import StreamExecutionEnvironment
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    logging.getLogger("user").info("my own line")
    env.from_collection([1, 2]).map(lambda x: x * 10).print()
    env.execute("logging")
""")


def run_program() -> str:
    result = subprocess.run([sys.executable, "-c", PROGRAM], cwd=ROOT,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_client_libraries_stay_quiet_on_a_stdout_logging_program():
    # PyFlink: a program logging to stdout at INFO sees its own lines and its job's
    # output, and nothing from the client libraries (py4j, Spark).
    assert run_program().splitlines() == ["INFO:user:my own line", "10", "20"]


def test_a_level_the_user_set_on_a_client_logger_is_kept():
    py4j, pyspark = logging.getLogger("py4j"), logging.getLogger("pyspark")
    saved = py4j.level, pyspark.level
    try:
        py4j.setLevel(logging.INFO)
        pyspark.setLevel(logging.NOTSET)
        _quiet_client_loggers()
        assert (py4j.level, pyspark.level) == (logging.INFO, logging.WARNING)
    finally:
        py4j.setLevel(saved[0])
        pyspark.setLevel(saved[1])


def test_the_sessions_jvm_compiles_with_its_quick_compiler_only(spark):
    # Its optimizing compiler would compete with the Python tasks for the cores.
    runtime = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
    assert "-XX:TieredStopAtLevel=1" in list(runtime.getInputArguments())


def test_python_workers_talk_to_the_jvm_over_unix_sockets(spark):
    # Over TCP, every task waited ~40 ms for its input (delayed acknowledgements).
    assert spark.conf.get("spark.python.unix.domain.socket.enabled") == "true"
    assert spark.sparkContext.parallelize([1, 2], 2).map(lambda x: x * 10).collect() == [10, 20]
