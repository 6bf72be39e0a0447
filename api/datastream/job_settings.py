"""A job's settings, from its StreamExecutionEnvironment: this project's configuration
keys, ``apply_configuration`` (how a ``Configuration`` sets an environment's settings) and
``job_settings`` (the engine's ``JobSettings`` of a job, from the environment's
configuration and what its setters set: parallelism, runtime mode, checkpoint config,
state backend, restart strategy, ...). The environment's other half: both read and write
its settings."""
import os
from typing import Dict, List, Optional

from checkpoint import storage
from core.private_paths import GROUP_ACCESS_OPTION
from engine.batch import TaskSettings
from engine.graph import PlanError, Transformation, reachable
from engine.driver.metric_reporters import parse_ports
from engine.driver.settings import CheckpointOptions, JobSettings, MetricsOptions, RestOptions
from engine.executor.python_dependencies import PythonDependencies
from statebackends.base import ALLOW_PICKLED_OPTION, TRUST_SAVEPOINT_OPTION

from api.common.configuration import Configuration
from .checkpoint_config import (CheckpointConfig, _millis, checkpoint_directory, num_retained,
                                savepoint_directory)
from .data_stream import COLLECT_SINK
from .execution_mode import RuntimeExecutionMode
from .externalized_checkpoint_retention import ExternalizedCheckpointRetention
from .state_backend import EmbeddedRocksDBStateBackend, HashMapStateBackend

DEFAULT_MAX_PARALLELISM = 128
DEFAULT_MICRO_BATCH_SIZE = 500_000
DEFAULT_MICRO_BATCH_INTERVAL_MS = 200
DEFAULT_JOB_NAME = "Flink Streaming Job"

# Configuration keys of this project (the others are Flink's own).
MICRO_BATCH_SIZE = "execution.micro-batch.size"   # max records per source split and batch
MICRO_BATCH_INTERVAL = "execution.micro-batch.interval"  # ms; unbounded jobs' batch trigger
EXECUTOR = "execution.executor"                   # "spark" (default) or "local" (in-process)
SPARK_MASTER = "spark.master"  # e.g. "spark://host:7077"; default spark-submit's, else local[*]
STATE_DIR = "state.checkpoints.dir"
GROUP_ACCESS = GROUP_ACCESS_OPTION  # local state files 0770/0660, not 0700/0600
STATE_BACKEND = "state.backend.type"                # "hashmap" (default) or "rocksdb"
INCREMENTAL_CHECKPOINTS = "state.backend.incremental"  # RocksDB: incremental snapshots
SAVEPOINT_PATH = "execution.savepoint.path"       # restore from this checkpoint/savepoint
IGNORE_UNCLAIMED_STATE = "execution.savepoint.ignore-unclaimed-state"
ALLOW_PICKLED_STATE = ALLOW_PICKLED_OPTION       # "false": state is data, nothing unpickled
GLOBAL_JOB_PARAMETERS = "pipeline.global-job-parameters"  # "k1:v1,k2:v2"
PROGRESS = "execution.progress.enabled"           # live progress line (stdout a terminal)
PROMETHEUS_PORT = "metrics.reporter.prom.port"    # serve metrics: a port or "9249-9260"
PROMETHEUS_HOST = "metrics.reporter.prom.host"    # default 127.0.0.1
REST_PORT = "rest.port"                           # serve the REST API and dashboard
REST_ADDRESS = "rest.address"                     # default 127.0.0.1
REST_CANCEL = "web.cancel.enable"                 # cancel over REST (default false)
REST_SAVEPOINT = "web.savepoint.enable"           # savepoint and stop over REST (default false)


def apply_configuration(env, configuration: Configuration) -> None:
    """Applies the options set in ``configuration`` to the environment ``env`` (see
    ``StreamExecutionEnvironment.configure``); the others keep their values."""
    options = configuration.to_dict()
    env._conf.update(options)
    config = env.get_config()
    settings = {
        "parallelism.default": lambda v: env.set_parallelism(int(v)),
        "pipeline.max-parallelism": lambda v: env.set_max_parallelism(int(v)),
        "execution.runtime-mode": lambda v: env.set_runtime_mode(
            RuntimeExecutionMode[v.strip().upper()]),
        GLOBAL_JOB_PARAMETERS: lambda v: config.set_global_job_parameters(
            _parse_job_parameters(v)),
        "pipeline.object-reuse": lambda v: (
            config.enable_object_reuse() if _boolean("pipeline.object-reuse", v)
            else config.disable_object_reuse()),
        "pipeline.operator-chaining.enabled": lambda v: setattr(
            env, "_chaining", _boolean("pipeline.operator-chaining.enabled", v)),
        "pipeline.auto-generate-uids": lambda v: (
            config.enable_auto_generated_uids() if _boolean("pipeline.auto-generate-uids", v)
            else config.disable_auto_generated_uids()),
        "pipeline.auto-watermark-interval": lambda v: config.set_auto_watermark_interval(
            _millis(options, "pipeline.auto-watermark-interval", 200)),
    }
    for key, apply in settings.items():
        if key in options:
            apply(options[key])
    if STATE_BACKEND in options or INCREMENTAL_CHECKPOINTS in options:
        incremental = _option(env._conf, INCREMENTAL_CHECKPOINTS, False)
        env.set_state_backend(
            EmbeddedRocksDBStateBackend(incremental)
            if env._conf.get(STATE_BACKEND, "hashmap").lower() == "rocksdb"
            else HashMapStateBackend())


def job_settings(env, defined: List[Transformation], job_name: Optional[str] = None,
                 progress: bool = True) -> JobSettings:
    """The engine's settings of the job of ``defined`` (its operators and sinks) built in
    ``env``; with ``progress``
    False, no progress line whatever is configured. Fails (PlanError) if the job does not
    fit its settings: an unbounded source in BATCH mode, or an operator without a uid
    while auto-generated uids are disabled."""
    conf, config = env._conf, env.get_config()
    transformations = reachable(defined)
    _check_uids(transformations, config.has_auto_generated_uids_enabled())
    bounded = all(t.source.bounded for t in transformations if t.kind == "source")
    mode = env._runtime_mode
    if mode is RuntimeExecutionMode.AUTOMATIC:
        mode = RuntimeExecutionMode.BATCH if bounded else RuntimeExecutionMode.STREAMING
    if mode is RuntimeExecutionMode.BATCH and not bounded:
        raise PlanError("Detected an UNBOUNDED source with the 'execution.runtime-mode' "
                        "set to 'BATCH'. This combination is not allowed, please set the "
                        "'execution.runtime-mode' to STREAMING or AUTOMATIC")
    state_backend = env.get_state_backend()
    return JobSettings(
        parallelism=env.get_parallelism(), max_parallelism=env.get_max_parallelism(),
        chaining_enabled=env.is_chaining_enabled(),
        batch_mode=mode is RuntimeExecutionMode.BATCH,
        max_records_per_batch=int(conf.get(MICRO_BATCH_SIZE, DEFAULT_MICRO_BATCH_SIZE)),
        batch_interval_ms=min([env.get_buffer_timeout()] + [
            t.buffer_timeout for t in transformations if t.buffer_timeout is not None]),
        executor=conf.get(EXECUTOR, "spark"),
        spark_master=conf.get(SPARK_MASTER),
        spark_conf={k: v for k, v in conf.items() if k.startswith("spark.") and k != SPARK_MASTER},
        spark_session=env._spark_session,
        state_dir=_absolute(checkpoint_directory(conf)),
        job_parameters=config.get_global_job_parameters(),
        job_name=job_name or conf.get("pipeline.name", DEFAULT_JOB_NAME),
        task_settings=TaskSettings(
            state_backend=state_backend.engine_kind,
            state_backend_options=dict(state_backend.engine_options(),
                                       allow_pickled=_option(conf, ALLOW_PICKLED_STATE, True)),
            storage_options=storage.options_from_configuration(conf),
            group_access=_option(conf, GROUP_ACCESS, False),
            object_reuse=config.is_object_reuse_enabled()),
        checkpoints=_checkpoint_options(env.get_checkpoint_config(), conf),
        metrics=_metrics_options(conf, progress),
        rest=_rest_options(conf),
        python_dependencies=PythonDependencies.from_configuration(
            conf, tuple(env._cached_files)),
        restart=env.get_restart_strategy()._engine_policy())


def _metrics_options(conf: Dict[str, str], progress: bool) -> MetricsOptions:
    port = conf.get(PROMETHEUS_PORT)
    return MetricsOptions(
        progress=progress and _option(conf, PROGRESS, True),
        prometheus_host=conf.get(PROMETHEUS_HOST, "127.0.0.1"),
        prometheus_ports=None if port is None else parse_ports(port))


def _rest_options(conf: Dict[str, str]) -> RestOptions:
    port = conf.get(REST_PORT)
    if port is not None:
        try:
            port = int(str(port).strip())
        except ValueError:
            port = -1
        if not 0 <= port <= 65535:
            raise ValueError(f"Configuration option '{REST_PORT}' takes a port within "
                             f"0-65535, not {conf[REST_PORT]!r}")
    return RestOptions(port=port, address=conf.get(REST_ADDRESS, "127.0.0.1"),
                       cancel_enabled=_option(conf, REST_CANCEL, False),
                       savepoint_enabled=_option(conf, REST_SAVEPOINT, False))


def _checkpoint_options(config: CheckpointConfig, conf: Dict[str, str]) -> CheckpointOptions:
    interval = config.get_checkpoint_interval()
    retention = config.get_externalized_checkpoint_retention()
    return CheckpointOptions(
        interval_ms=interval if interval > 0 else None,
        min_pause_ms=config.get_min_pause_between_checkpoints(),
        num_retained=num_retained(conf),
        tolerable_failures=config.get_tolerable_checkpoint_failure_number(),
        retain_on_cancellation=(
            retention is ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION),
        restore_path=conf.get(SAVEPOINT_PATH),
        allow_non_restored_state=_option(conf, IGNORE_UNCLAIMED_STATE, False),
        trust_pickled_savepoint=_option(conf, TRUST_SAVEPOINT_OPTION, False),
        savepoint_dir=savepoint_directory(conf))


def _check_uids(transformations: List[Transformation], auto_generated_uids: bool) -> None:
    """With auto-generated uids disabled, every operator needs a uid (as in Flink, the
    sink of ``execute_and_collect`` excepted)."""
    if auto_generated_uids:
        return
    for t in transformations:
        if t.physical and t.uid is None and t.uid_hash is None and t.name != COLLECT_SINK:
            raise PlanError("Auto generated UIDs have been disabled but no UID or hash has "
                            f"been assigned to operator {t.name}: set one with .uid(...)")


def _absolute(path: Optional[str]) -> Optional[str]:
    # Tasks may run in another working directory (a job's archives and cached files).
    return path if path is None or storage.is_url(path) else os.path.abspath(path)


def _boolean(key: str, value) -> bool:
    """The boolean option ``key``'s ``value``: ``true`` or ``false`` (any case, blanks
    around), as Flink reads it; anything else is an error naming the key, so that a
    value meant as "no" never reads as "yes"."""
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ValueError(f"Configuration option '{key}' takes true or false, not {value!r}")
    return text == "true"


def _option(conf: Dict[str, str], key: str, default: bool) -> bool:
    """The boolean option ``key`` of ``conf`` (see ``_boolean``), ``default`` if unset."""
    return default if key not in conf else _boolean(key, conf[key])


def _parse_job_parameters(value: str) -> Dict[str, str]:
    """``pipeline.global-job-parameters`` as Flink reads it: ``k1:v1,k2:v2``, blanks
    around keys and values dropped."""
    items = [item.strip() for item in value.split(",")]
    if items and not items[0]:
        items = items[1:]   # Flink accepts one leading and one trailing comma
    if items and not items[-1]:
        items = items[:-1]
    parameters: Dict[str, str] = {}
    for item in items:
        key, colon, rest = item.partition(":")
        if not colon or not key.strip() or not rest.strip() or ":" in rest:
            raise ValueError(f"Could not parse value {value!r} for key "
                             f"'{GLOBAL_JOB_PARAMETERS}': {item!r} is not a key:value pair")
        if key.strip() in parameters:
            raise ValueError(f"Could not parse value {value!r} for key "
                             f"'{GLOBAL_JOB_PARAMETERS}': duplicate key {key.strip()!r}")
        parameters[key.strip()] = rest.strip()
    return parameters
