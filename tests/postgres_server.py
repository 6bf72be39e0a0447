"""A throw-away PostgreSQL server for the tests: ``initdb`` in a temporary directory,
``pg_ctl start`` on 127.0.0.1 on a free port, stopped and removed after the session.

Fixtures: ``postgres_server`` (the session's server) and ``postgres_db`` (a new empty
database on it for one test, with its JDBC URL, its ``JdbcConnectionOptions`` and helpers
to run SQL and read a table back). The server binaries are required: without them the
tests fail (``.ci/run`` installs PostgreSQL).
"""
import glob
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import uuid
from typing import List, Optional

import pytest

USER = "postgres"
PASSWORD = "test-secret"  # TCP connections need it (scram-sha-256), so the sink must send it


def server_binaries() -> Optional[str]:
    """The directory of ``initdb`` and ``pg_ctl``: on PATH, else the newest under
    /usr/lib/postgresql (Debian's layout keeps them off PATH)."""
    initdb = shutil.which("initdb")
    if initdb is not None:
        return os.path.dirname(os.path.realpath(initdb))
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"),
                   key=lambda path: [int(n) for n in re.findall(r"\d+", path)])
    return os.path.dirname(found[-1]) if found else None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _server_account() -> Optional[str]:
    """initdb and postgres refuse to run as root: as root, run them as this account."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
            return name
        except KeyError:
            pass
    raise RuntimeError("running as root and no 'postgres' or 'nobody' account to run "
                       "the PostgreSQL server as")


class PostgresServer:
    """A running server; ``database(name)`` connects to one of its databases."""

    def __init__(self, bin_dir: str, directory: str, account: Optional[str]):
        self.bin_dir = bin_dir
        self.directory = directory
        self.account = account
        self.data = os.path.join(directory, "data")
        self.host = "127.0.0.1"
        self.port = free_port()

    def _run(self, *command: str) -> None:
        command = [os.path.join(self.bin_dir, command[0]), *command[1:]]
        if self.account is not None:
            command = ["runuser", "-u", self.account, "--", *command]
        result = subprocess.run(command, capture_output=True, text=True,
                                env={**os.environ, "LC_ALL": "C"})
        if result.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{result.stdout}{result.stderr}")

    def start(self) -> None:
        password_file = os.path.join(self.directory, "password")
        with open(password_file, "w") as f:
            f.write(PASSWORD)
        if self.account is not None:
            account = pwd.getpwnam(self.account)
            for path in (self.directory, password_file):
                os.chown(path, account.pw_uid, account.pw_gid)
        self._run("initdb", "-D", self.data, "-U", USER, f"--pwfile={password_file}",
                  "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync",
                  "--no-locale", "-E", "UTF8")
        # fsync off: the tests kill jobs, never this server.
        self._run("pg_ctl", "-D", self.data, "-l", os.path.join(self.directory, "log"), "-w",
                  "-o", f"-h {self.host} -p {self.port} -k {self.directory} -c fsync=off "
                        f"-c full_page_writes=off", "start")

    def stop(self) -> None:
        self._run("pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop")

    def connect(self, database: str = "postgres"):
        """An autocommit psycopg connection to ``database``."""
        import psycopg
        return psycopg.connect(host=self.host, port=self.port, dbname=database, user=USER,
                               password=PASSWORD, autocommit=True)

    def create_database(self) -> "PostgresDatabase":
        name = f"test_{uuid.uuid4().hex[:12]}"
        with self.connect() as connection:
            connection.execute(f"CREATE DATABASE {name}")
        return PostgresDatabase(self, name)


class PostgresDatabase:
    """One database of the test server."""

    def __init__(self, server: PostgresServer, name: str):
        self.server = server
        self.name = name
        self.url = f"jdbc:postgresql://{server.host}:{server.port}/{name}"

    def connection_options(self):
        """``JdbcConnectionOptions`` reaching this database (with user and password)."""
        from api.datastream.connectors.jdbc import JdbcConnectionOptions
        return JdbcConnectionOptions.JdbcConnectionOptionsBuilder().with_url(self.url) \
            .with_driver_name("org.postgresql.Driver").with_user_name(USER) \
            .with_password(PASSWORD).build()

    def execute(self, sql: str, params=None) -> None:
        with self.server.connect(self.name) as connection:
            connection.execute(sql, params)

    def query(self, sql: str, params=None) -> List[tuple]:
        with self.server.connect(self.name) as connection:
            cursor = connection.execute(sql, params)
            return cursor.fetchall() if cursor.description is not None else []

    def rows(self, table: str, order_by: str = "1") -> List[tuple]:
        """A table's rows, ordered."""
        return self.query(f"SELECT * FROM {table} ORDER BY {order_by}")


@pytest.fixture(scope="session")
def postgres_server():
    bin_dir = server_binaries()
    if bin_dir is None:
        pytest.fail("PostgreSQL server binaries (initdb, pg_ctl) not found on PATH or in "
                    "/usr/lib/postgresql/*/bin: install PostgreSQL (e.g. apt-get install "
                    "postgresql; .ci/run does)")
    # Not pytest's tmp_path: its directories are private to root, and the server may run
    # under another account.
    directory = tempfile.mkdtemp(prefix="pg-test-")
    server = PostgresServer(bin_dir, directory, _server_account())
    try:
        server.start()
        yield server
        server.stop()
    finally:
        shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture
def postgres_db(postgres_server) -> PostgresDatabase:
    """A new empty database for one test."""
    return postgres_server.create_database()
