"""StreamExecutionEnvironment, as in ``pyflink.datastream``: the context a job is built
and executed in. Jobs run on Spark (local mode by default) in micro-batches; the job's
settings come from ``job_settings``."""
import codecs
import concurrent.futures
import os
import threading
import time
from functools import partial
from typing import Callable, Dict, List, Optional, Tuple

from engine.graph import Transformation, build_plan, execution_plan_json
from engine.driver.job import create_runner
from engine.driver.settings import JobSettings
from engine.io.function_source import FunctionSource
from engine.runtime.operators.io import SourceOperator
from engine.executor.python_dependencies import (FILE_DELIMITER, PARAM_DELIMITER, PYTHON_ARCHIVES,
                                        PYTHON_EXECUTABLE, PYTHON_FILES, PYTHON_REQUIREMENTS,
                                        CachedFile)
from engine.io.sources import CollectionSource

from api.common.configuration import Configuration
from api.common.io import InputFormat
from api.common.execution_config import ExecutionConfig
from api.common.job_client import JobClient
from api.common.job_execution_result import JobExecutionResult, JobID
from api.common.restart_strategy import RestartStrategyConfiguration
from api.common.typeinfo import Types, TypeInformation
from api.unavailable import check_available
from .checkpoint_config import SAVEPOINTS_DIR, CheckpointConfig, configure, configured
from .client_context import ProgramAbortException, client_configuration, plan_only
from .iterations import check_iterations
from .checkpoint_storage import local_path
from .checkpointing_mode import CheckpointingMode
from .connectors.file_system import FileSource, StreamFormat
from .data_stream import (CloseableIterator, DataStream, checked_buffer_timeout, ingestion_timestamps,
                          with_key_selector_readers)
from .functions import SourceFunction
from .job_settings import (DEFAULT_JOB_NAME, DEFAULT_MAX_PARALLELISM,
                           DEFAULT_MICRO_BATCH_INTERVAL_MS, MICRO_BATCH_INTERVAL, STATE_BACKEND,
                           apply_configuration, job_settings)
from .slot_sharing_group import SlotSharingGroup
from .time_characteristic import TimeCharacteristic
from .execution_mode import RuntimeExecutionMode
from .state_backend import HashMapStateBackend, StateBackend, _LegacyStateBackend


class StreamExecutionEnvironment:
    """The context in which a streaming program is built and executed."""

    def __init__(self, configuration: Optional[Configuration] = None, spark_session=None):
        self._config = ExecutionConfig()  # first: it holds the parallelism (see the end)
        self._conf: Dict[str, str] = {}
        self._spark_session = spark_session
        self._parallelism = self.get_default_local_parallelism()
        self._max_parallelism = DEFAULT_MAX_PARALLELISM
        self._runtime_mode = RuntimeExecutionMode.STREAMING
        self._chaining = True
        self._sources_created = 0
        # Every operator and sink defined since the last job, as Flink's environment keeps
        # them: a job runs them all, consumed or not (sources and partitionings are
        # reached from them).
        self._transformations: List[Transformation] = []
        self._iterations: list = []  # IterativeStreams, checked when the job is built
        self._state_backend: StateBackend = HashMapStateBackend()
        self._checkpoint_config = CheckpointConfig(self._conf)
        self._cached_files: List[CachedFile] = []
        self._slot_sharing_groups: Dict[str, SlotSharingGroup] = {}
        self._changelog_state_backend: Optional[bool] = None
        self._time_characteristic = TimeCharacteristic.EventTime
        if configuration is not None:
            self.configure(configuration)

    @staticmethod
    def get_execution_environment(configuration: Optional[Configuration] = None,
                                  spark_session=None) -> "StreamExecutionEnvironment":
        """Creates an environment. Jobs run on local Spark (``local[*]``) unless the
        configuration sets ``spark.master``, a ``spark_session`` is given or the program
        runs under ``spark-submit --master ...``. In a program
        run by ``spark-datastream run``, the command line's settings come first and
        ``configuration`` is applied over them."""
        return StreamExecutionEnvironment(client_configuration(configuration), spark_session)

    # --- settings -------------------------------------------------------------
    def set_parallelism(self, parallelism: int) -> "StreamExecutionEnvironment":
        """Sets the default parallelism of operators."""
        if parallelism < 1:
            raise ValueError("The parallelism must be at least 1.")
        self._parallelism = parallelism
        return self

    def get_parallelism(self) -> int:
        return self._parallelism

    def set_max_parallelism(self, max_parallelism: int) -> "StreamExecutionEnvironment":
        """Sets the maximum parallelism: the number of key groups of keyed state."""
        if not 0 < max_parallelism <= 32768:
            raise ValueError("The maximum parallelism must be between 1 and 32768.")
        self._max_parallelism = max_parallelism
        return self

    def get_max_parallelism(self) -> int:
        return self._max_parallelism

    def set_runtime_mode(self, execution_mode: RuntimeExecutionMode):
        """STREAMING, BATCH or AUTOMATIC (BATCH when every source is bounded)."""
        self._runtime_mode = execution_mode
        return self

    def set_state_backend(self, state_backend: StateBackend) -> "StreamExecutionEnvironment":
        """Where keyed state lives while the job runs: HashMapStateBackend (memory, the
        default) or EmbeddedRocksDBStateBackend (local disk). The deprecated
        MemoryStateBackend, FsStateBackend and RocksDBStateBackend also set the checkpoint
        storage (and default savepoint directory) they were given."""
        if not isinstance(state_backend, StateBackend):
            raise TypeError(f"set_state_backend() expects a StateBackend, got "
                            f"{type(state_backend).__name__}")
        self._state_backend = state_backend
        self._conf[STATE_BACKEND] = state_backend.engine_kind
        if isinstance(state_backend, _LegacyStateBackend):
            self._checkpoint_config.set_checkpoint_storage(state_backend._checkpoint_storage)
            if state_backend._savepoint_path is not None:
                self.set_default_savepoint_directory(state_backend._savepoint_path)
        return self

    def get_state_backend(self) -> StateBackend:
        return self._state_backend

    # --- checkpointing ------------------------------------------------------------------
    def enable_checkpointing(self, interval: int, mode: CheckpointingMode = None) \
            -> "StreamExecutionEnvironment":
        """Takes a checkpoint every ``interval`` ms (at the end of the first micro-batch past
        it), e.g. ``env.enable_checkpointing(300000, CheckpointingMode.AT_LEAST_ONCE)``;
        ``mode`` None keeps the configured mode (EXACTLY_ONCE by default)."""
        self._checkpoint_config.set_checkpoint_interval(interval)
        if mode is not None:
            self._checkpoint_config.set_checkpointing_mode(mode)
        return self

    def get_checkpoint_config(self) -> CheckpointConfig:
        """The checkpoint settings of this environment: interval, mode, storage, ..."""
        return self._checkpoint_config

    def get_checkpoint_interval(self) -> int:
        """The checkpointing interval in ms, or -1 if checkpointing is disabled."""
        return self._checkpoint_config.get_checkpoint_interval()

    def get_checkpointing_mode(self) -> CheckpointingMode:
        """Shorthand for ``get_checkpoint_config().get_checkpointing_mode()``."""
        return self._checkpoint_config.get_checkpointing_mode()

    def get_checkpointing_consistency_mode(self) -> CheckpointingMode:
        """PyFlink 2.x name of ``get_checkpointing_mode``."""
        return self.get_checkpointing_mode()

    def set_default_savepoint_directory(self, directory: str) -> "StreamExecutionEnvironment":
        """Sets where savepoints are written when no directory is given for one, e.g.
        ``env.set_default_savepoint_directory("file:///savepoints")``."""
        local_path(directory)   # fails now, not when the first savepoint is taken
        configure(self._conf, SAVEPOINTS_DIR, directory)
        return self

    def get_default_savepoint_directory(self) -> Optional[str]:
        """The default savepoint directory as configured, or None."""
        return configured(self._conf, SAVEPOINTS_DIR)

    def get_config(self) -> ExecutionConfig:
        return self._config

    # --- Python dependencies (shipped to the workers when the job runs) ----------------
    def add_python_file(self, file_path: str) -> None:
        """Adds a Python file, package directory or zip to the workers' import path, as
        ``python.files`` does: a .py file's module, a directory's contents and a zip's
        contents become importable (e.g. ``env.add_python_file("deps")`` after
        ``pip install --target deps -r requirements.txt``)."""
        files = self._conf.get(PYTHON_FILES)
        self._conf[PYTHON_FILES] = file_path if not files else \
            FILE_DELIMITER.join([file_path, files])

    def set_python_requirements(self, requirements_file_path: str,
                                requirements_cache_dir: str = None) -> None:
        """Names a requirements.txt the tasks' Python must satisfy (``python.requirements``).
        Packages are not installed for the job: execute() fails, naming what is missing,
        unless they are installed where the tasks run (or shipped with add_python_file)."""
        requirements = requirements_file_path if requirements_cache_dir is None else \
            PARAM_DELIMITER.join([requirements_file_path, requirements_cache_dir])
        self._conf[PYTHON_REQUIREMENTS] = requirements

    def add_python_archive(self, archive_path: str, target_dir: str = None) -> None:
        """Ships a zip archive, extracted into the workers' working directory as
        ``target_dir`` (default: the archive's file name), so functions open its files by
        relative paths: ``open("target_dir/data.txt")`` (``python.archives``)."""
        archive = archive_path if target_dir is None else \
            PARAM_DELIMITER.join([archive_path, target_dir])
        archives = self._conf.get(PYTHON_ARCHIVES)
        self._conf[PYTHON_ARCHIVES] = archive if not archives else \
            FILE_DELIMITER.join([archives, archive])

    def set_python_executable(self, python_exec: str) -> None:
        """The Python interpreter of the workers, e.g. "/usr/local/bin/python3", installed
        on every worker (``python.executable``); it must be set before the Spark session
        starts."""
        self._conf[PYTHON_EXECUTABLE] = python_exec

    def register_cached_file(self, file_path: str, name: str, executable: bool = False) -> None:
        """Ships a file (or directory) with the job: functions open it as ``name``,
        relative to their working directory, e.g. ``open("my_dictionary")``."""
        self._cached_files.append(CachedFile(name, file_path, executable))

    def disable_operator_chaining(self) -> "StreamExecutionEnvironment":
        """Runs every operator in a stage of its own."""
        self._chaining = False
        return self

    def is_chaining_enabled(self) -> bool:
        return self._chaining

    def set_buffer_timeout(self, timeout_millis: int) -> "StreamExecutionEnvironment":
        """Sets how long (ms) records may wait before they are sent on. Records cross
        operators once per micro-batch, so this is the interval at which an unbounded job
        starts its micro-batches (``execution.micro-batch.interval``; an operator's own
        ``set_buffer_timeout`` may make it shorter). A bounded job runs its batches back
        to back. 0 (flush every record) and -1 (flush full buffers only) cannot apply
        here and raise ValueError."""
        self._conf[MICRO_BATCH_INTERVAL] = str(
            checked_buffer_timeout(timeout_millis, "set_buffer_timeout"))
        return self

    def get_buffer_timeout(self) -> int:
        """The interval (ms) of an unbounded job's micro-batches (see ``set_buffer_timeout``)."""
        return int(self._conf.get(MICRO_BATCH_INTERVAL, DEFAULT_MICRO_BATCH_INTERVAL_MS))

    # --- sources --------------------------------------------------------------
    def from_collection(self, collection: List, type_info: TypeInformation = None) -> DataStream:
        """A stream of the given elements (a non-parallel source). With ``type_info``,
        elements are converted to that type as PyFlink does (e.g. tuples to Rows)."""
        elements = list(collection)
        if type_info is not None:
            elements = type_info.chunk_converter(False)(elements) or [
                _convert_element(type_info, i, e) for i, e in enumerate(elements)]
        source = CollectionSource(elements)
        t = Transformation("source", "Source: Collection Source", [],
                           partial(SourceOperator, source.for_tasks()),
                           output_type=type_info or Types.PICKLED_BYTE_ARRAY(), parallelism=1,
                           pact="Data Source", source=source)
        return self._source_stream(t)

    def from_elements(self, *values) -> DataStream:
        """A stream of the given elements: ``env.from_elements("Foo", "bar")``, as
        ``from_collection([...])``."""
        if not values:
            raise ValueError("from_elements() needs at least one element")
        return self.from_collection(list(values))

    def generate_sequence(self, from_: int, to: int) -> DataStream:
        """The numbers from ``from_`` to ``to`` (both included), generated in parallel, as
        ``from_source(NumberSequenceSource(from_, to), ...)``."""
        from .connectors.number_seq import NumberSequenceSource
        return self.from_source(NumberSequenceSource(from_, to), None, "Sequence Source")

    def _source_stream(self, t: Transformation) -> DataStream:
        """The stream of a new source; with IngestionTime, its records are stamped as they
        enter (see ``set_stream_time_characteristic``)."""
        self._sources_created += 1
        stream = DataStream(self, t)
        if self._time_characteristic is TimeCharacteristic.IngestionTime:
            return ingestion_timestamps(stream)
        return stream

    def from_source(self, source, watermark_strategy, source_name: str,
                    type_info: TypeInformation = None) -> DataStream:
        """A stream from a Source such as ``NumberSequenceSource(start, end)``."""
        check_available(source)
        if not hasattr(source, "engine_source"):
            raise TypeError(f"from_source() does not support {type(source).__name__}")
        engine_source = source.engine_source()
        stamps_records = engine_source.stamps_records
        t = Transformation("source", f"Source: {source_name}", [],
                           partial(SourceOperator, engine_source.for_tasks()),
                           output_type=type_info or source.get_produced_type(),
                           parallelism=engine_source.parallelism,  # 1 if not parallel
                           pact="Data Source", source=engine_source)
        t.uses_time = stamps_records
        if watermark_strategy is None or watermark_strategy.is_no_watermarks():
            return self._source_stream(t)
        if self._time_characteristic is TimeCharacteristic.IngestionTime:
            raise ValueError(f"from_source({source_name!r}): the stream time characteristic is "
                             "IngestionTime, which stamps records as they enter a source; a "
                             "WatermarkStrategy would stamp them again. Pass "
                             "WatermarkStrategy.no_watermarks(), or use EventTime.")
        return self._source_stream(t).assign_timestamps_and_watermarks(watermark_strategy)

    # --- execution ------------------------------------------------------------
    def _add_transformation(self, t: Transformation) -> None:
        self._transformations.append(t)

    def _take_job(self, extra: Optional[Transformation] = None) -> Tuple[list, list]:
        """What the next job runs, taken from the environment: its transformations (and
        ``extra``) and its IterativeStreams."""
        job = self._defined(extra), self._iterations
        self._transformations, self._iterations = [], []
        return job

    def _defined(self, extra: Optional[Transformation] = None) -> List[Transformation]:
        """The transformations of the next job: every operator, sink and KeyedStream
        defined since the last one (and ``extra``)."""
        return with_key_selector_readers(
            self._transformations + ([extra] if extra is not None else []))

    def _create_runner(self, job: Tuple[list, list], job_name: Optional[str],
                       progress: bool = True):
        transformations, iterations = job
        settings = job_settings(self, transformations, job_name, progress)
        check_iterations(iterations, settings.state_dir, settings.restart)
        if plan_only():
            raise ProgramAbortException(self._plan_json(transformations, settings))
        return create_runner(transformations, settings)

    def execute(self, job_name: str = None) -> JobExecutionResult:
        """Runs the job until every source is finished; returns its JobExecutionResult."""
        return self._run(self._take_job(), job_name)

    def _run(self, job: Tuple[list, list], job_name: Optional[str]) -> JobExecutionResult:
        runner = self._create_runner(job, job_name)
        start = time.time()
        for _ in runner.batches():
            pass
        return JobExecutionResult(JobID(runner.job_id), int((time.time() - start) * 1000),
                                  metrics=runner.metrics.snapshot())

    def _apart(self, define: Callable[[], object]) -> List[Transformation]:
        """The transformations ``define()`` adds, kept apart from the environment's next
        job (the Table bridge's jobs of their own)."""
        before, self._transformations = self._transformations, []
        try:
            define()
            return self._defined()
        finally:
            self._transformations = before

    def _execute_apart(self, define: Callable[[], object], job_name: str) -> JobExecutionResult:
        """Runs what ``define()`` adds to the environment as a job of its own (a Table API
        insert), leaving what was defined before it to the environment's next job."""
        return self._run((self._apart(define), []), job_name)

    def execute_async(self, job_name: str = DEFAULT_JOB_NAME) -> JobClient:
        """Starts the job in the background and returns a JobClient for it."""
        runner = self._create_runner(self._take_job(), job_name)
        return JobClient(JobID(runner.job_id), _AsyncRun(runner))

    def _execute_collect(self, sink: Transformation, buffer, job_name=None, alone=False):
        """Runs the environment's job with the collecting ``sink`` (``alone``: ``sink``
        and its inputs only, leaving the environment's job to its next execute); returns
        the iterator of ``buffer``."""
        # The caller prints results between batches, and may leave the iterator open:
        # no progress line, which would stay on screen until the iterator is collected.
        runner = self._create_runner(([sink], []) if alone else self._take_job(sink),
                                     job_name, progress=False)
        return CloseableIterator(runner, buffer)

    def get_execution_plan(self) -> str:
        """The plan of the job built so far, as JSON in Flink's format."""
        defined = self._defined()
        return self._plan_json(defined, job_settings(self, defined))

    @staticmethod
    def _plan_json(transformations: List[Transformation], settings: JobSettings) -> str:
        return execution_plan_json(build_plan(transformations, settings.parallelism,
                                              settings.max_parallelism,
                                              settings.chaining_enabled))

    # --- the rest of PyFlink's environment ----------------------------------------------------
    # Parallelism lives in the ExecutionConfig, as in Flink: env.set_parallelism(...) and
    # env.get_config().set_parallelism(...) are one setting.
    _parallelism = property(lambda self: self._config.get_parallelism(),
                            lambda self, parallelism: self._config.set_parallelism(parallelism))
    _max_parallelism = property(
        lambda self: self._config.get_max_parallelism(),
        lambda self, max_parallelism: self._config.set_max_parallelism(max_parallelism))
    _default_local_parallelism: Optional[int] = None

    @classmethod
    def get_default_local_parallelism(cls) -> int:
        """The parallelism new environments start with (default: the number of CPUs)."""
        return cls._default_local_parallelism or os.cpu_count() or 1

    @classmethod
    def set_default_local_parallelism(cls, parallelism: int) -> None:
        """Sets the parallelism environments created from now on start with."""
        if parallelism < 1:
            raise ValueError("The parallelism must be at least 1.")
        StreamExecutionEnvironment._default_local_parallelism = parallelism

    def configure(self, configuration: Configuration) -> None:
        """Applies the options set in ``configuration`` (others keep their values), e.g.
        ``parallelism.default``, ``pipeline.max-parallelism``, ``execution.runtime-mode``,
        ``pipeline.global-job-parameters`` (``k1:v1,k2:v2``), ``pipeline.object-reuse``,
        ``pipeline.operator-chaining.enabled``, ``pipeline.auto-generate-uids``,
        ``pipeline.auto-watermark-interval``, ``state.backend.type``, the checkpointing
        options and this project's ``execution.*`` options."""
        apply_configuration(self, configuration)

    def close(self) -> None:
        """Releases what the environment holds: nothing here (``cache()`` keeps no results,
        and the Spark session is shared and stays up for other environments)."""

    def register_slot_sharing_group(self, slot_sharing_group: SlotSharingGroup) \
            -> "StreamExecutionEnvironment":
        """Registers a slot sharing group's resources; recorded only (see
        ``api.datastream.slot_sharing_group``)."""
        self._slot_sharing_groups[slot_sharing_group.get_name()] = slot_sharing_group
        return self

    def add_source(self, source_func: SourceFunction, source_name: str = "Custom Source",
                   type_info: TypeInformation = None) -> DataStream:
        """A stream from a legacy SourceFunction that can run here (the connectors'
        Python sources); ``from_source`` is the way for new sources."""
        check_available(source_func)
        if not hasattr(source_func, "engine_source"):
            if getattr(type(source_func), "run", SourceFunction.run) is SourceFunction.run:
                raise TypeError(f"add_source() cannot run {type(source_func).__name__}: give "
                                "a SourceFunction with run(ctx), or use env.from_source(...) "
                                "with a Source, or from_collection(...).")
            source = FunctionSource(source_func)
            t = Transformation("source", f"Source: {source_name}", [],
                               partial(SourceOperator, source.for_tasks()),
                               output_type=type_info or Types.PICKLED_BYTE_ARRAY(),
                               parallelism=1, pact="Data Source", source=source)
            return self._source_stream(t)
        return self.from_source(source_func, None, source_name, type_info)

    def create_input(self, input_format: InputFormat, type_info: Optional[TypeInformation] = None):
        """A stream from an InputFormat that can run here (see ``api.common.io``)."""
        if not hasattr(input_format, "engine_source"):
            raise TypeError(f"create_input() cannot run {type(input_format).__name__}: it needs "
                            "an input format that runs in Python; use env.from_source(...) "
                            "with a Source instead.")
        return self.from_source(input_format, None, "Custom Source", type_info)

    def read_text_file(self, file_path: str, charset_name: str = "UTF-8") -> DataStream:
        """The lines of a text file, or of the files under a directory (``file_path`` a local
        path or ``file://`` URI), read as ``FileSource`` with ``text_line_format`` reads
        them: large files are split over the parallel subtasks, a line ends at ``\\n``,
        ``\\r\\n`` or ``\\r``, and a final newline does not start an empty line."""
        codecs.lookup(charset_name)  # an unknown charset is a LookupError, as in Python
        source = FileSource.for_record_stream_format(
            StreamFormat.text_line_format(charset_name), file_path).build()
        return self.from_source(source, None, "Custom File Source")

    def enable_changelog_state_backend(self, enabled: bool) -> "StreamExecutionEnvironment":
        """Recorded only: every micro-batch already writes its state changes as a changelog."""
        self._changelog_state_backend = bool(enabled)
        return self

    def is_changelog_state_backend_enabled(self) -> Optional[bool]:
        """The value given to ``enable_changelog_state_backend``, or None if not set."""
        return self._changelog_state_backend

    def is_chaining_of_operators_with_different_max_parallelism_enabled(self) -> bool:
        """True: operators with different max parallelism are chained like any others."""
        return True

    def is_unaligned_checkpoints_enabled(self) -> bool:
        return self._checkpoint_config.is_unaligned_checkpoints_enabled()

    def is_force_unaligned_checkpoints(self) -> bool:
        return self._checkpoint_config.is_force_unaligned_checkpoints()

    def set_restart_strategy(self, restart_strategy_configuration) -> None:
        """Sets what happens when a micro-batch fails, e.g.
        ``env.set_restart_strategy(RestartStrategies.fixed_delay_restart(3, 1000))``: the
        job restarts from its last committed batch (see ``api.common.restart_strategy``)."""
        if not isinstance(restart_strategy_configuration, RestartStrategyConfiguration):
            raise TypeError(f"set_restart_strategy() expects a RestartStrategies "
                            f"configuration, got {type(restart_strategy_configuration).__name__}")
        self._config.set_restart_strategy(restart_strategy_configuration)

    def get_restart_strategy(self):
        """The recorded restart strategy (``RestartStrategies.fall_back_restart()`` if none)."""
        return self._config.get_restart_strategy()

    def set_stream_time_characteristic(self, characteristic: TimeCharacteristic) -> None:
        """Sets the time characteristic of the streams created from this environment:

        - ``time_window`` uses processing-time windows under ProcessingTime, event-time
          windows otherwise (each window assigner still names its own time);
        - under IngestionTime every source stamps each record with the processing time of
          the micro-batch it enters in, and watermarks follow those timestamps: set it
          before creating the sources;
        - ProcessingTime sets the auto watermark interval to 0; IngestionTime and
          EventTime set it to 200 ms if it was 0."""
        if not isinstance(characteristic, TimeCharacteristic):
            raise TypeError(f"set_stream_time_characteristic() expects a TimeCharacteristic, "
                            f"got {characteristic!r}")
        ingestion = TimeCharacteristic.IngestionTime
        if self._sources_created and (characteristic is ingestion) != \
                (self._time_characteristic is ingestion):
            raise ValueError("set_stream_time_characteristic(): IngestionTime applies to "
                             "sources as they are created, and this environment has sources "
                             "already: set the time characteristic before creating them.")
        self._time_characteristic = characteristic
        if characteristic is TimeCharacteristic.ProcessingTime:
            self._config.set_auto_watermark_interval(0)
        elif self._config.get_auto_watermark_interval() == 0:
            self._config.set_auto_watermark_interval(200)

    def get_stream_time_characteristic(self) -> TimeCharacteristic:
        return self._time_characteristic

    # JVM-only: jars and Java types have no use without a JVM (records are pickled Python
    # objects), so these record their arguments and change nothing.
    def add_jars(self, *jars_path: str) -> None:
        """JVM-only, no effect: recorded under ``pipeline.jars``."""
        self._conf["pipeline.jars"] = ";".join(
            filter(None, [self._conf.get("pipeline.jars"), *jars_path]))

    def add_classpaths(self, *classpaths: str) -> None:
        """JVM-only, no effect: recorded under ``pipeline.classpaths``."""
        self._conf["pipeline.classpaths"] = ";".join(
            filter(None, [self._conf.get("pipeline.classpaths"), *classpaths]))

    def register_type(self, type_class_name: str) -> None:
        """JVM-only, no effect: recorded in ``get_config().get_registered_kryo_types()``."""
        self._config.register_kryo_type(type_class_name)

    def add_default_kryo_serializer(self, type_class_name: str,
                                    serializer_class_name: str) -> None:
        """JVM-only, no effect: recorded in the ExecutionConfig."""
        self._config.add_default_kryo_serializer(type_class_name, serializer_class_name)

    def register_type_with_kryo_serializer(self, type_class_name: str,
                                           serializer_class_name: str) -> None:
        """JVM-only, no effect: recorded in the ExecutionConfig."""
        self._config.register_type_with_kryo_serializer(type_class_name, serializer_class_name)


def _convert_element(type_info: TypeInformation, index: int, element):
    try:
        return type_info.convert(element)
    except Exception as e:
        raise TypeError(f"from_collection(): element #{index} {element!r} does not match "
                        f"{type_info}: {e}") from e


class _AsyncRun:
    """Runs a job in a background thread for ``execute_async``."""

    def __init__(self, runner):
        self._runner = runner
        self._status = "RUNNING"
        self.future = concurrent.futures.Future()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        start = time.time()
        try:
            for _ in self._runner.batches():
                pass
        except BaseException as e:
            self._status = "FAILED"
            self.future.set_exception(e)
            return
        self._status = "CANCELED" if self._runner.cancelled and not self._runner.stopped \
            else "FINISHED"
        self.future.set_result(JobExecutionResult(JobID(self._runner.job_id),
                                                  int((time.time() - start) * 1000),
                                                  metrics=self._runner.metrics.snapshot()))

    def status(self) -> str:
        return "CANCELLING" if self._runner.cancelled and not self.future.done() else self._status

    def cancel(self) -> None:
        self._runner.cancel()

    def metrics(self):
        return self._runner.metrics.snapshot()

    def savepoint(self, directory, stop: bool = False, drain: bool = False):
        """A future of the path of a savepoint taken after the next committed batch."""
        if self.future.done():
            failed = concurrent.futures.Future()
            failed.set_exception(RuntimeError(
                f"The job is {self._status} and can no longer take a savepoint."))
            return failed
        return self._runner.request_savepoint(directory, stop, drain)
