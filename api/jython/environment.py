"""The environment factory a guide program's ``main(factory)`` receives, and the
environment it makes: a thin wrapper over this project's StreamExecutionEnvironment.

Time: the guide's ``time_window`` ran in processing time (Flink 1.x's default
characteristic). Here the environment has the IngestionTime characteristic: each record
is stamped with the processing time of the micro-batch it enters in (the engine reads
processing time once per batch, so a window holds the same records as a processing-time
window would), and windows are closed by watermarks, so the last windows of a bounded
source fire at its end (Flink dropped pending processing-time windows there).
"""
from typing import Iterable, Optional, Sequence

from api.common import Configuration, JobExecutionResult
from api.datastream import SourceFunction, StreamExecutionEnvironment, TimeCharacteristic

from .data_stream import PythonDataStream


class PythonEnvironmentFactory:
    """Makes the environments of a program: ``factory.get_execution_environment()``.

    ``configuration`` and ``spark_session`` are passed to every environment (e.g.
    ``spark.master``, or ``execution.executor`` = ``local`` to run in-process);
    ``python_files`` (the program and its packages) are shipped with every job."""

    def __init__(self, configuration: Optional[Configuration] = None, spark_session=None,
                 python_files: Sequence[str] = ()):
        self._configuration = configuration
        self._spark_session = spark_session
        self._python_files = list(python_files)

    def get_execution_environment(self) -> "PythonStreamExecutionEnvironment":
        """A new environment, configured as the factory says."""
        env = StreamExecutionEnvironment.get_execution_environment(self._configuration,
                                                                   self._spark_session)
        env.set_stream_time_characteristic(TimeCharacteristic.IngestionTime)
        for path in self._python_files:
            env.add_python_file(path)
        return PythonStreamExecutionEnvironment(env)


class PythonStreamExecutionEnvironment:
    """Creates the sources of a guide program and executes it."""

    def __init__(self, env: StreamExecutionEnvironment):
        self.env = env

    def create_python_source(self, src: SourceFunction) -> PythonDataStream:
        """The records ``src.run(ctx)`` emits with ``ctx.collect(value)``; ``src.cancel()``
        is called if the job ends while ``run`` is still running."""
        if not isinstance(src, SourceFunction):
            raise TypeError(f"create_python_source() expects a SourceFunction (from "
                            f"org.apache.flink.streaming.api.functions.source) with "
                            f"run(ctx) and cancel(), got {type(src).__name__}")
        return PythonDataStream(self.env.add_source(src))

    def from_elements(self, *elements) -> PythonDataStream:
        """A stream of the given elements: ``env.from_elements("Foo", "bar")``."""
        return PythonDataStream(self.env.from_elements(*elements))

    def from_collection(self, collection: Iterable) -> PythonDataStream:
        """A stream of the elements of ``collection``."""
        return PythonDataStream(self.env.from_collection(list(collection)))

    def generate_sequence(self, from_: int, to: int) -> PythonDataStream:
        """The numbers ``from_`` to ``to`` (both included), generated in parallel."""
        return PythonDataStream(self.env.generate_sequence(from_, to))

    def read_text_file(self, path: str) -> PythonDataStream:
        """The lines of a text file (a local path or ``file://`` URI)."""
        return PythonDataStream(self.env.read_text_file(path))

    def read_text(self, path: str) -> PythonDataStream:
        """The name the guide's data source examples use for ``read_text_file``."""
        return self.read_text_file(path)

    def set_parallelism(self, parallelism: int) -> "PythonStreamExecutionEnvironment":
        """The default parallelism of the operators created after this call."""
        self.env.set_parallelism(parallelism)
        return self

    def execute(self, job_name=None, local: bool = False) -> JobExecutionResult:
        """Runs the program: ``env.execute()``, ``execute("name")``, ``execute(local=True)``.

        In Flink, ``local`` only chose where the program's Python files were copied for the
        workers (a local directory instead of the cluster's shared storage); here the
        factory ships them with every job, so where the job runs is the factory's
        configuration (``spark.master``) and ``local`` changes nothing."""
        if isinstance(job_name, bool):  # execute(True): Java's execute(Boolean local)
            job_name, local = None, job_name
        if not isinstance(local, bool):
            raise TypeError(f"execute(): local must be True or False, got {local!r}")
        return self.env.execute(job_name)
