"""The JDBC sink's engine side: rows staged in the tasks, written to the database after the
batch commits, exactly once.

The writer turns each record into the statement's parameters and stages the batch's rows
(``StagingWriter``). Once the driver has committed the batch, a commit task delivers one
staged file in ONE database transaction: a marker row naming job, sink, subtask and batch
goes into the bookkeeping table ``spark_datastream_commits`` (created when missing), then
the rows, in ``executemany`` chunks of the batch size. A delivery that finds its marker
already there (a retried commit task, a recovery after a crash during the commit) writes
nothing. A rejected row rolls the whole transaction back and fails the job.

Databases: PostgreSQL (``jdbc:postgresql://host[:port]/database``, psycopg 3) and SQLite
(``jdbc:sqlite:/path/to.db``, Python's ``sqlite3``).
"""
import datetime
import itertools
import re
import sqlite3
import time
from decimal import Decimal
from typing import Callable, Optional
from urllib.parse import parse_qsl

from engine.errors import OperatorError, truncated_repr
from engine.io.sinks import Sink, StagedCommitter, StagingWriter, WriterContext
from engine.io.sources import Source, SplitRange

COMMITS_TABLE = "spark_datastream_commits"
# Markers of a subtask's older batches are dropped: a staged file is redelivered only
# while its batch is among the last few committed ones.
KEPT_MARKERS = 1000
CONNECT_TIMEOUT_S = 10
MAX_BACKOFF_S = 2.0

SUPPORTED = ("jdbc:postgresql://host[:port]/database (driver org.postgresql.Driver) and "
             "jdbc:sqlite:/path/to/file.db (driver org.sqlite.JDBC)")

# SQL text as tokens: quoted strings and identifiers, comments, a placeholder, a percent
# sign, other text. A doubled quote inside a string makes two adjacent quoted tokens.
_SQL_TOKENS = re.compile(r"'[^']*'|\"[^\"]*\"|--[^\n]*|/\*.*?\*/|[?%]|[^'\"?%/-]+|.", re.S)


def count_placeholders(sql: str) -> int:
    """The number of ``?`` parameters of a statement (not counting those inside quoted
    strings, identifiers or comments)."""
    return sum(1 for token in _SQL_TOKENS.findall(sql) if token == "?")


def format_placeholders(sql: str) -> str:
    """``sql`` with JDBC's ``?`` parameters written as psycopg's ``%s``; every literal
    ``%`` (psycopg reads them even inside strings) is doubled."""
    return "".join("%s" if token == "?" else token.replace("%", "%%")
                   for token in _SQL_TOKENS.findall(sql))


class Database:
    """One database reached by a JDBC URL: how to connect, which errors are worth a retry,
    and the statements the sink runs. Holds only strings: it is pickled into the tasks."""

    driver_name = ""

    def __init__(self, url: str):
        self.url = url

    def display_url(self) -> str:
        """The URL without its password, for error messages."""
        return re.sub(r"(?i)(password=)[^&]*", r"\1***", self.url)

    def connect(self):
        raise NotImplementedError

    def is_transient(self, error: BaseException) -> bool:
        """Whether ``error`` is an outage (connection lost, database busy) that a retry on a
        new connection may overcome, rather than a statement or row the database rejects."""
        raise NotImplementedError

    def statement(self, sql: str) -> str:
        """``sql`` (with ``?`` parameters) in the driver's parameter style."""
        return sql

    def parameters(self, fields) -> tuple:
        """A row's field values as parameters the driver accepts."""
        return tuple(fields)

    def begin(self, connection) -> None:
        pass


class PostgresDatabase(Database):
    driver_name = "org.postgresql.Driver"
    _URL = re.compile(r"^jdbc:postgresql://(?P<host>[^/:?]+)(?::(?P<port>\d+))?"
                      r"/(?P<database>[^/?]+)(?:\?(?P<query>.*))?$")
    _URL_PARAMETERS = {"user", "password", "sslmode", "connect_timeout", "application_name"}

    def __init__(self, url: str, user_name: Optional[str], password: Optional[str]):
        super().__init__(url)
        match = self._URL.match(url)
        if match is None:
            raise ValueError(f"JdbcSink: cannot read the PostgreSQL URL {self.display_url()!r}; "
                             f"expected jdbc:postgresql://host[:port]/database")
        settings = dict(parse_qsl(match["query"] or ""))
        unknown = sorted(set(settings) - self._URL_PARAMETERS)
        if unknown:
            raise ValueError(f"JdbcSink: unsupported parameters {unknown} in the URL "
                             f"{self.display_url()!r}; supported: "
                             f"{sorted(self._URL_PARAMETERS)}")
        settings.setdefault("connect_timeout", str(CONNECT_TIMEOUT_S))
        settings.update(host=match["host"], port=match["port"] or "5432",
                        dbname=match["database"])
        if user_name is not None:
            settings["user"] = user_name
        if password is not None:
            settings["password"] = password
        self.settings = settings
        _psycopg()  # missing: fail when the job is built

    def connect(self):
        return _psycopg().connect(**self.settings)

    def is_transient(self, error):
        psycopg = _psycopg()
        return isinstance(error, (psycopg.OperationalError, psycopg.InterfaceError))

    def statement(self, sql):
        return format_placeholders(sql)


def _psycopg():
    try:
        import psycopg
    except ImportError:
        raise ImportError("JdbcSink needs psycopg for PostgreSQL: "
                          "pip install 'spark-datastream[postgres]'") from None
    return psycopg


_SQLITE_VALUES = {Decimal: str, datetime.date: datetime.date.isoformat,
                  datetime.time: datetime.time.isoformat,
                  datetime.datetime: lambda moment: moment.isoformat(" ")}
# sqlite3 raises OperationalError for syntax errors and missing tables as well: only these
# messages are outages.
_SQLITE_OUTAGES = ("locked", "busy", "unable to open", "disk i/o")


class SqliteDatabase(Database):
    driver_name = "org.sqlite.JDBC"

    def __init__(self, url: str):
        super().__init__(url)
        self.path = url[len("jdbc:sqlite:"):]
        if self.path in ("", ":memory:"):
            raise ValueError(f"JdbcSink: {url!r} names no database file (a database in memory "
                             f"would not outlive a connection); use jdbc:sqlite:/path/to.db")

    def connect(self):
        # Transactions are begun explicitly (BEGIN IMMEDIATE takes the write lock at once).
        return sqlite3.connect(self.path, timeout=CONNECT_TIMEOUT_S, isolation_level=None)

    def is_transient(self, error):
        return isinstance(error, sqlite3.OperationalError) and any(
            outage in str(error).lower() for outage in _SQLITE_OUTAGES)

    def parameters(self, fields):
        # sqlite3 stores Decimal and the time types only as text: the ISO forms.
        values = _SQLITE_VALUES
        return tuple(v if (adapt := values.get(type(v))) is None else adapt(v) for v in fields)

    def begin(self, connection):
        connection.execute("BEGIN IMMEDIATE")


def database_for(url: str, driver_name: Optional[str] = None, user_name: Optional[str] = None,
                 password: Optional[str] = None) -> Database:
    """The database of a JDBC URL; ValueError for URLs and drivers this engine cannot use."""
    if url.startswith("jdbc:postgresql:"):
        database = PostgresDatabase(url, user_name, password)
    elif url.startswith("jdbc:sqlite:"):
        database = SqliteDatabase(url)
    else:
        raise ValueError(f"JdbcSink: unsupported database URL {Database(url).display_url()!r}; "
                         f"supported: {SUPPORTED}")
    if driver_name is not None and driver_name != database.driver_name:
        raise ValueError(f"JdbcSink: unsupported driver {driver_name!r} for "
                         f"{database.display_url()!r}; supported: {SUPPORTED}")
    return database


class JdbcQuerySource(Source):
    """The rows (tuples) of a query, read once: a bounded scan in one split, ``max_records``
    rows a batch (``LIMIT``/``OFFSET``; the query's ``ORDER BY`` makes a range read again
    give the same rows). The position is the number of rows read."""

    parallelism = 1

    def __init__(self, database: Database, sql: str):
        self.database = database
        self.sql = sql

    def splits(self, parallelism: int):
        return ["0"]

    def plan(self, split, position, max_records, now_ms):
        return SplitRange(split, (position, max_records))

    def read(self, descriptor):
        offset, count = descriptor
        connection = self.database.connect()
        try:
            cursor = connection.cursor()
            cursor.execute(f"{self.sql} LIMIT {int(count)} OFFSET {int(offset)}")
            rows = cursor.fetchall()
        finally:
            connection.close()
        return rows, None if len(rows) < count else offset + len(rows)


class JdbcSink(Sink):
    """Runs ``sql`` for each record, filling its ``?`` parameters from ``to_fields(record)``
    (the record's field values, in order); exactly once per committed batch. With
    ``delete_sql``, a record whose ``delete_fields(record)`` are not None runs it instead,
    with those parameters (in the records' order)."""

    stages_in_job_directory = True

    def __init__(self, sql: str, to_fields: Callable, database: Database, batch_size: int,
                 max_retries: int, delete_sql: Optional[str] = None,
                 delete_fields: Optional[Callable] = None):
        self.sql = sql
        self.to_fields = to_fields
        self.database = database
        self.batch_size = batch_size
        self.max_retries = max_retries
        self.delete_sql = delete_sql
        self.delete_fields = delete_fields

    def create_writer(self, context: WriterContext) -> StagingWriter:
        to_fields, parameters = self.to_fields, self.database.parameters
        if self.delete_sql is None:
            return StagingWriter(context, lambda value: parameters(to_fields(value)))
        delete_fields = self.delete_fields

        def item(value):  # (whether it deletes, its parameters)
            key = delete_fields(value)
            return (False, parameters(to_fields(value))) if key is None else \
                (True, parameters(key))
        return StagingWriter(context, item)

    def create_committer(self) -> "JdbcCommitter":
        return JdbcCommitter(self)


class JdbcCommitter(StagedCommitter):
    """Delivers staged rows, one transaction per (batch, subtask), with a marker row that
    makes a repeated delivery write nothing."""

    def __init__(self, sink: JdbcSink):
        self.sink = sink
        self.database = database = sink.database
        self.statement = database.statement(sink.sql)
        self.delete_statement = None if sink.delete_sql is None else \
            database.statement(sink.delete_sql)
        self.insert_marker = database.statement(
            f"INSERT INTO {COMMITS_TABLE} (job_name, sink_id, subtask, batch_id) "
            f"VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING")
        self.drop_old_markers = database.statement(
            f"DELETE FROM {COMMITS_TABLE} "
            f"WHERE job_name = ? AND sink_id = ? AND subtask = ? AND batch_id < ?")
        self.drop_later_markers = database.statement(
            f"DELETE FROM {COMMITS_TABLE} WHERE job_name = ? AND sink_id = ? AND batch_id > ?")

    def _operator(self) -> str:
        return f"JdbcSink {self.context.sink_id}"

    def recover(self, committed_batch: int) -> None:
        # Markers after the batch the job resumes from belong to a run that was rewound or
        # started afresh (a crash never leaves any: rows are written only after the batch
        # commits): those batches run again and must write their rows again.
        context = self.context
        self._with_retries(lambda connection: connection.execute(
            self.drop_later_markers, (context.job_name, context.sink_id, committed_batch)))
        super().recover(committed_batch)

    def deliver(self, batch_id: int, subtask: int, rows: list) -> None:
        context = self.context
        marker = (context.job_name, context.sink_id, subtask, batch_id)
        size = self.sink.batch_size

        def write(connection):
            cursor = connection.cursor()
            cursor.execute(self.insert_marker, marker)
            if cursor.rowcount == 0:  # delivered before
                return False
            for statement, parameters in self._runs(rows):
                for start in range(0, len(parameters), size):
                    cursor.executemany(statement, parameters[start:start + size])
            cursor.execute(self.drop_old_markers, marker[:3] + (batch_id - KEPT_MARKERS,))
            return True

        self._with_retries(write, lambda e: self._rejected_row(rows, batch_id, subtask, e))

    def _runs(self, rows: list):
        """(statement, parameters of its rows) for each run of rows of one statement."""
        if self.delete_statement is None:
            yield self.statement, rows
            return
        for deletes, run in itertools.groupby(rows, key=lambda row: row[0]):
            yield (self.delete_statement if deletes else self.statement), \
                [parameters for _, parameters in run]

    def _with_retries(self, work: Callable, rejected: Callable = None) -> None:
        """Runs ``work(connection)`` in one transaction (committed unless it returns False),
        on a new connection after each outage, at most ``max_retries`` times more. An error
        that is not an outage fails at once, with ``rejected(error)`` when given."""
        database, retries = self.database, self.sink.max_retries
        for attempt in range(retries + 1):
            connection = None
            try:
                connection = database.connect()
                self._ensure_commits_table(connection)
                database.begin(connection)
                if work(connection) is False:
                    connection.rollback()
                else:
                    connection.commit()
                return
            except Exception as e:
                if connection is not None:
                    _rollback(connection)
                if not database.is_transient(e):
                    raise (rejected or self._failed)(e) from None
                if attempt == retries:
                    raise self._failed(e, f" (gave up after {retries} "
                                          f"{'retry' if retries == 1 else 'retries'})") from None
            finally:
                if connection is not None:
                    connection.close()
            time.sleep(min(MAX_BACKOFF_S, 0.1 * 2 ** attempt))

    def _ensure_commits_table(self, connection) -> None:
        try:
            connection.execute(
                f"CREATE TABLE IF NOT EXISTS {COMMITS_TABLE} (job_name VARCHAR(1000) NOT NULL, "
                f"sink_id VARCHAR(1000) NOT NULL, subtask INTEGER NOT NULL, "
                f"batch_id BIGINT NOT NULL, PRIMARY KEY (job_name, sink_id, subtask, batch_id))")
            connection.commit()
        except Exception as e:
            # Two subtasks creating it at once in PostgreSQL: one of them sees a duplicate.
            _rollback(connection)
            if self.database.is_transient(e) or not _table_exists(connection):
                raise

    def _failed(self, cause: BaseException, note: str = "") -> OperatorError:
        return OperatorError.wrap(self._operator(), None, cause,
                                  what=f"database {self.database.display_url()}{note}")

    def _rejected_row(self, rows: list, batch_id: int, subtask: int,
                      cause: BaseException) -> OperatorError:
        """The error naming the row the database rejected: found by running the rows one
        at a time, in a transaction that is rolled back."""
        connection = None
        try:
            connection = self.database.connect()
            self.database.begin(connection)
            cursor = connection.cursor()
            for statement, parameters in self._runs(rows):
                for row in parameters:
                    try:
                        cursor.execute(statement, row)
                    except Exception as e:
                        return OperatorError.wrap(self._operator(), row, e, what=(
                            f"row {truncated_repr(row)} (batch {batch_id}, subtask "
                            f"{subtask}; nothing of this batch was written)"))
        except Exception:  # the database went away: report the batch's error below
            pass
        finally:
            if connection is not None:
                _rollback(connection)
                connection.close()
        return OperatorError.wrap(self._operator(), None, cause, what=(
            f"batch {batch_id} of subtask {subtask} ({len(rows)} rows; nothing of it was "
            f"written)"))


def _rollback(connection) -> None:
    try:
        connection.rollback()
    except Exception:  # the connection is gone: nothing to roll back
        pass


def _table_exists(connection) -> bool:
    try:
        connection.execute(f"SELECT 1 FROM {COMMITS_TABLE} WHERE 1 = 0")
        return True
    except Exception:
        _rollback(connection)
        return False
