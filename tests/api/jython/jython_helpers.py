"""What the tests of the older Python streaming guide's programs share."""
from api.common import Configuration
from api.jython import PythonEnvironmentFactory


def local_factory(micro_batch_size: int = 100_000, **conf) -> PythonEnvironmentFactory:
    """A factory whose environments run in-process (the local executor)."""
    configuration = Configuration()
    configuration.set_string("execution.executor", "local")
    configuration.set_string("execution.micro-batch.size", str(micro_batch_size))
    for key, value in conf.items():
        configuration.set_string(key, str(value))
    return PythonEnvironmentFactory(configuration)


def local_env(parallelism: int = 1, **conf):
    """A guide environment from ``local_factory`` with the given parallelism."""
    return local_factory(**conf).get_execution_environment().set_parallelism(parallelism)


def collect(python_data_stream) -> list:
    """Runs the job and returns the stream's records (through the wrapped DataStream)."""
    return list(python_data_stream.stream.execute_and_collect())
