"""JdbcSink on PostgreSQL and SQLite through the sink protocol: rows staged by the writer,
delivered by the committer in one transaction per batch and subtask, exactly once."""
import datetime
import os
import sqlite3
import sys
import threading
import time
from decimal import Decimal

import pytest

from api.common import Row, Types, WatermarkStrategy
from api.datastream import RuntimeExecutionMode
from api.datastream.connectors import NumberSequenceSource
from api.common.typeinfo import LocalTimeTypeInfo
from api.datastream.connectors.jdbc import (JdbcConnectionOptions, JdbcExecutionOptions,
                                            JdbcSink)
from engine.io.jdbc import (COMMITS_TABLE, SqliteDatabase, count_placeholders,
                                    format_placeholders)
from engine.errors import JobExecutionException, OperatorError
from engine.io.sinks import CommitterContext, WriterContext
from tests.conftest import make_env
from tests.postgres_server import free_port

ROW = Types.ROW([Types.INT(), Types.STRING()])
JOB = "orders-job"
SINK_ID = "sink-jdbc"


def sqlite_options(path) -> JdbcConnectionOptions:
    return JdbcConnectionOptions.JdbcConnectionOptionsBuilder() \
        .with_url(f"jdbc:sqlite:{path}").build()


def sqlite_rows(path, table: str = "t") -> list:
    with sqlite3.connect(path) as connection:
        return connection.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()


def make_sink(sql, options, type_info=ROW, batch_size=5000, max_retries=3):
    execution = JdbcExecutionOptions.builder().with_batch_size(batch_size) \
        .with_max_retries(max_retries).build()
    return JdbcSink.sink(sql, type_info, options, execution).engine_sink(type_info)


class Harness:
    """Drives an engine sink as the engine does: a writer per subtask and batch, then the
    committer once the batch is committed."""

    def __init__(self, sink, staging_dir, job_name=JOB):
        self.sink = sink
        self.staging_dir = str(staging_dir)
        self.job_name = job_name
        self.committer = self.open_committer()

    def open_committer(self):
        committer = self.sink.create_committer()
        committer.open(CommitterContext(self.job_name, SINK_ID, self.staging_dir))
        return committer

    def stage(self, batch_id, records, subtask=0):
        writer = self.sink.create_writer(WriterContext(
            self.job_name, "run-1", SINK_ID, subtask, 2, batch_id, self.staging_dir))
        writer.write(records)
        return writer.prepare_commit()

    def run_batch(self, batch_id, records, subtask=0):
        self.committer.commit(batch_id, subtask, self.stage(batch_id, records, subtask))


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path):
    """A table t (id INTEGER PRIMARY KEY, name TEXT NOT NULL) in a fresh database:
    ``(options, read_rows(), run_sql(sql))``."""
    ddl = "CREATE TABLE t (id INTEGER PRIMARY KEY, name VARCHAR(20) NOT NULL)"
    if request.param == "sqlite":
        path = tmp_path / "test.db"
        with sqlite3.connect(path) as connection:
            connection.execute(ddl)

        def run_sql(sql):
            with sqlite3.connect(path) as connection:
                return connection.execute(sql).fetchall()
        return sqlite_options(path), lambda: sqlite_rows(path), run_sql
    db = request.getfixturevalue("postgres_db")
    db.execute(ddl)
    return db.connection_options(), lambda: db.rows("t"), db.query


def test_a_batch_delivered_twice_is_written_once(database, tmp_path):
    options, read_rows, run_sql = database
    harness = Harness(make_sink("INSERT INTO t (id, name) VALUES (?, ?)", options),
                      tmp_path / "staging")
    harness.run_batch(0, [Row(1, "a"), Row(2, "b")])
    harness.run_batch(1, [Row(3, "c")], subtask=1)
    # A retried commit task, or a recovery after a crash before the staged file was removed.
    harness.committer.deliver(0, 0, [(1, "a"), (2, "b")])
    path = harness.stage(1, [Row(3, "c")], subtask=1)
    harness.committer.commit(1, 1, path)
    assert read_rows() == [(1, "a"), (2, "b"), (3, "c")]
    assert sorted(run_sql(f"SELECT subtask, batch_id FROM {COMMITS_TABLE}")) == [(0, 0), (1, 1)]
    assert not os.listdir(tmp_path / "staging")  # delivered files are removed


def test_concurrent_deliveries_of_one_batch_write_it_once(postgres_db, tmp_path):
    postgres_db.execute("CREATE TABLE t (id INTEGER, name TEXT)")  # no key: duplicates show
    sink = make_sink("INSERT INTO t (id, name) VALUES (?, ?)", postgres_db.connection_options())
    committers = [Harness(sink, tmp_path).committer for _ in range(4)]
    rows = [(i, "x") for i in range(500)]
    threads = [threading.Thread(target=c.deliver, args=(7, 0, rows)) for c in committers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert postgres_db.query("SELECT count(*), count(DISTINCT id) FROM t") == [(500, 500)]


class ChunkRecordingSqlite(SqliteDatabase):
    """SQLite, recording the size of each executemany."""
    chunks: list = []

    def connect(self):
        connection = super().connect()
        chunks = self.chunks

        class Cursor:
            def __init__(self):
                self.cursor = connection.cursor()

            def __getattr__(self, name):
                return getattr(self.cursor, name)

            def executemany(self, sql, rows):
                chunks.append(len(rows))
                return self.cursor.executemany(sql, rows)

        class Connection:
            def __getattr__(self, name):
                return getattr(connection, name)

            def cursor(self):
                return Cursor()
        return Connection()


def test_rows_are_sent_in_chunks_of_the_batch_size(tmp_path):
    path = tmp_path / "test.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (id INTEGER, name TEXT)")
    sink = make_sink("INSERT INTO t VALUES (?, ?)", sqlite_options(path), batch_size=4)
    sink.database = ChunkRecordingSqlite(f"jdbc:sqlite:{path}")
    Harness(sink, tmp_path / "staging").run_batch(0, [Row(i, "x") for i in range(10)])
    assert ChunkRecordingSqlite.chunks == [4, 4, 2]
    assert len(sqlite_rows(path)) == 10


def test_a_rejected_row_rolls_the_batch_back_and_names_the_row(database, tmp_path):
    options, read_rows, run_sql = database
    harness = Harness(make_sink("INSERT INTO t (id, name) VALUES (?, ?)", options, batch_size=2),
                      tmp_path / "staging")
    harness.run_batch(0, [Row(1, "a")])
    path = harness.stage(1, [Row(2, "b"), Row(3, "c"), Row(1, "again"), Row(4, "d")])
    with pytest.raises(OperatorError) as failure:
        harness.committer.commit(1, 0, path)
    message = str(failure.value)
    assert f"JdbcSink {SINK_ID}" in message
    assert "row (1, 'again') (batch 1, subtask 0; nothing of this batch was written)" in message
    assert "UNIQUE constraint failed: t.id" in message or \
        'duplicate key value violates unique constraint "t_pkey"' in message
    assert read_rows() == [(1, "a")]  # the committed batch stays, nothing of batch 1
    assert sorted(run_sql(f"SELECT batch_id FROM {COMMITS_TABLE}")) == [(0,)]
    assert os.path.exists(path)  # a restart delivers it again


def test_a_row_of_the_wrong_type_for_its_column_names_the_row(postgres_db, tmp_path):
    postgres_db.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, name VARCHAR(3))")
    harness = Harness(make_sink("INSERT INTO t VALUES (?, ?)", postgres_db.connection_options()),
                      tmp_path)
    with pytest.raises(OperatorError, match=r"failed on row \(2, 'toolong'\).*"
                                            r"value too long for type character varying\(3\)"):
        harness.run_batch(0, [Row(1, "ok"), Row(2, "toolong")])
    assert postgres_db.rows("t") == []


def test_fields_are_taken_by_position_whatever_their_names(database, tmp_path):
    options, read_rows, _ = database
    Harness(make_sink("INSERT INTO t (id, name) VALUES (?, ?)", options), tmp_path) \
        .run_batch(0, [Row(id=1, name="a"), Row(name=2, id="b"), (3, "c"), [4.9, "d"]])
    assert read_rows() == [(1, "a"), (2, "b"), (3, "c"), (4, "d")]


@pytest.mark.parametrize("record, error", [
    (Row("one", "a"), r"<Row\('one', 'a'\)>: TypeError: Integer expects int, got str"),
    (Row(1, "a", "x"), r"<Row\(1, 'a', 'x'\)>: ValueError: JdbcSink expects 2 fields"),
    ("1,a", r"'1,a': TypeError: JdbcSink expects a Row for RowTypeInfo\(Integer, String\), "
            r"got str"),
])
def test_a_record_that_does_not_fit_the_row_type_fails_the_job(tmp_path, record, error):
    env = make_env("local")
    env.from_collection([Row(1, "a"), record]) \
        .add_sink(JdbcSink.sink("INSERT INTO t VALUES (?, ?)", ROW,
                                sqlite_options(tmp_path / "x.db"))).name("orders-db")
    with pytest.raises(JobExecutionException, match=r"Operator 'orders-db' failed on "
                                                    r"record " + error):
        env.execute()


def test_a_database_that_is_down_fails_after_the_retries(tmp_path):
    port = free_port()
    url = f"jdbc:postgresql://127.0.0.1:{port}/shop?sslmode=disable&password=url-pw"
    options = JdbcConnectionOptions.JdbcConnectionOptionsBuilder().with_url(url) \
        .with_user_name("app").with_password("option-pw").build()
    harness = Harness(make_sink("INSERT INTO t VALUES (?, ?)", options, max_retries=2), tmp_path)
    path = harness.stage(0, [Row(1, "a")])
    started = time.monotonic()
    with pytest.raises(OperatorError) as failure:
        harness.committer.commit(0, 0, path)
    assert time.monotonic() - started >= 0.3  # backoff 0.1 s, then 0.2 s
    message = str(failure.value)
    assert (f"Operator 'JdbcSink sink-jdbc' failed on database jdbc:postgresql://127.0.0.1:"
            f"{port}/shop?sslmode=disable&password=*** (gave up after 2 retries): "
            f"OperationalError: connection failed") in message
    assert "pw" not in message.replace("password=***", "")
    assert os.path.exists(path)  # kept for the restart


def test_an_unreachable_sqlite_file_fails_after_the_retries(tmp_path):
    options = sqlite_options(tmp_path / "missing-dir" / "x.db")
    harness = Harness(make_sink("INSERT INTO t VALUES (?, ?)", options, max_retries=1), tmp_path)
    with pytest.raises(OperatorError, match=r"failed on database jdbc:sqlite:.*x\.db \(gave up "
                                            r"after 1 retry\): OperationalError: unable to open"):
        harness.run_batch(0, [Row(1, "a")])


def test_question_marks_and_percent_signs_inside_strings_are_text(database, tmp_path):
    options, read_rows, _ = database
    sql = "INSERT INTO t (id, name) VALUES (? /* the id? */, '?' || '%' || ? || 'it''s?')"
    assert count_placeholders(sql) == 2
    Harness(make_sink(sql, options), tmp_path).run_batch(0, [Row(1, "x"), Row(2, "y")])
    assert read_rows() == [(1, "?%xit's?"), (2, "?%yit's?")]


def test_placeholders_for_psycopg():
    assert format_placeholders("SELECT ?, '?%', \"a?\", ? -- ?\n WHERE x LIKE 'a%'") == \
        "SELECT %s, '?%%', \"a?\", %s -- ?\n WHERE x LIKE 'a%%'"


TYPES = Types.ROW([Types.INT(), Types.LONG(), Types.DOUBLE(), Types.FLOAT(), Types.STRING(),
                   Types.BOOLEAN(), Types.PRIMITIVE_ARRAY(Types.BYTE()), Types.BIG_DEC(),
                   Types.SQL_DATE(), Types.SQL_TIME(), Types.SQL_TIMESTAMP(),
                   LocalTimeTypeInfo(LocalTimeTypeInfo.TimeType.LOCAL_DATE_TIME), Types.STRING()])
VALUES = Row(1, 2 ** 40, 1.5, 110.1, "héllo", True, b"\x00\xff", Decimal("12.345"),
             datetime.date(2024, 2, 29), datetime.time(13, 14, 15, 123000),
             datetime.datetime(2024, 2, 29, 13, 14, 15, 250000),
             datetime.datetime(2024, 3, 1, 0, 0, 1), None)
INSERT_ALL = "INSERT INTO v VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"


def test_field_types_in_postgres(postgres_db, tmp_path):
    postgres_db.execute(
        "CREATE TABLE v (i INTEGER, l BIGINT, d DOUBLE PRECISION, f DOUBLE PRECISION, s TEXT, "
        "b BOOLEAN, y BYTEA, m NUMERIC(10, 3), dt DATE, tm TIME, ts TIMESTAMP, ldt TIMESTAMP, "
        "n TEXT)")
    Harness(make_sink(INSERT_ALL, postgres_db.connection_options(), TYPES), tmp_path) \
        .run_batch(0, [VALUES])
    assert postgres_db.rows("v") == [(
        1, 2 ** 40, 1.5, 110.0999984741211, "héllo", True, b"\x00\xff", Decimal("12.345"),
        datetime.date(2024, 2, 29), datetime.time(13, 14, 15, 123000),
        datetime.datetime(2024, 2, 29, 13, 14, 15, 250000), datetime.datetime(2024, 3, 1, 0, 0, 1),
        None)]


def test_field_types_in_sqlite(tmp_path):
    path = tmp_path / "types.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE v (i INTEGER, l INTEGER, d REAL, f REAL, s TEXT, "
                           "b BOOLEAN, y BLOB, m TEXT, dt TEXT, tm TEXT, ts TEXT, ldt TEXT, "
                           "n TEXT)")
    Harness(make_sink(INSERT_ALL, sqlite_options(path), TYPES), tmp_path).run_batch(0, [VALUES])
    assert sqlite_rows(path, "v") == [(
        1, 2 ** 40, 1.5, 110.0999984741211, "héllo", 1, b"\x00\xff", "12.345", "2024-02-29",
        "13:14:15.123000", "2024-02-29 13:14:15.250000", "2024-03-01 00:00:01", None)]


def test_recover_finishes_committed_batches_and_forgets_rewound_ones(database, tmp_path):
    options, read_rows, run_sql = database
    sink = make_sink("INSERT INTO t (id, name) VALUES (?, ?)", options)
    harness = Harness(sink, tmp_path / "staging")
    harness.run_batch(0, [Row(1, "a")])
    harness.run_batch(1, [Row(2, "b")])
    harness.stage(2, [Row(3, "c")])   # committed by the driver, then a crash before delivery
    harness.stage(3, [Row(4, "d")])   # never committed
    Harness(sink, tmp_path / "staging").committer.recover(2)
    assert read_rows() == [(1, "a"), (2, "b"), (3, "c")]
    assert not os.listdir(tmp_path / "staging")
    # Rewound to batch 0 (restored from an older point): batches 1 and 2 run again and write
    # their rows again (here into a cleared table).
    run_sql("DELETE FROM t WHERE id > 1")
    rewound = Harness(sink, tmp_path / "staging")
    rewound.committer.recover(0)
    rewound.run_batch(1, [Row(5, "e")])
    assert read_rows() == [(1, "a"), (5, "e")]


@pytest.mark.parametrize("url, driver, error", [
    ("jdbc:mysql://db:3306/shop", None, "unsupported database URL 'jdbc:mysql://db:3306/shop'"),
    ("jdbc:postgresql://db/shop", "com.mysql.cj.jdbc.Driver",
     "unsupported driver 'com.mysql.cj.jdbc.Driver'"),
    ("jdbc:sqlite:/tmp/x.db", "org.postgresql.Driver", "unsupported driver"),
    ("jdbc:sqlite::memory:", None, "names no database file"),
    ("jdbc:postgresql:shop", None, "expected jdbc:postgresql://host\\[:port\\]/database"),
    ("jdbc:postgresql://db/shop?ssl=true&password=pw", None,
     r"unsupported parameters \['ssl'\] in the URL 'jdbc:postgresql://db/shop\?ssl=true&"
     r"password=\*\*\*'"),
])
def test_unsupported_urls_and_drivers_fail_when_the_job_is_built(url, driver, error):
    builder = JdbcConnectionOptions.JdbcConnectionOptionsBuilder().with_url(url)
    if driver is not None:
        builder.with_driver_name(driver)
    with pytest.raises(ValueError, match=error):
        JdbcSink.sink("INSERT INTO t VALUES (?, ?)", ROW, builder.build())


def test_statements_and_types_that_cannot_work_fail_when_the_job_is_built(tmp_path):
    options = sqlite_options(tmp_path / "x.db")
    with pytest.raises(ValueError, match=r"the statement has 1 '\?' parameters but "
                                         r"RowTypeInfo\(Integer, String\) has 2 fields"):
        JdbcSink.sink("INSERT INTO t VALUES (?, 'x?')", ROW, options)
    with pytest.raises(ValueError, match=r"unsupported field types \[ListTypeInfo"):
        JdbcSink.sink("INSERT INTO t VALUES (?)", Types.ROW([Types.LIST(Types.INT())]), options)


def test_postgresql_without_psycopg_fails_when_the_job_is_built(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if it were not installed
    options = JdbcConnectionOptions.JdbcConnectionOptionsBuilder() \
        .with_url("jdbc:postgresql://db/shop").build()
    with pytest.raises(ImportError, match=r"pip install 'spark-datastream\[postgres\]'"):
        JdbcSink.sink("INSERT INTO t VALUES (?, ?)", ROW, options)


# --- jobs through env.execute() -------------------------------------------------------

ORDER = Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()])


def to_order(n):
    return Row(id=int(n), name=f"n{n}")


def fail_on_33_once(flag: str):
    def check(n):
        if n == 33 and not os.path.exists(flag):
            open(flag, "w").close()
            raise ValueError("injected failure at 33")
        return n
    return check


def orders_job(env, options, check=None, last=40):
    """1..``last`` as Rows (id, 'n<id>') into table t through a JdbcSink."""
    env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
    ds = env.from_source(NumberSequenceSource(1, last), WatermarkStrategy.no_watermarks(), "seq") \
        .uid("seq")
    if check is not None:
        ds = ds.map(check, output_type=Types.LONG())
    ds.map(to_order, output_type=ORDER) \
        .add_sink(JdbcSink.sink("INSERT INTO t (id, name) VALUES (?, ?)", ORDER, options,
                                JdbcExecutionOptions.builder().with_batch_size(3).build())) \
        .uid("orders-out")
    return env


def expected_orders(numbers) -> list:
    return [(n, f"n{n}") for n in numbers]


def test_a_bounded_job_writes_to_postgresql(env_factory, postgres_db):
    postgres_db.execute("CREATE TABLE t (id INTEGER, name TEXT)")  # no key: duplicates show
    orders_job(env_factory(parallelism=2, micro_batch_size=5),
               postgres_db.connection_options()).execute("orders")
    assert postgres_db.rows("t") == expected_orders(range(1, 41))
    # one transaction per subtask and batch: 4 batches of 5 numbers per split
    assert postgres_db.query(f"SELECT job_name, sink_id, count(*) FROM {COMMITS_TABLE} "
                             f"GROUP BY job_name, sink_id") == [("orders", "orders-out", 8)]


def test_a_bounded_job_writes_to_sqlite(env_factory, tmp_path):
    path = tmp_path / "orders.db"
    with sqlite3.connect(path) as connection:
        connection.execute("CREATE TABLE t (id INTEGER, name TEXT)")
    orders_job(env_factory(parallelism=2, micro_batch_size=5), sqlite_options(path)).execute()
    assert sqlite_rows(path) == expected_orders(range(1, 41))


def test_a_job_resumed_after_a_failure_writes_each_row_once(postgres_db, tmp_path):
    postgres_db.execute("CREATE TABLE t (id INTEGER, name TEXT)")
    conf = {"state.checkpoints.dir": str(tmp_path / "checkpoints")}
    check = fail_on_33_once(str(tmp_path / "failed-once"))
    # Split 2 (21..40) fails in batch 2 (31..35): batches 0 and 1 are committed and written.
    with pytest.raises(JobExecutionException, match="injected failure at 33"):
        orders_job(make_env("local", parallelism=2, micro_batch_size=5, **conf),
                   postgres_db.connection_options(), check).execute("orders")
    assert postgres_db.rows("t") == expected_orders([*range(1, 11), *range(21, 31)])
    orders_job(make_env("local", parallelism=2, micro_batch_size=5, **conf),
               postgres_db.connection_options(), check).execute("orders")
    assert postgres_db.rows("t") == expected_orders(range(1, 41))


def test_a_batch_committed_but_not_written_is_written_on_restart(postgres_db, tmp_path):
    # The database rejects 33 (batch 2 of split 2) after the batch has committed: the job
    # fails with the database's message, the staged rows stay, and the restart (once the
    # constraint is gone) writes them before going on.
    postgres_db.execute("CREATE TABLE t (id INTEGER CONSTRAINT not_33 CHECK (id <> 33), "
                        "name TEXT)")
    conf = {"state.checkpoints.dir": str(tmp_path / "checkpoints")}
    with pytest.raises((JobExecutionException, OperatorError),
                       match=r"failed on row \(33, 'n33'\) \(batch 2, subtask 1; "
                             r"nothing of this batch was written\): CheckViolation"):
        orders_job(make_env("local", parallelism=2, micro_batch_size=5, **conf),
                   postgres_db.connection_options()).execute("orders")
    written = postgres_db.rows("t")
    assert (31, "n31") not in written and (11, "n11") in written
    postgres_db.execute("ALTER TABLE t DROP CONSTRAINT not_33")
    orders_job(make_env("local", parallelism=2, micro_batch_size=5, **conf),
               postgres_db.connection_options()).execute("orders")
    assert postgres_db.rows("t") == expected_orders(range(1, 41))
