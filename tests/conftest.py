"""Shared fixtures: one quiet local Spark session for the whole run, and environments
for the in-process and Spark executors."""
import pytest

from api.common import Configuration
from api.datastream import StreamExecutionEnvironment

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


from tests.kafka_broker import kafka_broker  # noqa: E402,F401  (a session-scoped fixture)
