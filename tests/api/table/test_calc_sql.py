"""Projections and filters in STREAMING mode (Flink's Calc, ``stream_sql.on_stream``):
``calc_sql_job.py`` against what PyFlink 2.3.0 printed for it, the same rows at any
parallelism and micro-batch size, an unbounded Kafka table filtered and projected into
another by INSERT INTO, and plan-time errors of what has no evaluation on a stream."""
import json
import os
import subprocess
import sys
import time

import pytest

from api.common import Types, WatermarkStrategy
from api.datastream.connectors.datagen import DataGeneratorSource
from api.table import EnvironmentSettings, StreamTableEnvironment
from api.table.expressions import col
from benchmarks.kafka_broker import create_topic, produce, read_messages, unique_topic
from tests.api.table.oracle import run_job
from tests.conftest import make_env

HERE = os.path.dirname(__file__)
JOB = os.path.join(HERE, "calc_sql_job.py")

with open(os.path.join(HERE, "calc_sql_pyflink_2_3_0.txt")) as f:
    PYFLINK_2_3_0_OUTPUT = f.read()  # what calc_sql_job.py printed on PyFlink 2.3.0


def test_projections_and_filters_print_what_pyflink_prints(capsys, monkeypatch):
    assert run_job(JOB, capsys, monkeypatch) == PYFLINK_2_3_0_OUTPUT


def _t_env(parallelism=1, micro_batch_size=100_000):
    env = make_env("local", parallelism=parallelism, micro_batch_size=micro_batch_size)
    return env, StreamTableEnvironment.create(
        env, environment_settings=EnvironmentSettings.in_streaming_mode())


ROWS = [('w%d' % (i % 7), i * 37 % 23 - 11) for i in range(60)]


@pytest.mark.parametrize("parallelism,micro_batch_size", [(1, 1), (2, 1), (2, 100_000)])
def test_the_rows_are_the_same_at_any_parallelism_and_batch_size(parallelism,
                                                                  micro_batch_size):
    env, t_env = _t_env(parallelism, micro_batch_size)
    stream = env.from_collection(ROWS, Types.ROW_NAMED(['name', 'v'],
                                                       [Types.STRING(), Types.INT()]))
    t_env.create_temporary_view('t', stream)
    table = t_env.sql_query("SELECT UPPER(name) AS n, v * 2 AS d FROM t WHERE v > 0")
    assert table._changelog is not None  # planned on the stream
    with table.execute().collect() as rows:
        assert sorted(tuple(r) for r in rows) == sorted(
            (n.upper(), v * 2) for n, v in ROWS if v > 0)
    api = t_env.from_path('t').where(col('v') < 0).select(col('name'), (-col('v')).alias('m'))
    assert api._changelog is not None
    with api.execute().collect() as rows:
        assert sorted(tuple(r) for r in rows) == sorted((n, -v) for n, v in ROWS if v < 0)


def test_what_has_no_evaluation_on_an_unbounded_stream_fails_when_planned():
    env, t_env = _t_env()
    t_env.create_temporary_view('g', env.from_source(
        DataGeneratorSource(lambda i: i, count=None, type_info=Types.INT()),
        WatermarkStrategy.no_watermarks(), "gen"), 'v')
    with pytest.raises(NotImplementedError, match="SUBSTRING.*not supported in STREAMING"):
        t_env.sql_query("SELECT SUBSTRING(CAST(v AS STRING), 1, 2) FROM g WHERE v > 0")


def test_the_rows_of_an_unbounded_table_are_collected_as_they_come():
    env, t_env = _t_env(micro_batch_size=10)
    t_env.create_temporary_view('g', env.from_source(
        DataGeneratorSource(lambda i: i, count=None, type_info=Types.INT()),
        WatermarkStrategy.no_watermarks(), "gen"), 'v')
    result = t_env.sql_query("SELECT v + 1 AS w FROM g WHERE v > 0").execute()
    with result.collect() as rows:  # leaving the block cancels the job
        assert [tuple(next(rows)) for _ in range(25)] == [(w,) for w in range(2, 27)]
    assert list(rows) == []
    # also all its columns, by SELECT * or the table itself
    for table in (t_env.sql_query("SELECT * FROM g"), t_env.from_path('g')):
        with table.execute().collect() as rows:
            assert [tuple(next(rows)) for _ in range(5)] == [(v,) for v in range(5)]


_UNBOUNDED_INSERT = """
import sys
from api.datastream import StreamExecutionEnvironment
from api.table import EnvironmentSettings, StreamTableEnvironment
env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(2)
t_env = StreamTableEnvironment.create(env, environment_settings=EnvironmentSettings
                                      .in_streaming_mode())
bootstrap, source, sink = sys.argv[1:]
t_env.execute_sql("CREATE TABLE kafka_source (name STRING, v INT) WITH ('connector' = 'kafka', "
                  f"'topic' = '{source}', 'properties.bootstrap.servers' = '{bootstrap}', "
                  "'properties.group.id' = 'calc', 'scan.startup.mode' = 'earliest-offset', "
                  "'format' = 'json')")
t_env.execute_sql("CREATE TABLE kafka_sink (name STRING, v INT) WITH ('connector' = 'kafka', "
                  f"'topic' = '{sink}', 'properties.bootstrap.servers' = '{bootstrap}', "
                  "'format' = 'json')")
t_env.execute_sql("INSERT INTO kafka_sink SELECT UPPER(name), v * 2 FROM kafka_source "
                  "WHERE v > 0")
"""


def test_an_insert_of_a_filtered_unbounded_kafka_table_runs_on_the_stream(kafka_broker,
                                                                          tmp_path):
    bootstrap = kafka_broker.bootstrap
    source, sink = (create_topic(bootstrap, unique_topic(p), 2) for p in ('calc-in',
                                                                           'calc-out'))
    produce(bootstrap, source, [json.dumps({'name': n, 'v': v}) for n, v in ROWS[:20]])
    program = tmp_path / 'insert.py'
    program.write_text(_UNBOUNDED_INSERT)
    job = subprocess.Popen([sys.executable, str(program), bootstrap, source, sink],
                           env=dict(os.environ, PYTHONPATH=os.getcwd()),
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        def written(count):
            """The sink's rows once it has ``count`` of them (while the job runs)."""
            deadline = time.monotonic() + 240
            while time.monotonic() < deadline:
                assert job.poll() is None, job.stderr.read().decode()[-3000:]
                rows = [json.loads(m.value()) for m in read_messages(bootstrap, sink)]
                if len(rows) >= count:
                    return sorted((r['name'], r['v']) for r in rows)
                time.sleep(2)
            raise AssertionError(f"the sink has fewer than {count} rows")

        def expected(rows):
            return sorted((n.upper(), v * 2) for n, v in rows if v > 0)
        assert written(len(expected(ROWS[:20]))) == expected(ROWS[:20])
        # rows arriving while the job runs, one record batch each
        produce(bootstrap, source, [json.dumps({'name': n, 'v': v}) for n, v in ROWS[20:]])
        assert written(len(expected(ROWS))) == expected(ROWS)
    finally:
        job.kill()
        job.wait()
