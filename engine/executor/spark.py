"""The Spark executor: the only module that talks to Spark.

Each micro-batch is one Spark job: every stage is a ``mapPartitionsWithIndex``
over the previous stages' chunks, moved by ``partitionBy`` on the target
partition index (with a local master, a chunk's records wait in a file of the
batch's exchange directory and the shuffle moves the file's name). A stage's
results for the driver travel with its chunks to its first downstream stage, so
the driver collects the last stages only; a stage feeding several stages is
persisted for the batch, so that it runs once.

On a local master that can run all of a batch's subtasks at once and does not retry
tasks, a batch of several stages is instead one barrier stage of a task per partition
index (``partition_task``): a departure from the design's stage-per-stage job, which
saves Spark's ~40-100 ms between two stages.
"""
import concurrent.futures
import dataclasses
import functools
import itertools
import logging
import os
import re
import shutil
import socket
import sys
import threading
from typing import Callable, Dict, List, Optional

import cloudpickle

from engine.errors import JobExecutionException
from engine.batch import BatchInfo, CompiledJob, DataChunk, Printed, TaskFailure, for_driver
from engine.executor.python_dependencies import Bundle, restore_working_directory
from engine.runtime.task import configure_storage, job_of, run_task
from engine.executor.base import Executor
from engine.executor.partition_task import run_partition, stage_steps
from engine.executor.task_host import (HostGone, commit_hosted, host_name, hosts_supported,
                                       remove_run, run_directory, run_hosted,
                                       run_in_running_host)

log = logging.getLogger(__name__)

LOG4J_CONFIG = os.path.join(os.path.dirname(__file__), "log4j2.properties")
# The JVM of a session we start (with a local master, also Spark's executor) schedules
# tasks and moves chunks' file names: little work, which its quick JIT compiler (C1)
# serves. Its optimizing compiler (C2) would take 0.3-0.6 s of CPU in each of a job's
# first batches, on the cores the Python tasks need.
DRIVER_JAVA_OPTIONS = f"-Dlog4j2.configurationFile=file:{LOG4J_CONFIG} -XX:TieredStopAtLevel=1"

JAVA_MISSING = ("Spark needs Java 17 or newer, and no 'java' was found on PATH or in "
                "JAVA_HOME. Install a JDK (e.g. 'apt-get install openjdk-17-jre-headless') "
                "or set JAVA_HOME.")


def _check_java() -> None:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and os.path.exists(os.path.join(java_home, "bin", "java")):
        return
    if shutil.which("java") is None:
        raise RuntimeError(JAVA_MISSING)


# Client libraries whose INFO lines (e.g. py4j's "Closing down clientserver connection")
# would reach a program that logs to stdout at INFO; PyFlink's client keeps them quiet.
CLIENT_LOGGERS = ("py4j", "pyspark")


def _quiet_client_loggers() -> None:
    """Sets the client libraries' loggers to WARNING unless the user set their level."""
    for name in CLIENT_LOGGERS:
        logger = logging.getLogger(name)
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.WARNING)


def get_spark_session(master: Optional[str], conf: Dict[str, str],
                      python_executable: Optional[str] = None):
    """The active SparkSession, or a new quiet one for ``master`` with ``conf`` whose
    Python workers run ``python_executable`` (default: the driver's interpreter).
    ``master`` None: spark-submit's ``--master`` (or ``spark.master`` of
    spark-defaults.conf), else ``local[*]``."""
    from pyspark.sql import SparkSession
    _quiet_client_loggers()
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    _check_java()
    # Workers must import what the driver imports (user modules, the project itself).
    paths = [p for p in sys.path if p and os.path.isdir(p)]
    os.environ["PYTHONPATH"] = os.pathsep.join(
        paths + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    if python_executable is not None:
        os.environ["PYSPARK_PYTHON"] = python_executable
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the driver's venv, not PATH's
    builder = (SparkSession.builder.appName("spark-datastream")
               .config("spark.ui.showConsoleProgress", "false")
               .config("spark.ui.enabled", "false")
               # Over TCP, each task's input waited ~40 ms for the JVM (Nagle's algorithm
               # meeting delayed acknowledgements): ~0.1 s of every two-stage batch.
               .config("spark.python.unix.domain.socket.enabled",
                       str(hasattr(socket, "AF_UNIX")).lower())
               .config("spark.driver.extraJavaOptions", DRIVER_JAVA_OPTIONS))
    if master is not None:
        builder = builder.master(master)
    for key, value in conf.items():
        builder = builder.config(key, value)
    session = _with_filtered_jvm_stderr(builder.getOrCreate)
    session.sparkContext.setLogLevel("ERROR")
    return session


def _with_filtered_jvm_stderr(start_jvm):
    """Starts the JVM with its stderr piped through a filter that drops the JVM's
    start-up notice about incubator modules (Spark's launcher always adds one); every
    other line reaches our stderr unchanged."""
    read_end, write_end = os.pipe()
    saved = os.dup(2)
    os.dup2(write_end, 2)  # inherited by the JVM only: ours is restored below
    try:
        result = start_jvm()
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(write_end)

    def forward():
        with os.fdopen(read_end, "rb") as lines:
            for line in lines:
                if b"Using incubator modules" not in line:
                    os.write(2, line)
    threading.Thread(target=forward, name="jvm-stderr", daemon=True).start()
    return result


def _load_job(broadcast) -> CompiledJob:
    """Unpickles the job in a worker, after its Python dependencies are in place (its
    functions may come from the modules they ship)."""
    bundle, job = broadcast.value
    if bundle is None:
        restore_working_directory()
    else:
        from pyspark import SparkFiles
        bundle.activate(SparkFiles.get(bundle.name), working_directory=True)
    return cloudpickle.loads(job)


def _edges_into(edge_ids, carries_results: bool, result):
    if isinstance(result, DataChunk):
        return [(result.target, result)] if result.edge in edge_ids else []
    return [(0, result)] if carries_results else []


def _downstream_stages(plan) -> Dict[int, List[int]]:
    """Stage id -> the ids of the stages its chunks go to, in plan order."""
    downstream = {stage.id: [] for stage in plan.stages}
    for stage in plan.stages:
        for upstream in sorted({plan.nodes[plan.edges[e].src].stage for e in stage.in_edges}):
            downstream[upstream].append(stage.id)
    return downstream


def _stage_name(plan, stage) -> str:
    """A stage as Spark's UI shows it: its chained operators."""
    return " -> ".join(plan.nodes[n].name for n in stage.nodes)


def _target_partition(target: int) -> int:
    return target


def _retrying(results, max_attempts: int):
    """Lets Spark retry a task whose user code failed, while attempts are left (Flink
    restarts failed tasks too): the retry rebuilds the task's state from the batch's base
    version, so nothing is applied twice. The last attempt reports the error itself.
    Spark keeps nothing an attempt it retries returned: what the attempt printed goes
    to the worker's stdout (Spark's executor log), as it would without capturing."""
    from pyspark import TaskContext
    results = list(results)
    for result in results:
        if isinstance(result, TaskFailure) and \
                TaskContext.get().attemptNumber() + 1 < max_attempts:
            sys.stdout.write("".join(r.text for r in results if isinstance(r, Printed)))
            raise RuntimeError(f"task attempt failed, Spark retries it: {result.error}")
    yield from results


def _run_subtask(load, run_id, stage_id, partition, batch, inputs):
    """The subtask's results: run in its host process (``task_host``) where possible."""
    run = run_hosted if hosts_supported() else run_task
    return run(load, run_id, stage_id, partition, batch, inputs)


def _run_source_stage(load, run_id, stage_id, batch, max_attempts, ranges, partition, items):
    """Runs subtask ``partition`` of a source stage; ``ranges``: each subtask's split
    ranges."""
    _read_index(items)
    return _retrying(_run_subtask(load, run_id, stage_id, partition, batch, ranges[partition]),
                     max_attempts)


def _read_index(items) -> None:
    """Reads a task's input, its partition's one index: a Python worker whose input was
    not read to its end is not reused (the next task would fork a new one)."""
    (_,) = items


def _run_stage(load, run_id, stage_id, batch, max_attempts, partition, pairs):
    chunks, carried = [], []  # carried: upstream results for the driver
    for _, item in pairs:
        (chunks if isinstance(item, DataChunk) else carried).append(item)
    return itertools.chain(carried, _retrying(
        _run_subtask(load, run_id, stage_id, partition, batch, chunks), max_attempts))


def _run_partition_task(load, run_id, steps, batch, ranges, partition, items):
    """Runs partition index ``partition`` of a batch; ``ranges``: each index's split
    ranges, by source stage."""
    _read_index(items)
    return run_partition(functools.partial(_run_subtask, load, run_id), steps, batch,
                         partition, ranges[partition])


def _commit(load, run_id, hosts, commit):
    """Makes a sink subtask's commit in the subtask's host (where possible)."""
    if hosts_supported():
        commit_hosted(load, run_id, hosts[commit.stage, commit.subtask], commit)
    else:
        configure_storage(job_of(run_id, load))  # (as the job's tasks do)
        commit.committer.commit(commit.batch_id, commit.subtask, commit.committable)


# local, local[N], local[*], local[N, F]: threads (group 1) and task attempts (group 2)
_LOCAL = re.compile(r"^local(?:\[(\d+|\*)(?:\s*,\s*(\d+))?\])?$")


def local_slots(master: str, conf, jvm_cores: Callable[[], int]) -> int:
    """How many tasks a local master runs at once (0 for any other master);
    ``jvm_cores()``: the processors the JVM sees, which ``local[*]`` uses."""
    match = _LOCAL.match(master)
    if not match:
        return 0
    threads = match.group(1) or "1"
    cores = jvm_cores() if threads == "*" else int(threads)
    return cores // int(conf.get("spark.task.cpus", "1"))


def one_task_per_partition(plan, master: str, conf, attempts: int,
                           jvm_cores: Callable[[], int]) -> bool:
    """Whether a batch of ``plan`` runs as one barrier stage of a task per partition
    index (``partition_task``): on a local master that runs every subtask of it at once
    (else Spark would wait for the slots, and fail), when a failed task is not retried
    (Spark would retry the whole barrier stage)."""
    stages = plan.stages
    return (attempts == 1 and max(stage.parallelism for stage in stages)
            <= local_slots(master, conf, jvm_cores))


def task_attempts(master: str, conf) -> int:
    """How often Spark runs a failing task: ``local[N, F]`` gives F, other local masters
    1, a cluster ``spark.task.maxFailures`` (default 4)."""
    match = _LOCAL.match(master)
    if match and match.group(2):
        return int(match.group(2))
    if master.startswith("local"):
        return 1
    return int(conf.get("spark.task.maxFailures", "4"))


class SparkExecutor(Executor):
    def __init__(self, session, bundle: Optional[Bundle] = None, retry_tasks: bool = True):
        """``retry_tasks`` False: a task whose user code fails reports it at once (the
        job's restart policy decides instead of Spark's retries)."""
        self.session = session
        self.sc = session.sparkContext
        self.job: Optional[CompiledJob] = None
        self._broadcast = None
        self._bundle = bundle
        self._steps = None  # set when a batch runs as one task per partition index
        self._direct = False  # whether the driver sends batches straight to the run's hosts
        self._partition_threads = None  # the driver's threads of partition indices then
        self._indices = {}  # n -> an RDD of n partitions, one item each, for the tasks
        self._removals = concurrent.futures.ThreadPoolExecutor(1, "exchange-removal")
        self.shares_driver_disk = self.sc.master.startswith("local")
        self.task_attempts = (task_attempts(self.sc.master, session.conf)  # one lookup at most
                              if retry_tasks else 1)

    def start(self, job: CompiledJob) -> None:
        self.job = job
        if self._bundle is not None:  # every worker unpacks it before its next task
            self.sc.addArchive(self._bundle.archive)
        self._broadcast = self.sc.broadcast((self._bundle, cloudpickle.dumps(job)))
        self._direct = False  # the first batch's tasks start the run's hosts
        if one_task_per_partition(job.plan, self.sc.master, self.session.conf,
                                  self.task_attempts, self._jvm_cores):
            self._steps = stage_steps(job.plan)

    def _partition_indices(self, n: int):
        """An RDD of ``n`` partitions of one item each, made once: a batch's tasks get
        their split ranges with their function, not through a new RDD's temporary file."""
        if n not in self._indices:
            self._indices[n] = self.sc.parallelize(list(range(n)), n)
        return self._indices[n]

    def _jvm_cores(self) -> int:
        return self.sc._jvm.java.lang.Runtime.getRuntime().availableProcessors()

    def run_batch(self, batch: BatchInfo, source_ranges: Dict[int, List[list]]) -> list:
        if self._steps is None and (not self.shares_driver_disk
                                    or len(self.job.plan.stages) == 1):
            return self._run_stages(batch, source_ranges)
        # Chunks between stages go through files on this machine's disk (its page cache),
        # not through Spark's shuffle, which then moves their names only.
        if self._steps is None:
            return self._in_exchange_dir(batch, "", self._run_stages, source_ranges)
        batch = dataclasses.replace(batch, keeps_own_chunks=self._hosts_by_partition())
        stages = self.job.plan.stages
        ranges = [{s.id: source_ranges[s.id][p] for s in stages
                   if s.is_source and p < s.parallelism}
                  for p in range(max(stage.parallelism for stage in stages))]
        if self._direct:
            try:
                return self._in_exchange_dir(batch, "", self._run_direct, ranges)
            except HostGone as e:
                log.info("Batch %d runs as Spark tasks: %s", batch.batch_id, e)
        results = self._in_exchange_dir(batch, ".tasks", self._run_partitions, ranges)
        self._direct = hosts_supported()
        return results

    def _in_exchange_dir(self, batch: BatchInfo, suffix: str, run: Callable, inputs) -> list:
        """``run(batch, inputs)`` with a new exchange directory, removed afterwards."""
        exchange_dir = os.path.join(run_directory(self.job.run_id), "exchange",
                                    f"{batch.batch_id}{suffix}")
        os.makedirs(exchange_dir, mode=0o700, exist_ok=True)
        try:
            return run(dataclasses.replace(batch, exchange_dir=exchange_dir), inputs)
        finally:  # off the batch's path: the next batch starts meanwhile
            self._removals.submit(shutil.rmtree, exchange_dir, ignore_errors=True)

    def _run_direct(self, batch: BatchInfo, ranges: List[dict]) -> list:
        """The batch's partition indices run by the driver's threads, each sending its
        subtasks to their hosts (started by an earlier batch's tasks) as a task would:
        on a local master, a batch then costs no Spark job. HostGone if a host is not
        running; the batch's tasks then run it again, and start new hosts."""
        if self._partition_threads is None:
            self._partition_threads = concurrent.futures.ThreadPoolExecutor(
                len(ranges), "partition")
        run_subtask = functools.partial(run_in_running_host, self.job.run_id)
        futures = [self._partition_threads.submit(
            lambda p: list(run_partition(run_subtask, self._steps, batch, p, ranges[p])), p)
            for p in range(len(ranges))]
        concurrent.futures.wait(futures, return_when=concurrent.futures.FIRST_EXCEPTION)
        if any(f.done() and f.exception() is not None for f in futures):
            shutil.rmtree(batch.exchange_dir, ignore_errors=True)  # ends indices that wait
            concurrent.futures.wait(futures)
            errors = [f.exception() for f in futures if f.exception() is not None]
            gone = next((e for e in errors if isinstance(e, ConnectionError)), None)
            if gone is not None:  # (the other indices then failed waiting for its chunks)
                raise HostGone(str(gone)) from gone
            raise JobExecutionException(f"Batch {batch.batch_id} failed: {errors[0]}") \
                from errors[0]
        return [result for f in futures for result in f.result()]

    def _name_job(self, batch: BatchInfo) -> Dict[int, str]:
        """Spark's UI lists the batch's job under a group and description; returns the
        stages' names."""
        job = self.job
        stage_names = {stage.id: _stage_name(job.plan, stage) for stage in job.plan.stages}
        self.sc.setJobGroup(f"{batch.job_name} [{job.run_id[:8]}] batch {batch.batch_id}",
                            f"{batch.job_name}: batch {batch.batch_id}: "
                            + " | ".join(stage_names.values()))
        return stage_names

    def _run_partitions(self, batch: BatchInfo, ranges: List[dict]) -> list:
        """The batch as one barrier stage of one task per partition index
        (``partition_task``); with object reuse, a subtask's chunks for its own index stay
        in the process that runs the index's subtasks."""
        self._name_job(batch)
        run = functools.partial(_run_partition_task, functools.partial(
            _load_job, self._broadcast), self.job.run_id, self._steps, batch, ranges)
        return self._collect(batch, self._partition_indices(len(ranges)).barrier()
                             .mapPartitionsWithIndex(run))

    def _hosts_by_partition(self) -> bool:
        """Whether the subtasks of a partition index share one host (``task_host.host_name``):
        with object reuse, where a batch of several stages runs as one task per index."""
        return (self.job.settings.object_reuse and self._steps is not None
                and self.shares_driver_disk and len(self.job.plan.stages) > 1)

    def _collect(self, batch: BatchInfo, rdd) -> list:
        try:
            return rdd.collect()
        except Exception as e:  # a failure outside user code (e.g. a record Spark cannot pickle)
            raise JobExecutionException(f"Spark failed to run batch {batch.batch_id}: {e}") from e

    def _run_stages(self, batch: BatchInfo, source_ranges: Dict[int, List[list]]) -> list:
        from pyspark import StorageLevel
        sc, job = self.sc, self.job
        plan = job.plan
        load = functools.partial(_load_job, self._broadcast)
        outputs = {}
        downstream = _downstream_stages(plan)
        stage_names = self._name_job(batch)
        for stage in plan.stages:
            if stage.is_source:
                rdd = self._partition_indices(stage.parallelism)
                run = functools.partial(_run_source_stage, load, job.run_id, stage.id, batch,
                                        self.task_attempts, source_ranges[stage.id])
            else:
                edge_ids = frozenset(stage.in_edges)
                upstream = sorted({plan.nodes[plan.edges[e].src].stage for e in stage.in_edges})
                # An upstream stage's results for the driver ride along with its chunks to
                # partition 0 of its first downstream stage, whose task passes them on.
                parts = [outputs[s].flatMap(functools.partial(
                    _edges_into, edge_ids, downstream[s][0] == stage.id)) for s in upstream]
                rdd = (parts[0] if len(parts) == 1 else sc.union(parts)).partitionBy(
                    stage.parallelism, _target_partition)
                run = functools.partial(_run_stage, load, job.run_id, stage.id, batch,
                                        self.task_attempts)
            outputs[stage.id] = rdd.mapPartitionsWithIndex(run)
            if len(downstream[stage.id]) > 1:
                # Kept, so that it runs once: persisted before anything is built on it (PySpark
                # fuses the functions of RDDs built on an RDD not cached yet into their own).
                # Only such an RDD runs as it is and can carry a name: naming one that is
                # fused later builds a JVM RDD that never runs (~36 py4j calls, ~5 ms).
                outputs[stage.id].persist(StorageLevel.MEMORY_AND_DISK) \
                    .setName(stage_names[stage.id])
        # The driver collects the last stages only: a batch of one stage is one
        # mapPartitions job.
        feeding = [outputs[s] for s, stages in downstream.items() if len(stages) > 1]
        to_driver = [outputs[s.id].filter(for_driver) for s in plan.stages
                     if not downstream[s.id]]
        try:
            return self._collect(batch, to_driver[0] if len(to_driver) == 1
                                 else sc.union(to_driver))
        finally:
            for out in feeding:
                out.unpersist()

    def run_commits(self, commits: tuple) -> None:
        """One Spark task per commit, so committed records go from the workers to the
        external system without passing through the driver; each commits in the sink
        subtask's host."""
        if not commits:
            return
        hosts = {(c.stage, c.subtask): host_name(c.stage, c.subtask, self._hosts_by_partition())
                 for c in commits}
        self.sc.parallelize(commits, len(commits)).foreach(functools.partial(
            _commit, functools.partial(_load_job, self._broadcast), self.job.run_id, hosts))

    def stop(self) -> None:
        # Ends the run's subtask hosts; on a cluster, hosts on other machines end when
        # idle (task_host.HOST_IDLE_SECONDS).
        self._removals.submit(lambda: None).result()  # after the removals before it
        if self.job is not None and self.shares_driver_disk:
            remove_run(self.job.run_id)
        if self._broadcast is not None:
            self._broadcast.destroy()
            self._broadcast = None
