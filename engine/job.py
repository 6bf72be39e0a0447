"""From the API's transformations to a running job: plan, serialize, pick an executor."""
import os
import uuid
from dataclasses import dataclass, field
from typing import Dict, List, Optional
from urllib.parse import quote

import cloudpickle

from .graph import PlanError, Transformation, build_plan, reachable
from .scheduler import CheckpointOptions, JobRunner, RunOptions
from .batch import CompiledJob
from .state_backends import check_state_backend


@dataclass
class JobSettings:
    """Everything the environment decides about how a job runs."""
    parallelism: int
    max_parallelism: int
    chaining_enabled: bool
    batch_mode: bool
    max_records_per_batch: int
    batch_interval_ms: int
    executor: str                    # "spark" or "local"
    spark_master: str
    spark_conf: Dict[str, str] = field(default_factory=dict)
    spark_session: Optional[object] = None
    state_dir: Optional[str] = None  # checkpoint storage: <state_dir>/<job name>/
    job_parameters: Dict[str, str] = field(default_factory=dict)
    state_backend: str = "hashmap"  # "hashmap" or "rocksdb"
    state_backend_options: Dict[str, object] = field(default_factory=dict)
    job_name: str = "Flink Streaming Job"
    checkpoints: CheckpointOptions = field(default_factory=CheckpointOptions)

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


def compile_job(sinks: List[Transformation], settings: JobSettings) -> CompiledJob:
    """Plans the job and pickles each operator; fails here, before anything runs, if an
    operator's function cannot be serialized."""
    if not sinks:
        raise PlanError("No operators defined in streaming topology. Cannot execute.")
    plan = build_plan(sinks, settings.parallelism, settings.max_parallelism,
                      settings.chaining_enabled)
    factories = {}
    for node in plan.nodes.values():
        try:
            factories[node.id] = cloudpickle.dumps(node.operator_factory)
        except Exception as e:
            raise TypeError(
                f"The function of operator '{node.name}' cannot be serialized to ship it to "
                f"the workers: {type(e).__name__}: {e}. Functions may not capture locks, "
                "open files, sockets or sessions; create those in open().") from e
    check_state_backend(settings.state_backend)
    return CompiledJob(uuid.uuid4().hex, plan, factories, settings.state_backend,
                       dict(settings.state_backend_options))


def make_executor(settings: JobSettings):
    if settings.executor == "local":
        from .executor.local import LocalExecutor
        return LocalExecutor()
    if settings.executor != "spark":
        raise ValueError(f"unknown executor {settings.executor!r}: use 'spark' or 'local'")
    from .executor.spark import SparkExecutor, get_spark_session
    session = settings.spark_session or get_spark_session(settings.spark_master,
                                                          settings.spark_conf)
    return SparkExecutor(session)


def create_runner(sinks: List[Transformation], settings: JobSettings) -> JobRunner:
    job = compile_job(sinks, settings)
    transformations = {t.id: t for t in reachable(sinks)}
    sources = {n: transformations[n].source for n in job.plan.nodes
               if transformations[n].kind == "source"}
    publishers = {n: transformations[n].publisher_factory(job.plan.nodes[n]) for n in job.plan.nodes
                  if transformations[n].kind == "sink"}
    options = RunOptions(settings.max_records_per_batch, settings.batch_mode,
                         settings.job_dir, dict(settings.job_parameters),
                         batch_interval_ms=settings.batch_interval_ms,
                         job_name=settings.job_name, state_backend=settings.state_backend,
                         checkpoints=settings.checkpoints)
    executor = make_executor(settings)
    if settings.state_dir is None and not executor.shares_driver_disk and any(
            node.keyed for node in job.plan.nodes.values()):
        raise PlanError("A job with keyed state on a Spark cluster needs "
                        "'state.checkpoints.dir' set to storage every worker can reach "
                        "(e.g. a shared file system mount).")
    return JobRunner(job, sources, publishers, executor, options)

