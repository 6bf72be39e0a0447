"""ExecutionConfig, as in ``pyflink.common.ExecutionConfig``.

Settings with an effect here: parallelism and max parallelism (the environment's own,
as in Flink), global job parameters, and auto-generated uids (disabled, every operator
must have a ``uid``). The others are recorded and read back but change nothing, each
saying why in its docstring: the JVM-only serializer switches (Kryo, Avro, POJO and
generic types) because records are Python objects pickled by cloudpickle; the task
cancellation and latency tracking settings because operators run inside micro-batches;
the closure cleaner because cloudpickle ships closures by value; object reuse because
Python passes references already.
"""
import os
from typing import Dict, List

from .restart_strategy import RestartStrategies, RestartStrategyConfiguration

MAX_PARALLELISM_UPPER_BOUND = 32768


class ExecutionConfig:
    """How a job runs: parallelism, job parameters, watermark interval, and more."""

    def __init__(self):
        self._parallelism = os.cpu_count() or 1
        self._max_parallelism = 128
        self._global_job_parameters: Dict[str, str] = {}
        self._auto_watermark_interval = 200
        self._latency_tracking_interval = 0
        self._task_cancellation_interval = 30000
        self._task_cancellation_timeout = 180000
        self._closure_cleaner = True
        self._generic_types = True
        self._auto_generated_uids = True
        self._force_kryo = False
        self._force_avro = False
        self._object_reuse = False
        self._snapshot_compression = False
        self._restart_strategy = None
        self._registered_kryo_types: List[str] = []
        self._registered_pojo_types: List[str] = []
        self._default_kryo_serializers: Dict[str, str] = {}
        self._kryo_type_serializers: Dict[str, str] = {}

    # --- settings with an effect ------------------------------------------------------------
    def get_parallelism(self) -> int:
        """The default parallelism of operators (the environment's parallelism)."""
        return self._parallelism

    def set_parallelism(self, parallelism: int) -> "ExecutionConfig":
        """Sets the default parallelism of operators; -1 restores the default (the number
        of CPUs)."""
        if parallelism == -1:
            parallelism = os.cpu_count() or 1
        if parallelism < 1:
            raise ValueError("Parallelism must be at least one, or "
                             "ExecutionConfig.PARALLELISM_DEFAULT (use system default).")
        self._parallelism = parallelism
        return self

    def get_max_parallelism(self) -> int:
        """The maximum parallelism: the number of key groups of keyed state."""
        return self._max_parallelism

    def set_max_parallelism(self, max_parallelism: int) -> "ExecutionConfig":
        """Sets the maximum parallelism (the number of key groups of keyed state)."""
        if not 0 < max_parallelism <= MAX_PARALLELISM_UPPER_BOUND:
            raise ValueError("The maximum parallelism must be between 1 and "
                             f"{MAX_PARALLELISM_UPPER_BOUND}.")
        self._max_parallelism = max_parallelism
        return self

    def set_global_job_parameters(self, global_job_parameters_dict: Dict) -> "ExecutionConfig":
        """Sets parameters readable by every function through
        ``RuntimeContext.get_job_parameter(key, default)``."""
        self._global_job_parameters = {str(k): str(v)
                                       for k, v in global_job_parameters_dict.items()}
        return self

    def get_global_job_parameters(self) -> Dict[str, str]:
        return dict(self._global_job_parameters)

    def enable_auto_generated_uids(self) -> "ExecutionConfig":
        """Operators without a ``uid`` get one generated from the job's structure (default)."""
        self._auto_generated_uids = True
        return self

    def disable_auto_generated_uids(self) -> "ExecutionConfig":
        """Every operator must have a ``uid``: building the job fails otherwise, so state
        never silently depends on the job's structure."""
        self._auto_generated_uids = False
        return self

    def has_auto_generated_uids_enabled(self) -> bool:
        return self._auto_generated_uids

    # --- recorded, with no effect here ------------------------------------------------------
    def set_auto_watermark_interval(self, interval: int) -> "ExecutionConfig":
        """Interval (ms) of periodic watermark emission. Recorded only: the watermark here
        advances once per micro-batch (see ``execution.micro-batch.interval``)."""
        if interval < 0:
            raise ValueError("Auto watermark interval must not be negative.")
        self._auto_watermark_interval = interval
        return self

    def get_auto_watermark_interval(self) -> int:
        return self._auto_watermark_interval

    def set_latency_tracking_interval(self, interval: int) -> "ExecutionConfig":
        """Recorded only: there are no latency markers here."""
        self._latency_tracking_interval = interval
        return self

    def get_latency_tracking_interval(self) -> int:
        return self._latency_tracking_interval

    def set_task_cancellation_interval(self, interval: int) -> "ExecutionConfig":
        """Recorded only: a job is cancelled between micro-batches."""
        self._task_cancellation_interval = interval
        return self

    def get_task_cancellation_interval(self) -> int:
        return self._task_cancellation_interval

    def set_task_cancellation_timeout(self, timeout: int) -> "ExecutionConfig":
        """Recorded only: a job is cancelled between micro-batches."""
        if timeout < 0:
            raise ValueError("Timeout needs to be >= 0.")
        self._task_cancellation_timeout = timeout
        return self

    def get_task_cancellation_timeout(self) -> int:
        return self._task_cancellation_timeout

    def enable_closure_cleaner(self) -> "ExecutionConfig":
        """Recorded only: cloudpickle ships a function's closure by value."""
        self._closure_cleaner = True
        return self

    def disable_closure_cleaner(self) -> "ExecutionConfig":
        """Recorded only: cloudpickle ships a function's closure by value."""
        self._closure_cleaner = False
        return self

    def is_closure_cleaner_enabled(self) -> bool:
        return self._closure_cleaner

    def enable_object_reuse(self) -> "ExecutionConfig":
        """Lets records be shared between operators instead of copied: where a batch runs
        as one Spark stage (a local master, see the README's "How it runs"), the records a
        subtask sends to its own partition index of the next stage then stay in its
        process, neither pickled nor copied (faster; a function that changes a record in
        place changes it for the operator that emitted it too). Chained operators share
        records either way."""
        self._object_reuse = True
        return self

    def disable_object_reuse(self) -> "ExecutionConfig":
        """Records crossing from one stage to the next are copies (the default)."""
        self._object_reuse = False
        return self

    def is_object_reuse_enabled(self) -> bool:
        return self._object_reuse

    def set_use_snapshot_compression(self, use_snapshot_compression: bool) -> "ExecutionConfig":
        """Recorded only: snapshots are written uncompressed."""
        self._snapshot_compression = bool(use_snapshot_compression)
        return self

    def is_use_snapshot_compression(self) -> bool:
        return self._snapshot_compression

    def set_restart_strategy(self, restart_strategy_configuration: RestartStrategyConfiguration
                             ) -> "ExecutionConfig":
        """Records a RestartStrategies configuration (see ``api.common.restart_strategy``)."""
        self._restart_strategy = restart_strategy_configuration
        return self

    def get_restart_strategy(self) -> RestartStrategyConfiguration:
        """The recorded restart strategy; ``RestartStrategies.fall_back_restart()`` if none."""
        return self._restart_strategy or RestartStrategies.fall_back_restart()

    # --- JVM serializer switches: recorded, no effect (records are pickled Python objects) ---
    def enable_generic_types(self) -> "ExecutionConfig":
        """JVM-only, no effect: records without a declared type are pickled by cloudpickle."""
        self._generic_types = True
        return self

    def disable_generic_types(self) -> "ExecutionConfig":
        """JVM-only, no effect: records without a declared type are pickled by cloudpickle
        (in PyFlink too they are a byte array type, never a generic Kryo type)."""
        self._generic_types = False
        return self

    def has_generic_types_disabled(self) -> bool:
        return not self._generic_types

    def enable_force_kryo(self) -> "ExecutionConfig":
        """JVM-only, no effect: there is no Kryo here."""
        self._force_kryo = True
        return self

    def disable_force_kryo(self) -> "ExecutionConfig":
        """JVM-only, no effect: there is no Kryo here."""
        self._force_kryo = False
        return self

    def is_force_kryo_enabled(self) -> bool:
        return self._force_kryo

    def enable_force_avro(self) -> "ExecutionConfig":
        """JVM-only, no effect: there is no Avro serializer for POJOs here."""
        self._force_avro = True
        return self

    def disable_force_avro(self) -> "ExecutionConfig":
        """JVM-only, no effect: there is no Avro serializer for POJOs here."""
        self._force_avro = False
        return self

    def is_force_avro_enabled(self) -> bool:
        return self._force_avro

    def add_default_kryo_serializer(self, type_class_name: str,
                                    serializer_class_name: str) -> "ExecutionConfig":
        """JVM-only, recorded with no effect: there is no Kryo here."""
        self._default_kryo_serializers[type_class_name] = serializer_class_name
        return self

    def get_default_kryo_serializer_classes(self) -> Dict[str, str]:
        return dict(self._default_kryo_serializers)

    def register_type_with_kryo_serializer(self, type_class_name: str,
                                           serializer_class_name: str) -> "ExecutionConfig":
        """JVM-only, recorded with no effect: there is no Kryo here."""
        self._kryo_type_serializers[type_class_name] = serializer_class_name
        return self

    def get_registered_types_with_kryo_serializer_classes(self) -> Dict[str, str]:
        return dict(self._kryo_type_serializers)

    def register_kryo_type(self, type_class_name: str) -> "ExecutionConfig":
        """JVM-only, recorded with no effect: there is no Kryo here."""
        if type_class_name not in self._registered_kryo_types:
            self._registered_kryo_types.append(type_class_name)
        return self

    def get_registered_kryo_types(self) -> List[str]:
        return list(self._registered_kryo_types)

    def register_pojo_type(self, type_class_name: str) -> "ExecutionConfig":
        """JVM-only, recorded with no effect: there are no Java POJOs here."""
        if type_class_name not in self._registered_pojo_types:
            self._registered_pojo_types.append(type_class_name)
        return self

    def get_registered_pojo_types(self) -> List[str]:
        return list(self._registered_pojo_types)
