"""StreamExecutionEnvironment, as in ``pyflink.datastream``: the context a job is built
and executed in. Jobs run on Spark (local mode by default) in micro-batches."""
import concurrent.futures
import os
import threading
import time
from functools import partial
from typing import Dict, List, Optional

from engine.graph import PlanError, Transformation, build_plan, execution_plan_json, reachable
from engine.job import JobSettings, create_runner
from engine.scheduler import CheckpointOptions
from engine.operators.io import SourceOperator
from engine.sources import CollectionSource

from api.common.configuration import Configuration
from api.common.execution_config import ExecutionConfig
from api.common.job_client import JobClient
from api.common.job_execution_result import JobExecutionResult, JobID
from api.common.typeinfo import Types, TypeInformation
from .checkpoint_config import SAVEPOINTS_DIR, CheckpointConfig, configure, configured
from .checkpoint_storage import local_path
from .checkpointing_mode import CheckpointingMode
from .checkpoint_config import checkpoint_directory, num_retained, savepoint_directory
from .externalized_checkpoint_retention import ExternalizedCheckpointRetention
from .data_stream import CloseableIterator, DataStream
from .execution_mode import RuntimeExecutionMode
from .state_backend import (EmbeddedRocksDBStateBackend, HashMapStateBackend, StateBackend,
                            _LegacyStateBackend)

DEFAULT_MAX_PARALLELISM = 128
DEFAULT_MICRO_BATCH_SIZE = 500_000
DEFAULT_MICRO_BATCH_INTERVAL_MS = 200

# Configuration keys of this project (the others are Flink's own).
MICRO_BATCH_SIZE = "execution.micro-batch.size"   # max records per source split and batch
MICRO_BATCH_INTERVAL = "execution.micro-batch.interval"  # ms; unbounded jobs' batch trigger
EXECUTOR = "execution.executor"                   # "spark" (default) or "local" (in-process)
SPARK_MASTER = "spark.master"                     # e.g. "spark://host:7077"; default local[*]
STATE_DIR = "state.checkpoints.dir"
STATE_BACKEND = "state.backend.type"
INCREMENTAL_CHECKPOINTS = "state.backend.incremental"  # RocksDB: incremental snapshots
SAVEPOINT_PATH = "execution.savepoint.path"       # restore from this checkpoint/savepoint
IGNORE_UNCLAIMED_STATE = "execution.savepoint.ignore-unclaimed-state"
DEFAULT_JOB_NAME = "Flink Streaming Job"             # "hashmap" (default) or "rocksdb"


class StreamExecutionEnvironment:
    """The context in which a streaming program is built and executed."""

    def __init__(self, configuration: Optional[Configuration] = None, spark_session=None):
        self._conf: Dict[str, str] = dict(configuration.to_dict()) if configuration else {}
        self._spark_session = spark_session
        self._parallelism = int(self._conf.get("parallelism.default", os.cpu_count() or 1))
        self._max_parallelism = int(self._conf.get("pipeline.max-parallelism",
                                                   DEFAULT_MAX_PARALLELISM))
        mode = self._conf.get("execution.runtime-mode", "STREAMING").upper()
        self._runtime_mode = RuntimeExecutionMode[mode]
        self._chaining = True
        self._buffer_timeout = 100
        self._config = ExecutionConfig()
        self._sinks: List[Transformation] = []
        self._state_backend = EmbeddedRocksDBStateBackend(
            self._conf.get(INCREMENTAL_CHECKPOINTS, "false").strip().lower() == "true") \
            if self._conf.get(STATE_BACKEND, "hashmap").lower() == "rocksdb" \
            else HashMapStateBackend()
        self._checkpoint_config = CheckpointConfig(self._conf)

    @staticmethod
    def get_execution_environment(configuration: Optional[Configuration] = None,
                                  spark_session=None) -> "StreamExecutionEnvironment":
        """Creates an environment. Jobs run on local Spark (``local[*]``) unless the
        configuration sets ``spark.master`` or a ``spark_session`` is given."""
        return StreamExecutionEnvironment(configuration, spark_session)

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

    def disable_operator_chaining(self) -> "StreamExecutionEnvironment":
        """Runs every operator in a stage of its own."""
        self._chaining = False
        return self

    def is_chaining_enabled(self) -> bool:
        return self._chaining

    def set_buffer_timeout(self, timeout_millis: int) -> "StreamExecutionEnvironment":
        """Accepted for compatibility: records cross stages once per micro-batch."""
        self._buffer_timeout = timeout_millis
        return self

    def get_buffer_timeout(self) -> int:
        return self._buffer_timeout

    def get_default_local_parallelism(self) -> int:
        return os.cpu_count() or 1

    # --- sources --------------------------------------------------------------
    def from_collection(self, collection: List, type_info: TypeInformation = None) -> DataStream:
        """A stream of the given elements (a non-parallel source). With ``type_info``,
        elements are converted to that type as PyFlink does (e.g. tuples to Rows)."""
        elements = list(collection)
        if type_info is not None:
            elements = [_convert_element(type_info, i, e) for i, e in enumerate(elements)]
        source = CollectionSource(elements)
        t = Transformation("source", "Source: Collection Source", [],
                           partial(SourceOperator, source.reader),
                           output_type=type_info or Types.PICKLED_BYTE_ARRAY(), parallelism=1,
                           pact="Data Source", source=source)
        return DataStream(self, t)

    def from_source(self, source, watermark_strategy, source_name: str,
                    type_info: TypeInformation = None) -> DataStream:
        """A stream from a Source such as ``NumberSequenceSource(start, end)``."""
        if not hasattr(source, "engine_source"):
            raise TypeError(f"from_source() does not support {type(source).__name__}")
        engine_source = source.engine_source()
        stamps_records = getattr(engine_source, "stamps_records", False)
        t = Transformation("source", f"Source: {source_name}", [],
                           partial(SourceOperator, engine_source.reader, stamps_records),
                           output_type=type_info or source.get_produced_type(),
                           parallelism=engine_source.parallelism,  # 1 if not parallel
                           pact="Data Source", source=engine_source)
        t.uses_time = stamps_records
        stream = DataStream(self, t)
        if watermark_strategy is None or watermark_strategy.is_no_watermarks():
            return stream
        return stream.assign_timestamps_and_watermarks(watermark_strategy)

    # --- execution ------------------------------------------------------------
    def _add_sink(self, sink: Transformation) -> None:
        self._sinks.append(sink)

    def _settings(self, sinks: List[Transformation], job_name: Optional[str] = None) -> JobSettings:
        bounded = all(t.source.bounded for t in reachable(sinks) if t.kind == "source")
        mode = self._runtime_mode
        if mode is RuntimeExecutionMode.AUTOMATIC:
            mode = RuntimeExecutionMode.BATCH if bounded else RuntimeExecutionMode.STREAMING
        if mode is RuntimeExecutionMode.BATCH and not bounded:
            raise PlanError("Detected an UNBOUNDED source with the 'execution.runtime-mode' "
                            "set to 'BATCH'. This combination is not allowed, please set the "
                            "'execution.runtime-mode' to STREAMING or AUTOMATIC")
        spark_conf = {k: v for k, v in self._conf.items()
                      if k.startswith("spark.") and k != SPARK_MASTER}
        return JobSettings(
            parallelism=self._parallelism, max_parallelism=self._max_parallelism,
            chaining_enabled=self._chaining, batch_mode=mode is RuntimeExecutionMode.BATCH,
            max_records_per_batch=int(self._conf.get(MICRO_BATCH_SIZE, DEFAULT_MICRO_BATCH_SIZE)),
            batch_interval_ms=int(self._conf.get(MICRO_BATCH_INTERVAL,
                                                 DEFAULT_MICRO_BATCH_INTERVAL_MS)),
            executor=self._conf.get(EXECUTOR, "spark"),
            spark_master=self._conf.get(SPARK_MASTER, "local[*]"), spark_conf=spark_conf,
            spark_session=self._spark_session, state_dir=checkpoint_directory(self._conf),
            job_parameters=self._config.get_global_job_parameters(),
            state_backend=self._state_backend.engine_kind,
            state_backend_options=self._state_backend.engine_options(),
            job_name=job_name or self._conf.get("pipeline.name", DEFAULT_JOB_NAME),
            checkpoints=self._checkpoint_options())

    def _checkpoint_options(self) -> CheckpointOptions:
        config = self._checkpoint_config
        interval = config.get_checkpoint_interval()
        retention = config.get_externalized_checkpoint_retention()
        return CheckpointOptions(
            interval_ms=interval if interval > 0 else None,
            min_pause_ms=config.get_min_pause_between_checkpoints(),
            num_retained=num_retained(self._conf),
            tolerable_failures=config.get_tolerable_checkpoint_failure_number(),
            retain_on_cancellation=(
                retention is ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION),
            restore_path=self._conf.get(SAVEPOINT_PATH),
            allow_non_restored_state=self._conf.get(
                IGNORE_UNCLAIMED_STATE, "false").strip().lower() == "true",
            savepoint_dir=savepoint_directory(self._conf))

    def _take_sinks(self, extra: Optional[Transformation] = None) -> List[Transformation]:
        sinks = self._sinks + ([extra] if extra is not None else [])
        self._sinks = []
        return sinks

    def execute(self, job_name: str = None) -> JobExecutionResult:
        """Runs the job until every source is finished; returns its JobExecutionResult."""
        sinks = self._take_sinks()
        runner = create_runner(sinks, self._settings(sinks, job_name))
        start = time.time()
        for _ in runner.batches():
            pass
        return JobExecutionResult(JobID(runner.job.run_id), int((time.time() - start) * 1000))

    def execute_async(self, job_name: str = DEFAULT_JOB_NAME) -> JobClient:
        """Starts the job in the background and returns a JobClient for it."""
        sinks = self._take_sinks()
        runner = create_runner(sinks, self._settings(sinks, job_name))
        return JobClient(JobID(runner.job.run_id), _AsyncRun(runner))

    def _execute_collect(self, sink: Transformation, publisher, job_name=None):
        sinks = self._take_sinks(sink)
        runner = create_runner(sinks, self._settings(sinks, job_name))
        return CloseableIterator(runner, publisher)

    def get_execution_plan(self) -> str:
        """The plan of the job built so far, as JSON in Flink's format."""
        settings = self._settings(self._sinks)
        plan = build_plan(self._sinks, settings.parallelism, settings.max_parallelism,
                          settings.chaining_enabled)
        return execution_plan_json(plan)


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
        self.future.set_result(JobExecutionResult(JobID(self._runner.job.run_id),
                                                  int((time.time() - start) * 1000)))

    def status(self) -> str:
        return "CANCELLING" if self._runner.cancelled and not self.future.done() else self._status

    def cancel(self) -> None:
        self._runner.cancel()

    def savepoint(self, directory, stop: bool = False, drain: bool = False):
        """A future of the path of a savepoint taken after the next committed batch."""
        if self.future.done():
            failed = concurrent.futures.Future()
            failed.set_exception(RuntimeError(
                f"The job is {self._status} and can no longer take a savepoint."))
            return failed
        return self._runner.request_savepoint(directory, stop, drain)
