"""The filesystem SQL connector against PyFlink 2.3.0 (``sql_filesystem_job.py``: csv
and json read, written as part files and read back), and in parquet, and its option
errors."""
import os

import pytest

from api.table import EnvironmentSettings, StreamTableEnvironment
from api.datastream import StreamExecutionEnvironment
from tests.api.table.oracle import run_job

JOB = os.path.join(os.path.dirname(__file__), "sql_filesystem_job.py")
PARTITIONED_JOB = os.path.join(os.path.dirname(__file__), "sql_partitioned_job.py")
PARTITIONED_OUTPUT = os.path.join(os.path.dirname(__file__),
                                  "sql_partitioned_pyflink_2_3_0.txt")
ROLLING_JOB = os.path.join(os.path.dirname(__file__), "sql_rolling_job.py")
ROLLING_OUTPUT = os.path.join(os.path.dirname(__file__), "sql_rolling_pyflink_2_3_0.txt")

PYFLINK_2_3_0_OUTPUT = r"""csv_in <Row(1, 'alice', 1.5, True, Decimal('12.30'), datetime.date(2024, 1, 2), datetime.datetime(2024, 1, 2, 10, 11, 12, 345000))>
csv_in <Row(2, 'bob, jr', 2.0, False, Decimal('0.05'), datetime.date(2024, 2, 3), datetime.datetime(2024, 2, 3, 0, 0))>
csv_in <Row(3, '', None, False, None, None, None)>
csv_in <Row(None, 'bad', 1.0, True, Decimal('1.00'), datetime.date(2024, 1, 1), datetime.datetime(2024, 1, 1, 0, 0))>
json_in <Row(1, 'alice', 1.5, True, Decimal('12.30'), datetime.date(2024, 1, 2), datetime.datetime(2024, 1, 2, 10, 11, 12, 345000))>
json_in <Row(2, 'bob "q"', 2.0, False, Decimal('0.05'), datetime.date(2024, 2, 3), datetime.datetime(2024, 2, 3, 0, 0))>
json_in <Row(3, None, None, None, None, None, None)>
csv_out ['part']
1;alice;1.5;true;12.3;"2024-01-02";"2024-01-02 10:11:12.345"
2;"bob, jr";2.0;false;0.05;"2024-02-03";"2024-02-03 00:00:00"
3;;;false;;;
json_out ['part']
{"id":1,"name":"alice","score":1.5,"ok":true,"amount":12.3,"d":"2024-01-02","ts":"2024-01-02 10:11:12.345"}
{"id":2,"name":"bob \"q\"","score":2.0,"ok":false,"amount":0.05,"d":"2024-02-03","ts":"2024-02-03 00:00:00"}
{"id":3,"name":null,"score":null,"ok":null,"amount":null,"d":null,"ts":null}
csv_back <Row(1, 'alice', Decimal('12.30'), datetime.datetime(2024, 1, 2, 10, 11, 12, 345000))>
csv_back <Row(2, 'bob, jr', Decimal('0.05'), datetime.datetime(2024, 2, 3, 0, 0))>
csv_back <Row(3, '', None, None)>
json_back <Row(1, 'alice', Decimal('12.30'), datetime.datetime(2024, 1, 2, 10, 11, 12, 345000))>
json_back <Row(2, 'bob "q"', Decimal('0.05'), datetime.datetime(2024, 2, 3, 0, 0))>
json_back <Row(3, None, None, None)>
missing path: True
"""


def test_filesystem_tables_read_and_write_what_pyflink_does(spark, capsys, monkeypatch):
    assert run_job(JOB, capsys, monkeypatch) == PYFLINK_2_3_0_OUTPUT


def test_partitioned_tables_write_and_read_directories_as_pyflink_does(spark, capsys,
                                                                      monkeypatch):
    with open(PARTITIONED_OUTPUT) as f:
        expected = f.read()
    assert run_job(PARTITIONED_JOB, capsys, monkeypatch) == expected


def test_part_files_roll_by_file_size_as_pyflink_does(spark, capsys, monkeypatch):
    with open(ROLLING_OUTPUT) as f:
        expected = f.read()
    assert run_job(ROLLING_JOB, capsys, monkeypatch) == expected


def test_parquet_part_files_roll_by_file_size(spark, tmp_path):
    t_env = _t_env()
    t_env.execute_sql(f"CREATE TABLE pq (id BIGINT, name STRING) WITH ('connector' = "
                      f"'filesystem', 'path' = '{tmp_path}/pq', 'format' = 'parquet', "
                      "'sink.parallelism' = '1', 'sink.rolling-policy.file-size' = '1 b')")
    t_env.execute_sql("INSERT INTO pq VALUES (1, 'a'), (2, 'b'), (3, 'c')").wait()
    assert len(os.listdir(tmp_path / "pq")) == 3  # a file larger than 1 byte rolls
    with t_env.execute_sql("SELECT * FROM pq").collect() as result:
        assert sorted(tuple(r) for r in result) == [(1, 'a'), (2, 'b'), (3, 'c')]


def test_partitioned_parquet_table_reads_null_partitions_and_escaped_names(spark, tmp_path):
    # Flink's documents: a NULL or empty partition value is written, and read back, as the
    # default partition name (PyFlink 2.3.0 fails reading one back: "Path should not be
    # null or empty")
    t_env = _t_env()
    t_env.execute_sql(f"CREATE TABLE pq (id BIGINT, tag STRING, ok BOOLEAN, d DATE) "
                      f"PARTITIONED BY (tag, ok) WITH ('connector' = 'filesystem', "
                      f"'path' = '{tmp_path}/pq', 'format' = 'parquet')")
    rows = [(1, 'a/b=c', True, '2024-01-02'), (2, None, False, None), (3, '', None, None),
            (4, 'a/b=c', True, '2024-01-03')]
    t_env.execute_sql("INSERT INTO pq VALUES " + ", ".join(
        f"({i}, {'NULL' if t is None else repr(t)}, {'NULL' if ok is None else ok}, "
        f"{'NULL' if d is None else 'DATE ' + repr(d)})" for i, t, ok, d in rows)).wait()
    directories = sorted(os.path.relpath(root, tmp_path / "pq")
                         for root, _, files in os.walk(tmp_path / "pq") if files)
    assert directories == ["tag=__DEFAULT_PARTITION__/ok=__DEFAULT_PARTITION__",
                           "tag=__DEFAULT_PARTITION__/ok=false", "tag=a%2Fb%3Dc/ok=true"]
    with t_env.execute_sql("SELECT * FROM pq").collect() as result:
        back = sorted(tuple(r) for r in result)
    import datetime
    assert back == [(1, 'a/b=c', True, datetime.date(2024, 1, 2)), (2, None, False, None),
                    (3, None, None, None), (4, 'a/b=c', True, datetime.date(2024, 1, 3))]


def test_partition_keys_fail_when_the_table_is_created(spark, tmp_path):
    t_env = _t_env()
    with pytest.raises(ValueError, match=r"Partition column 'b' not defined in the table "
                                         r"schema. Available columns: \['a'\]"):
        t_env.execute_sql(f"CREATE TABLE t (a INT) PARTITIONED BY (b) WITH ("
                          f"'connector' = 'filesystem', 'path' = '{tmp_path}', "
                          "'format' = 'csv')")
    with pytest.raises(NotImplementedError, match="partition column 'ts' is TIMESTAMP"):
        t_env.execute_sql(f"CREATE TABLE t (a INT, ts TIMESTAMP(3)) PARTITIONED BY (ts) "
                          f"WITH ('connector' = 'filesystem', 'path' = '{tmp_path}', "
                          "'format' = 'csv')")
    with pytest.raises(NotImplementedError, match="PARTITIONED BY is not available for the "
                                                  "'print' connector"):
        t_env.execute_sql("CREATE TABLE t (a INT) PARTITIONED BY (a) WITH "
                          "('connector' = 'print')")


def _t_env():
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(2)
    return StreamTableEnvironment.create(env, environment_settings=EnvironmentSettings
                                         .in_streaming_mode())


def test_parquet_part_files_are_written_and_read_back(spark, tmp_path):
    t_env = _t_env()
    columns = "id BIGINT, name STRING, price DECIMAL(8, 2), ts TIMESTAMP(3)"
    t_env.execute_sql(f"CREATE TABLE src ({columns}) WITH ('connector' = 'filesystem', "
                      f"'path' = '{tmp_path}/in.csv', 'format' = 'csv')")
    (tmp_path / "in.csv").write_text("".join(
        f"{i},n{i},{i}.5,2024-01-01 00:00:{i:02d}.25\n" for i in range(10)))
    t_env.execute_sql(f"CREATE TABLE pq ({columns}) WITH ('connector' = 'filesystem', "
                      f"'path' = '{tmp_path}/pq', 'format' = 'parquet')")
    t_env.execute_sql("INSERT INTO pq SELECT * FROM src").wait()
    parts = os.listdir(tmp_path / "pq")
    assert parts and all(p.startswith("part-") for p in parts)
    with t_env.execute_sql("SELECT id, name, price, ts FROM pq").collect() as rows:
        back = sorted(tuple(r) for r in rows)
    import datetime
    from decimal import Decimal
    assert back == [(i, f"n{i}", Decimal(f"{i}.50"),
                     datetime.datetime(2024, 1, 1, 0, 0, i, 250000)) for i in range(10)]


def test_filesystem_options_fail_when_the_table_is_created(spark, tmp_path):
    t_env = _t_env()
    with pytest.raises(ValueError, match=r"Unsupported options found for 'filesystem'.*"
                                         r"Unsupported options: csv.nope"):
        t_env.execute_sql(f"CREATE TABLE t (a INT) WITH ('connector' = 'filesystem', "
                          f"'path' = '{tmp_path}', 'format' = 'csv', 'csv.nope' = '1')")
    with pytest.raises(ValueError, match="Missing required options are: format"):
        t_env.execute_sql(f"CREATE TABLE t (a INT) WITH ('connector' = 'filesystem', "
                          f"'path' = '{tmp_path}')")
    with pytest.raises(ValueError, match="format factory for identifier 'avro'"):
        t_env.execute_sql(f"CREATE TABLE t (a INT) WITH ('connector' = 'filesystem', "
                          f"'path' = '{tmp_path}', 'format' = 'avro')")
    with pytest.raises(ValueError, match="'yes' for key 'json.ignore-parse-errors'"):
        t_env.execute_sql(f"CREATE TABLE t (a INT) WITH ('connector' = 'filesystem', "
                          f"'path' = '{tmp_path}', 'format' = 'json', "
                          "'json.ignore-parse-errors' = 'yes')")
