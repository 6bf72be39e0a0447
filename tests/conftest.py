"""Shared fixtures: one quiet local Spark session for the whole run, and environments
for the in-process and Spark executors."""
import os
import pathlib
import pickle
import shutil
import tempfile

import pytest

from api.common import Configuration
from api.datastream import SinkFunction, StreamExecutionEnvironment
from benchmarks.kafka_broker import TansuBroker
from tests.postgres_server import postgres_db, postgres_server  # noqa: F401 (fixtures)

SPARK_MASTER = "local[2]"


@pytest.fixture(scope="session")
def spark():
    from engine.executor.spark import get_spark_session
    session = get_spark_session(SPARK_MASTER, {"spark.default.parallelism": "2"})
    yield session
    session.stop()


def make_env(executor: str, parallelism: int = 1, micro_batch_size: int = 100_000,
             **conf) -> StreamExecutionEnvironment:
    """An environment running on ``executor`` ("local" in-process or "spark")."""
    config = Configuration()
    config.set_string("execution.executor", executor)
    config.set_string("execution.micro-batch.size", str(micro_batch_size))
    for key, value in conf.items():
        config.set_string(key, str(value))
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(parallelism)
    return env


@pytest.fixture(params=["local", "spark"])
def executor(request):
    """Runs a test on both executors (the Spark session is started on first use)."""
    if request.param == "spark":
        request.getfixturevalue("spark")
    return request.param


@pytest.fixture
def env_factory(executor):
    """Builds environments on the parametrized executor: env_factory(parallelism=2)."""
    return lambda **kwargs: make_env(executor, **kwargs)


class GatheringSink(SinkFunction):
    """A SinkFunction for tests. ``invoke`` runs in the tasks, on copies of the sink, so
    it appends each value (pickled) to a file of its process under a directory the test
    reads back with ``values()`` (in the order written within each worker process)."""

    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix="gathered-")

    def invoke(self, value, context):
        with open(os.path.join(self.directory, str(os.getpid())), "ab") as f:
            pickle.dump(value, f)

    def values(self) -> list:
        found = []
        for name in sorted(os.listdir(self.directory)):
            with open(os.path.join(self.directory, name), "rb") as f:
                while True:
                    try:
                        found.append(pickle.load(f))
                    except EOFError:
                        break
        return found


def finished_lines(out_dir) -> list:
    """The lines of a FileSink's finished files under ``out_dir`` (in-progress files are
    hidden, '.'-prefixed); none if it does not exist."""
    lines = []
    for directory, _, names in os.walk(out_dir):
        for name in sorted(names):
            if not name.startswith("."):
                with open(os.path.join(directory, name)) as f:
                    lines.extend(f.read().splitlines())
    return lines


@pytest.fixture(scope="session")
def kafka_broker():
    """A Tansu broker for the whole test run (stopped afterwards)."""
    broker = TansuBroker().start()
    yield broker
    broker.stop()


NOBODY = 65534  # the other user of attack tests (setpriv --reuid)
needs_another_user = pytest.mark.skipif(
    os.getuid() != 0 or shutil.which("setpriv") is None,
    reason="acting as another user needs root and setpriv (CI runs as root)")


@pytest.fixture
def open_tmp():
    """A directory of this user that another user can reach (pytest's are private)."""
    path = tempfile.mkdtemp()
    os.chmod(path, 0o755)
    yield pathlib.Path(path)
    shutil.rmtree(path)
