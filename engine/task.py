"""The function given to ``mapPartitions``: runs one stage's operator chain for one
partition and one micro-batch against its keyed state.

A ``StageInstance`` (operators opened, keyed state loaded) stays cached in the
worker process between batches, but nothing depends on that: a task that finds
no instance, or one whose state is not at the batch's base version, rebuilds it
from the state directory.
"""
import pickle
import zlib
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterable, Iterator, List, Optional

from checkpoint.state_store import StateStore
from statebackends.base import KeyedStateBackend
from statebackends.keygroups import key_group_range_for_operator
from statebackends.ttl import cleanup_expired_state

from .errors import OperatorError
from .graph import JobPlan, Stage
from .operators.base import is_pickled
from .operators.io import SinkWriterOperator
from .operators.timestamps import TimestampsOperator
from .routing import Router
from .runtime_context import ProcessContext, StreamingRuntimeContext, TimerService
from .state_backends import restore_backend
from .time.timers import InternalTimerService
from .time.watermarks import MIN_WATERMARK

CACHED_INSTANCES = 64
CACHED_JOBS = 4

# Items a task yields.
DATA = "data"      # (DATA, edge id, target partition, pickled list of records)
SINK = "sink"      # (SINK, sink node id, subtask index, items)
ERROR = "error"    # (ERROR, OperatorError)
STATS = "stats"    # (STATS, node id, subtask index, largest timestamp or None)


@dataclass(frozen=True)
class BatchInfo:
    """What every task of one micro-batch needs to know, fixed by the driver."""
    run_id: str
    batch_id: int          # the state version this batch writes
    base_version: int      # the committed version the batch starts from
    is_final: bool         # input ends with this batch
    state_dir: str
    processing_time: int
    batch_mode: bool
    job_parameters: Dict[str, str] = field(default_factory=dict)
    input_watermark: int = MIN_WATERMARK  # what the batch's records see
    watermark: int = MIN_WATERMARK        # what the batch advances to after its records


@dataclass
class CompiledJob:
    """The plan plus each node's pickled operator factory (a fresh copy per subtask)."""
    run_id: str
    plan: JobPlan
    factories: Dict[int, bytes]
    state_backend: str = "hashmap"           # "hashmap" or "rocksdb"
    state_backend_options: Dict[str, object] = field(default_factory=dict)  # e.g. incremental


class OperatorTask:
    """The ``task`` an operator sees: its subtask, keyed state, timers and contexts.

    ``clock`` has the ``processing_time`` and ``current_watermark`` timers and
    process functions see (the stage instance in a job, or a test harness).
    """

    def __init__(self, clock, subtask: int, parallelism: int, max_parallelism: int,
                 job_parameters: Dict[str, str], keyed_backend=None, timers=None,
                 timed: bool = False, batch_mode: bool = False):
        self.clock = clock
        self.subtask = subtask
        self.parallelism = parallelism
        self.max_parallelism = max_parallelism
        self.job_parameters = job_parameters
        self.keyed_backend = keyed_backend
        self.timers = timers
        self.timed = timed
        self.batch_mode = batch_mode

    @property
    def run_id(self) -> str:
        """This run of the job (a new one for each start, resumed or not)."""
        return self.clock.batch.run_id

    @property
    def batch_id(self) -> int:
        """The micro-batch being processed (the state version it writes)."""
        return self.clock.batch.batch_id

    def runtime_context(self, name: str) -> StreamingRuntimeContext:
        return StreamingRuntimeContext(name, self.subtask, self.parallelism,
                                       self.max_parallelism, 0, self.job_parameters,
                                       self.keyed_backend, clock=self.clock)

    def process_context(self, cursor, operator) -> ProcessContext:
        timer_service = TimerService(self.clock, self.timers, self.keyed_backend)
        return ProcessContext(timer_service, self.keyed_backend, cursor, operator)


class StageInstance:
    """One subtask of a stage: its opened operator chain, routers and keyed state."""

    def __init__(self, job: CompiledJob, stage: Stage, partition: int, batch: BatchInfo):
        self.job = job
        self.stage = stage
        self.partition = partition
        self.batch = batch
        self.processing_time = batch.processing_time
        plan = job.plan
        self.keyed_node = next((plan.nodes[n] for n in stage.nodes if plan.nodes[n].keyed), None)
        self.backend: Optional[KeyedStateBackend] = (
            None if self.keyed_node is None else self._restore_state(batch))
        self.timers = None if self.backend is None else InternalTimerService(self.backend)
        self.current_watermark = batch.input_watermark
        self.routers: Dict[int, Router] = {}
        self.operators = {n: pickle.loads(job.factories[n])() for n in stage.nodes}
        self.sinks = {n: op for n, op in self.operators.items()
                      if isinstance(op, SinkWriterOperator)}
        for n in reversed(stage.nodes):  # downstream first, so outputs exist when wired
            node = plan.nodes[n]
            op = self.operators[n]
            op.setup(node.name, OperatorTask(
                self, partition, stage.parallelism, node.max_parallelism, batch.job_parameters,
                self.backend if node.keyed else None, self.timers if node.keyed else None,
                plan.timed, batch.batch_mode))
            op.output = self._output_of(node)
        for n in stage.nodes:
            self.operators[n].open()
        self.entry = {e: self.operators[plan.edges[e].dst].process_chunk for e in stage.in_edges}

    # --- wiring -------------------------------------------------------------------
    def _output_of(self, node) -> Callable:
        """Wires the node's outputs: chained operators and routers of edges leaving the
        stage; side outputs go to ``operator.side_outputs[tag]``."""
        plan = self.job.plan
        targets = [self.operators[n].process_chunk for n in node.chained]
        side_targets: Dict[str, List[Callable]] = {}
        for e in node.out_edges:
            edge = plan.edges[e]
            down = plan.nodes[edge.dst]
            router = Router(node.name, edge.partitioning, self.partition,
                            node.parallelism, down.parallelism, down.max_parallelism,
                            seed=zlib.crc32(f"{self.batch.run_id}/{e}/{self.partition}".encode()),
                            timed=plan.timed)
            self.routers[e] = router
            if edge.side_tag is None:
                targets.append(router.route)
            else:
                side_targets.setdefault(edge.side_tag, []).append(router.route)
        self.operators[node.id].side_outputs = {
            tag: _fan_out(routes) for tag, routes in side_targets.items()}
        if node.pact != "Data Source" and not is_pickled(node.output_type):
            # (sources emit typed values already)
            return _converting(node.name, node.output_type.convert, _fan_out(targets), plan.timed)
        return _fan_out(targets)

    # --- state --------------------------------------------------------------------
    def _restore_state(self, batch: BatchInfo) -> KeyedStateBackend:
        node = self.keyed_node
        kg_range = key_group_range_for_operator(
            node.max_parallelism, self.stage.parallelism, self.partition)
        return restore_backend(
            self.job.state_backend, StateStore(batch.state_dir), node.uid, kg_range,
            node.max_parallelism, batch.base_version, **self.job.state_backend_options)

    def is_at(self, version: int) -> bool:
        """Whether the cached keyed state reflects ``version`` (stateless: always)."""
        return self.backend is None or self.backend.version == version

    # --- one batch ----------------------------------------------------------------
    def run_batch(self, batch: BatchInfo, inputs: Iterable) -> Iterator[tuple]:
        self.batch = batch
        self.processing_time = batch.processing_time
        self.current_watermark = batch.input_watermark
        if self.stage.is_source:
            source = self.operators[self.stage.nodes[0]]
            for split_batch in inputs:
                source.run(split_batch)
        else:
            entry = self.entry
            for edge_id, chunk in inputs:
                entry[edge_id](pickle.loads(chunk))
        self.current_watermark = batch.watermark
        flush = batch.is_final and batch.batch_mode
        for n in self.stage.nodes:
            fire_timers = getattr(self.operators[n], "fire_timers", None)
            if fire_timers is not None:
                fire_timers(batch.watermark, batch.processing_time, flush)
        if batch.is_final:
            for n in self.stage.nodes:
                self.operators[n].end_input()
        if self.backend is not None:
            cleanup_expired_state(self.backend, batch.batch_id)
            self.backend.write_version(StateStore(batch.state_dir), batch.batch_id)
        if batch.is_final:
            for n in self.stage.nodes:
                self.operators[n].close()
        for edge_id, router in self.routers.items():
            for target, chunk in router.take_chunks():
                yield (DATA, edge_id, target, _pickled(router.name, chunk))
        for node_id, op in self.operators.items():
            if isinstance(op, TimestampsOperator):
                yield (STATS, node_id, self.partition, op.take_max_timestamp())
        for node_id, sink in self.sinks.items():
            items = sink.take_items()
            if items:
                yield (SINK, node_id, self.partition, items)


def _pickled(operator: str, chunk: list) -> bytes:
    """Pickles a chunk once, here: Spark's filter and shuffle then move bytes only."""
    try:
        return pickle.dumps(chunk, pickle.HIGHEST_PROTOCOL)
    except Exception as e:
        bad = next((r for r in chunk if not _picklable(r)), chunk[0])
        cause = TypeError(f"the record cannot be pickled to reach the next stage: {e}")
        raise OperatorError.wrap(operator, bad, cause) from None


def _picklable(record) -> bool:
    try:
        pickle.dumps(record, pickle.HIGHEST_PROTOCOL)
        return True
    except Exception:
        return False


def _fan_out(targets: List[Callable]) -> Callable:
    if len(targets) == 1:
        return targets[0]
    if not targets:
        return lambda records: None

    def fan_out(records):
        for target in targets:
            target(records)
    return fan_out


def _converting(name: str, convert: Callable, emit: Callable, timed: bool) -> Callable:
    """Applies the declared output type (e.g. FLOAT rounding, INT range) to each record."""
    if timed:
        convert_value = convert
        convert = lambda element: (element[0], convert_value(element[1]))  # noqa: E731

    def converting(records):
        out = []
        append = out.append
        record = None
        try:
            for record in records:
                append(convert(record))
        except Exception as e:
            raise OperatorError.wrap(name, record, e) from None
        emit(out)
    return converting


_instances: "OrderedDict[tuple, StageInstance]" = OrderedDict()
_jobs: Dict[str, CompiledJob] = {}


def run_task(load_job: Callable[[], CompiledJob], run_id: str, stage_id: int, partition: int,
             batch: BatchInfo, inputs: Iterable) -> Iterator[tuple]:
    """Runs one stage for one partition and batch; yields DATA, SINK and ERROR items."""
    key = (run_id, stage_id, partition)
    instance = _instances.pop(key, None)
    try:
        if instance is None or not instance.is_at(batch.base_version):
            job = _jobs.get(run_id)
            if job is None:
                job = _jobs[run_id] = load_job()
                while len(_jobs) > CACHED_JOBS:
                    _jobs.pop(next(iter(_jobs)))
            instance = StageInstance(job, job.plan.stages[stage_id], partition, batch)
        items = list(instance.run_batch(batch, inputs))
    except OperatorError as e:
        yield (ERROR, e)
        return
    if not batch.is_final:
        _instances[key] = instance
        while len(_instances) > CACHED_INSTANCES:
            _instances.popitem(last=False)
    yield from items


def forget_job(run_id: str) -> None:
    """Drops a finished job's cached plan and instances from this process."""
    _jobs.pop(run_id, None)
    for key in [k for k in _instances if k[0] == run_id]:
        del _instances[key]
