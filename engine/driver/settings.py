"""A job's settings as the engine reads them: ``JobSettings``, built once by the API
(``api.datastream.job_settings``) and read by the driver, with the ``TaskSettings``
the tasks receive in the ``CompiledJob``."""
import os
from dataclasses import dataclass, field
from typing import Dict, Optional
from urllib.parse import quote

from engine.batch import TaskSettings
from engine.driver.restart import ClusterDefault, RestartPolicy
from engine.executor.python_dependencies import PythonDependencies


@dataclass
class CheckpointOptions:
    """Checkpointing as configured (``CheckpointConfig`` and ``execution.savepoint.*``)."""
    interval_ms: Optional[int] = None          # None: no periodic checkpoints
    min_pause_ms: int = 0
    num_retained: int = 1
    tolerable_failures: int = 0
    retain_on_cancellation: bool = False
    restore_path: Optional[str] = None         # execution.savepoint.path
    allow_non_restored_state: bool = False     # execution.savepoint.ignore-unclaimed-state
    trust_pickled_savepoint: bool = False      # execution.savepoint.trust-pickled
    savepoint_dir: Optional[str] = None        # default target of savepoints


@dataclass
class MetricsOptions:
    """Where metrics go besides ``JobClient``/``JobExecutionResult``: the progress line
    (``execution.progress.enabled``), Prometheus (``metrics.reporter.prom.host`` and
    ``.port``: None serves none); each batch's metrics are also appended to
    ``<job dir>/metrics.jsonl`` when the job has a checkpoint directory."""
    progress: bool = True
    prometheus_host: str = "127.0.0.1"
    prometheus_ports: Optional[range] = None


@dataclass
class RestOptions:
    """The REST API and dashboard (``rest.port``: None serves none; 0 a free port) on
    ``rest.address``; the calls that steer the job only where enabled:
    ``web.cancel.enable`` (cancel) and ``web.savepoint.enable`` (savepoint, stop)."""
    port: Optional[int] = None
    address: str = "127.0.0.1"
    cancel_enabled: bool = False
    savepoint_enabled: bool = False


@dataclass
class JobSettings:
    """Everything the environment decides about how a job runs."""
    parallelism: int
    max_parallelism: int
    chaining_enabled: bool
    batch_mode: bool
    max_records_per_batch: int
    batch_interval_ms: int           # an unbounded job starts a batch at most this often
    executor: str                    # "spark" or "local"
    spark_master: Optional[str]      # None: spark-submit's, else local[*]
    spark_conf: Dict[str, str] = field(default_factory=dict)
    spark_session: Optional[object] = None
    state_dir: Optional[str] = None  # checkpoint storage: <state_dir>/<job name>/
    job_parameters: Dict[str, str] = field(default_factory=dict)
    job_name: str = "Flink Streaming Job"
    task_settings: TaskSettings = field(default_factory=TaskSettings)
    checkpoints: CheckpointOptions = field(default_factory=CheckpointOptions)
    metrics: MetricsOptions = field(default_factory=MetricsOptions)
    rest: RestOptions = field(default_factory=RestOptions)
    python_dependencies: PythonDependencies = field(default_factory=PythonDependencies)
    restart: RestartPolicy = field(default_factory=ClusterDefault)

    @property
    def job_dir(self) -> Optional[str]:
        """This job's directory in the checkpoint storage (named after the job, so that
        running the same program again finds it)."""
        if self.state_dir is None:
            return None
        name = quote(self.job_name, safe=" ")
        if set(name) <= {"."}:  # "", "." and ".." would name the wrong directory
            name = name.replace(".", "%2E") or "%00"
        return os.path.join(self.state_dir, name)
