"""From the API's transformations to a running job: plan, serialize, pick an executor."""
import os
import shutil
import sys
import uuid
from typing import Dict, List

import cloudpickle

from checkpoint import storage

from engine.graph import PlanError, Transformation, build_plan, reachable
from engine.executor.python_dependencies import check_requirements, staging_directory
from engine.driver.scheduler import JobRunner, SinkNode
from engine.driver.settings import JobSettings
from engine.batch import CompiledJob
from engine.runtime.state_backends import check_state_backend


def compile_job(defined: List[Transformation], settings: JobSettings) -> CompiledJob:
    """Plans the job of ``defined`` (every operator and sink the program defined, with or
    without a sink after it, as Flink runs them) and pickles each operator; fails here,
    before anything runs, if an operator's function cannot be serialized."""
    if not defined:
        raise PlanError("No operators defined in streaming topology. Cannot execute.")
    plan = build_plan(defined, settings.parallelism, settings.max_parallelism,
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
    check_state_backend(settings.task_settings.state_backend)
    return CompiledJob(uuid.uuid4().hex, plan, factories, settings.task_settings)


RELATIVE_EXECUTABLE = (
    "python.executable {!r} is a relative path (an interpreter inside an archive): Spark "
    "starts a worker's Python before it unpacks a job's files. Install the interpreter on "
    "every worker and give its absolute path, or ship a packed virtual environment the "
    "Spark way: 'spark.archives' = 'venv.tar.gz#environment' and PYSPARK_PYTHON="
    "./environment/bin/python, set before the Spark session starts (YARN, Kubernetes).")


def make_executor(settings: JobSettings):
    """The executor of ``settings.executor``, with the job's Python dependencies packed for
    it. Requirements are checked on the driver where the tasks run on this machine, and
    shipped to be checked on the workers otherwise."""
    dependencies = settings.python_dependencies
    if settings.executor == "local":
        from engine.executor.local import LocalExecutor
        if dependencies.executable is not None and \
                not same_interpreter(dependencies.executable, sys.executable):
            raise ValueError(f"python.executable {dependencies.executable!r}: the 'local' "
                             f"executor runs the tasks in this process ({sys.executable})")
        if dependencies.requirements is not None:
            check_requirements(dependencies.requirements_file(), sys.executable)
        return LocalExecutor(dependencies.pack(staging_directory(), ship_requirements=False))
    if settings.executor != "spark":
        raise ValueError(f"unknown executor {settings.executor!r}: use 'spark' or 'local'")
    from engine.executor.spark import SparkExecutor
    executable = dependencies.executable
    if executable is not None and not os.path.isabs(executable):
        raise ValueError(RELATIVE_EXECUTABLE.format(executable))
    session = spark_session(settings)
    workers_python = session.sparkContext.pythonExec
    if executable is not None and not same_interpreter(executable, workers_python):
        raise ValueError(f"python.executable {executable!r}: the Spark session already runs "
                         f"its Python workers with {workers_python!r}; set it before the "
                         "session starts (the first job of this process)")
    on_this_machine = session.sparkContext.master.startswith("local")
    if dependencies.requirements is not None and on_this_machine:
        check_requirements(dependencies.requirements_file(), workers_python)
    return SparkExecutor(session, dependencies.pack(staging_directory(),
                                                    ship_requirements=not on_this_machine),
                         settings.restart.retry_tasks)


def spark_session(settings: JobSettings):
    """The Spark session a job runs on: the environment's own, else the one its settings
    describe (started if there is none yet)."""
    from engine.executor.spark import get_spark_session
    return settings.spark_session or get_spark_session(
        settings.spark_master, settings.spark_conf, settings.python_dependencies.executable)


def same_interpreter(a: str, b: str) -> bool:
    """Whether two interpreter names (paths, or names found on PATH) are the same file
    path; a virtual environment's python is not its base interpreter."""
    return os.path.abspath(shutil.which(a) or a) == os.path.abspath(shutil.which(b) or b)


def _check_storage(settings: JobSettings, transformations: Dict[int, Transformation]) -> None:
    """A checkpoint directory on an object store must be reachable from here, and no sink
    may stage its batches in it (staged sinks write local files under the job's
    directory)."""
    if settings.state_dir is None or not storage.is_url(settings.state_dir):
        return
    storage.check_url(settings.state_dir)
    for t in transformations.values():
        if t.kind == "sink" and t.sink.stages_in_job_directory:
            raise PlanError(
                f"Sink '{t.name}' stages each batch in files under the job's checkpoint "
                f"directory, which must then be a local or mounted path, not "
                f"{settings.state_dir!r}: use a local 'state.checkpoints.dir' for this job.")


def create_runner(defined: List[Transformation], settings: JobSettings) -> JobRunner:
    job = compile_job(defined, settings)
    transformations = {t.id: t for t in reachable(defined)}
    storage.configure(settings.task_settings.storage_options,  # (as each task does)
                      settings.task_settings.group_access)
    _check_storage(settings, transformations)
    sources = {n: transformations[n].source for n in job.plan.nodes
               if transformations[n].kind == "source"}
    sinks = {n: SinkNode(job.plan.nodes[n].uid, transformations[n].sink.create_committer(),
                         job.plan.nodes[n].parallelism)
             for n in job.plan.nodes if transformations[n].kind == "sink"}
    executor = make_executor(settings)
    if settings.state_dir is None and not executor.shares_driver_disk and any(
            node.keyed for node in job.plan.nodes.values()):
        raise PlanError("A job with keyed state on a Spark cluster needs "
                        "'state.checkpoints.dir' set to storage every worker can reach "
                        "(e.g. a shared file system mount).")
    return JobRunner(job, sources, sinks, executor, settings)

