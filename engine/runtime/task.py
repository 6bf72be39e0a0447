"""The function given to ``mapPartitions``: runs one stage's operator chain for one
partition and one micro-batch against its keyed state.

A ``StageInstance`` (operators opened, keyed state loaded) stays cached in the
process between batches (on Spark, the subtask's host process:
``engine.executor.task_host``), so functions keep their in-memory fields as in
Flink. State never depends on it: a task that finds no instance, or one whose
state is not at the batch's base version, rebuilds it from the state directory.
"""
import gc
import pickle
import time
import zlib
from collections import OrderedDict
from contextlib import contextmanager
from typing import Callable, Dict, Iterable, Iterator, List, Optional

from checkpoint import storage
from checkpoint.state_store import StateStore
from statebackends.base import KeyedStateBackend
from core.keygroups import key_group_range_for_operator
from statebackends.ttl import cleanup_expired_state

from engine.batch import BatchInfo, CompiledJob, DataChunk, MaxTimestamp, MetricReport, Printed, \
    TaskFailure
from engine.errors import OperatorError, RecordWriteError
from engine.io.sinks import convert_each
from engine.runtime.exchange import (drop_kept_chunks_but, edge_codec, holds_kept_chunks, kept,
                                     payload_of, records_of)
from engine.graph import Stage
from engine.runtime.metrics import OperatorMetrics
from engine.runtime.operators.base import is_pickled
from engine.runtime.operators.chunks import RecordShape
from engine.runtime.operators.io import SourceOperator
from engine.runtime.operators.timestamps import TimestampsOperator
from engine.runtime.operators.udf import MapOperator
from engine.runtime.routing import Router
from engine.runtime.context import ProcessContext, StreamingRuntimeContext, TimerService
from engine.runtime.sink_commits import start_commits
from engine.runtime.state_backends import restore_backend
from engine.runtime.stdout_capture import captured_stdout, printed_text
from engine.time.timers import InternalTimerService

CACHED_INSTANCES = 64
CACHED_JOBS = 4


class OperatorTask:
    """The ``task`` an operator sees: its subtask, keyed state, timers and contexts.

    ``clock`` has the ``processing_time`` and ``current_watermark`` timers and
    process functions see (the stage instance in a job, or a test harness).
    """

    def __init__(self, clock, subtask: int, parallelism: int, max_parallelism: int,
                 job_parameters: Dict[str, str], keyed_backend=None, timers=None,
                 timed: bool = False, batch_mode: bool = False, broadcast_backend=None,
                 uid: str = "", metrics: Optional[OperatorMetrics] = None):
        self.clock = clock
        self.uid = uid  # the operator's uid: stable across runs
        self.subtask = subtask
        self.parallelism = parallelism
        self.max_parallelism = max_parallelism
        self.job_parameters = job_parameters
        self.keyed_backend = keyed_backend
        self.timers = timers
        self.shape = RecordShape(timed)  # what an element looks like
        self.batch_mode = batch_mode
        self.broadcast_backend = broadcast_backend  # an operator's broadcast state
        self.metrics = OperatorMetrics() if metrics is None else metrics

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
                                       self.keyed_backend, clock=self.clock,
                                       metrics_group=self.metrics.group)

    def process_context(self, cursor, operator, context_class=ProcessContext) -> ProcessContext:
        """The ``ctx`` a process function sees for records read by ``cursor``."""
        timer_service = TimerService(self.clock, self.timers, self.keyed_backend)
        return context_class(timer_service, self.keyed_backend, cursor, operator)


class StageInstance:
    """One subtask of a stage: its opened operator chain, routers and state (the keyed
    state of its keyed operator, the broadcast state of a broadcast operator)."""

    def __init__(self, job: CompiledJob, stage: Stage, partition: int, batch: BatchInfo):
        self.job = job
        self.stage = stage
        self.partition = partition
        self.batch = batch
        configure_storage(job)
        self.processing_time = batch.processing_time
        plan = job.plan
        self.keyed_node = next((plan.nodes[n] for n in stage.nodes if plan.nodes[n].keyed), None)
        self.backend: Optional[KeyedStateBackend] = (
            None if self.keyed_node is None else self._restore_state(batch))
        self.timers = None if self.backend is None else InternalTimerService(self.backend)
        self.broadcast_node = next((plan.nodes[n] for n in stage.nodes
                                    if plan.nodes[n].broadcast_input is not None), None)
        self.broadcast_backend = (None if self.broadcast_node is None
                                  else self._restore_broadcast_state(batch))
        self.current_watermark = batch.input_watermark
        self.current_split: Optional[str] = None  # the source split being read, if any
        self.shape = RecordShape(plan.timed)
        self.routers: Dict[int, Router] = {}
        self.operators = {n: pickle.loads(job.factories[n])() for n in stage.nodes}
        self.metrics = {n: OperatorMetrics() for n in stage.nodes}
        for n in reversed(stage.nodes):  # downstream first, so outputs exist when wired
            node = plan.nodes[n]
            op = self.operators[n]
            op.setup(node.name, OperatorTask(
                self, partition, stage.parallelism, node.max_parallelism, batch.job_parameters,
                self.backend if node.keyed else None, self.timers if node.keyed else None,
                plan.timed, batch.batch_mode,
                self.broadcast_backend if node is self.broadcast_node else None, node.uid,
                self.metrics[n]))
            op.output = self.metrics[n].count_out(self._output_of(node))
        for n in stage.nodes:
            self.operators[n].open()
        self.entry = {}        # edge id -> the input handler its chunks go to
        self.codecs = {e: edge_codec(plan, e) for e in stage.in_edges}  # of typed pieces
        self.input_rank = {}   # edge id -> rank: a batch's chunks are processed in rank order
        for e in stage.in_edges:
            edge = plan.edges[e]
            node = plan.nodes[edge.dst]
            self.entry[e] = self._input_of(edge.dst, edge.input_index)
            self.input_rank[e] = (edge.input_index != node.broadcast_input, edge.input_index)

    # --- wiring -------------------------------------------------------------------
    def _input_of(self, node_id: int, index: int) -> Callable:
        return self.metrics[node_id].count_in(self.operators[node_id].input(index))

    def _fused_input(self, node) -> Optional[Callable]:
        """Where the node's results go when it and the one node chained after it share
        one loop over the records (else None):

        - a source whose records have no timestamps hands a map (in a timed job) its
          plain values, not ``(None, value)`` elements (``MapOperator.take_values``);
        - a map whose results go, as they are (no declared type to convert them to), to
          ``assign_timestamps_and_watermarks`` stamps them (``MapOperator.stamp_for``).
        """
        if len(node.chained) != 1 or node.out_edges:
            return None
        op, after = self.operators[node.id], self.operators[node.chained[0]]
        counted = self.metrics[node.chained[0]].count_in
        if (type(op) is SourceOperator and type(after) is MapOperator and self.shape.timed
                and not op.source.stamps_records):
            op.emits_values = True
            return counted(after.take_values)
        if (type(op) is MapOperator and type(after) is TimestampsOperator
                and is_pickled(node.output_type)):
            op.stamp_for(after)
            return counted(after.take_stamped)
        return None

    def _output_of(self, node) -> Callable:
        """Wires the node's outputs: chained operators and routers of edges leaving the
        stage; side outputs go to ``operator.side_outputs[tag]``."""
        plan = self.job.plan
        fused = self._fused_input(node)
        targets = [fused] if fused else [self._input_of(n, 0) for n in node.chained]
        side_targets: Dict[str, List[Callable]] = {}
        for e in node.out_edges:
            edge = plan.edges[e]
            down = plan.nodes[edge.dst]
            router = Router(node.name, edge.partitioning, self.partition,
                            node.parallelism, down.parallelism, down.max_parallelism,
                            seed=zlib.crc32(f"{self.batch.run_id}/{e}/{self.partition}".encode()),
                            shape=self.shape, keyed_target=down.keyed,
                            codec=edge_codec(plan, e) if self._emits_converted(node) else None)
            self.routers[e] = router
            if edge.side_tag is None:
                targets.append(router.route)
            else:
                side_targets.setdefault(edge.side_tag, []).append(router.route)
        self.operators[node.id].side_outputs = {
            tag: self.metrics[node.id].count_out(_fan_out(routes))
            for tag, routes in side_targets.items()}
        if self._converts_output(node):
            return _converting(node.name, node.output_type, self.shape, _fan_out(targets))
        return _fan_out(targets)

    def _converts_output(self, node) -> bool:
        """Whether the node converts its records to its declared output type: not a
        source's (they emit typed values), nor one handing them on unconverted
        (``JobPlan.hands_on_unconverted``), nor a filter's whose input was converted
        before it."""
        plan = self.job.plan
        if (node.pact == "Data Source" or is_pickled(node.output_type)
                or plan.hands_on_unconverted(node)):
            return False
        if not self.operators[node.id].forwards_input:
            return True
        upstream = self._chained_upstream(node)
        return upstream is not None and plan.hands_on_unconverted(upstream)

    def _emits_converted(self, node) -> bool:
        """Whether the records the node emits are converted to its declared type: it
        converts them, or forwards what an operator chained before it converted."""
        if self._converts_output(node):
            return True
        upstream = self._chained_upstream(node)
        return (self.operators[node.id].forwards_input and upstream is not None
                and self._emits_converted(upstream))

    def _chained_upstream(self, node):
        """The node chained before ``node`` in this stage, if any."""
        plan = self.job.plan
        return next((plan.nodes[n] for n in self.stage.nodes if node.id in plan.nodes[n].chained),
                    None)

    # --- state --------------------------------------------------------------------
    def _restore_state(self, batch: BatchInfo) -> KeyedStateBackend:
        node = self.keyed_node
        kg_range = key_group_range_for_operator(
            node.max_parallelism, self.stage.parallelism, self.partition)
        return restore_backend(
            self.job.settings.state_backend, StateStore(batch.state_dir), node.uid, kg_range,
            node.max_parallelism, batch.base_version, pickled_keys=node.pickled_keys,
            key_type=node.key_type,
            **self.job.settings.state_backend_options)

    def _restore_broadcast_state(self, batch: BatchInfo) -> KeyedStateBackend:
        """Broadcast state is the same on every subtask: it is stored once, as one key
        group, by subtask 0, and every subtask of any parallelism restores that copy. It
        stays on the heap whatever the keyed backend (as in Flink)."""
        allow_pickled = self.job.settings.state_backend_options.get("allow_pickled", True)
        return restore_backend("hashmap", StateStore(batch.state_dir),
                               self.broadcast_node.broadcast_state_id, (0, 0), 1,
                               batch.base_version, allow_pickled=allow_pickled)

    def is_at(self, version: int) -> bool:
        """Whether the cached state reflects ``version`` (stateless: always)."""
        return all(backend is None or backend.version == version
                   for backend in (self.backend, self.broadcast_backend))

    def _write_state(self, version: int) -> None:
        store = StateStore(self.batch.state_dir)
        if self.backend is not None:
            cleanup_expired_state(self.backend, version)
            self.backend.write_version(store, version)
        if self.broadcast_backend is not None:
            if self.partition == 0:
                self.broadcast_backend.write_version(store, version)
            else:  # an identical copy: subtask 0 stores it
                self.broadcast_backend.version = version

    # --- one batch ----------------------------------------------------------------
    def run_batch(self, batch: BatchInfo, inputs: Iterable) -> list:
        """Processes the batch's input (source ranges, or ``DataChunk``s), fires timers,
        writes the state version; yields ``DataChunk``s and the driver's results."""
        started = time.perf_counter()
        self.batch = batch
        self.processing_time = batch.processing_time
        self.current_watermark = batch.input_watermark
        own = self.partition if batch.keeps_own_chunks else None
        for router in self.routers.values():
            router.local_target = own
        timestamps = {}  # (node, watermark input) -> the batch's MaxTimestamp
        if self.stage.is_source:
            source = self.operators[self.stage.nodes[0]]
            for split_range in inputs:
                source.run(split_range)
        else:
            entry, rank = self.entry, self.input_rank
            # Broadcast side first, then input 0, then input 1; from each, the upstream
            # subtasks in order: the same order on every subtask and every run.
            for chunk in sorted(inputs, key=lambda c: (rank[c.edge], c.source)):
                timestamps.update(((t.node, t.input), t) for t in chunk.timestamps)
                for records in records_of(chunk.payload, self.codecs[chunk.edge]):
                    entry[chunk.edge](records)
        watermark = self.current_watermark = self._watermark_reached(batch, timestamps)
        operators = [self.operators[n] for n in self.stage.nodes]
        flush = batch.is_final and batch.batch_mode
        for op in operators:
            op.fire_timers(watermark, batch.processing_time, flush)
        if batch.is_final:
            for op in operators:
                op.end_input()
        results = [result for n in self.stage.nodes
                   for result in self.operators[n].driver_results(n, self.partition)]
        timestamps.update(((r.node, r.input), r) for r in results
                          if isinstance(r, MaxTimestamp))
        known = tuple(timestamps.values())
        self._write_state(batch.batch_id)
        chunks = []
        for edge_id, router in self.routers.items():
            for target, pieces in router.take_chunks(every_target=bool(known)):
                name = f"{edge_id}-{self.partition}-{target}"
                payload = (b"" if not pieces else
                           kept(batch.run_id, batch.batch_id, name, pieces) if target == own
                           else payload_of(pieces, batch.exchange_dir, name))
                chunks.append(DataChunk(edge_id, self.partition, target, payload, known))
        results.extend(self._metric_reports(round((time.perf_counter() - started) * 1000)))
        return chunks + results

    def _watermark_reached(self, batch: BatchInfo, timestamps: dict) -> int:
        """The watermark the stage advances to after the batch's records: the batch's, or,
        in a stage after every watermark input, the one the batch's ``timestamps`` give
        (the driver's tracker reaches the same after the batch)."""
        step = batch.watermark_step
        if step is None or not self.stage.watermark_from_inputs:
            return batch.watermark
        reached = step.advanced({key: t.timestamp for key, t in timestamps.items()})
        return max(batch.watermark, reached.watermark())

    def close(self) -> None:
        """Closes the operators, after the job's final batch."""
        for n in self.stage.nodes:
            self.operators[n].close()

    def _metric_reports(self, busy_ms: int) -> List[MetricReport]:
        source = self.stage.nodes[0] if self.stage.is_source else None
        keyed = None if self.keyed_node is None else self.keyed_node.id
        return [self.metrics[n].report(n, self.partition, busy_ms, is_source=n == source,
                                       pending_timers=self.timers.count() if n == keyed
                                       else None)
                for n in self.stage.nodes]


def _fan_out(targets: List[Callable]) -> Callable:
    if len(targets) == 1:
        return targets[0]
    if not targets:
        return lambda records: None

    def fan_out(records):
        for target in targets:
            target(records)
    return fan_out


def _converting(name: str, output_type, shape: RecordShape, emit: Callable) -> Callable:
    """Applies the declared output type (e.g. FLOAT rounding, INT range) to each element:
    in one pass over the chunk where the type can (``chunk_converter``), else one by one,
    naming the record that does not fit."""
    convert = shape.mapped(output_type.convert)
    converted_chunk = output_type.chunk_converter(shape.timed)

    def converting(records):
        converted = converted_chunk(records)
        if converted is None:
            try:
                converted = convert_each(convert, records)
            except RecordWriteError as e:
                raise OperatorError.wrap(name, e.record, e.cause) from None
        emit(converted)
    return converting


_instances: "OrderedDict[tuple, StageInstance]" = OrderedDict()
_jobs: Dict[str, CompiledJob] = {}


def run_task(load_job: Callable[[], CompiledJob], run_id: str, stage_id: int, partition: int,
             batch: BatchInfo, inputs: Iterable) -> Iterator:
    """Runs one stage for one partition and batch; yields its ``engine.batch`` results
    (a ``TaskFailure`` if user code or input failed), first what its functions printed
    (``Printed``, also when they failed). Meanwhile it commits what its sinks prepared
    for the previous batch (``engine.runtime.sink_commits``)."""
    mine = [c for c in batch.commits if c.stage == stage_id and c.subtask == partition]
    if mine:
        configure_storage(job_of(run_id, load_job))  # (committers may write the job's files)
    finish_commits = start_commits(mine)
    with captured_stdout() as stdout:
        results = _run_stage(load_job, run_id, stage_id, partition, batch, inputs)
    failure = finish_commits()
    if failure is not None:
        results.append(failure)
    text = printed_text(stdout)
    if text:
        yield Printed(stage_id, partition, text)
    yield from results


def _run_stage(load_job, run_id, stage_id, partition, batch, inputs) -> list:
    key = (run_id, stage_id, partition)
    instance = _instances.pop(key, None)
    drop_kept_chunks_but(run_id, batch.batch_id)
    try:
        if instance is None or not instance.is_at(batch.base_version):
            job = job_of(run_id, load_job)
            instance = StageInstance(job, job.plan.stages[stage_id], partition, batch)
        with _collector_paused():
            results = list(instance.run_batch(batch, inputs))
        if batch.is_final:
            with captured_stdout() as closing:
                instance.close()
            text = printed_text(closing)
            if text:
                results.append(Printed(stage_id, partition, text, closing=True))
    except OperatorError as e:
        return [TaskFailure(e)]
    if not batch.is_final:
        _instances[key] = instance
        while len(_instances) > CACHED_INSTANCES:
            _instances.popitem(last=False)
    return results


def configure_storage(job: CompiledJob) -> None:
    """Installs the job's storage settings in this process (``checkpoint.storage``), as
    every process that writes the job's files must first."""
    storage.configure(job.settings.storage_options, job.settings.group_access)


def job_of(run_id: str, load_job: Callable[[], CompiledJob]) -> CompiledJob:
    """The run's job, loaded once per process."""
    job = _jobs.get(run_id)
    if job is None:
        job = _jobs[run_id] = load_job()
        while len(_jobs) > CACHED_JOBS:
            _jobs.pop(next(iter(_jobs)))
    return job


_paused_for_kept = False  # the collector stays paused while kept chunks wait


@contextmanager
def _collector_paused():
    """Python's cyclic garbage collector is paused while a batch runs. A batch allocates
    a few objects per record (tuples, chunks) that are freed by reference counting, yet
    every 700 allocations start a collection that walks the young objects, and the
    older generations hold the whole keyed state: with the collector on, a batch spends
    up to a third of its time in it. Cycles made during the batch (by user code) are
    collected when it resumes, after the batch -- or, while this process keeps chunks
    for a later stage of the batch (object reuse), after that stage: a collection in
    between would walk every kept record (~0.3 s for W4's 250,000 here)."""
    global _paused_for_kept
    if not gc.isenabled() and not _paused_for_kept:  # the user's choice
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        _paused_for_kept = holds_kept_chunks()
        if not _paused_for_kept:
            gc.enable()


def forget_job(run_id: str) -> None:
    """Drops a finished job's cached plan and instances from this process."""
    _jobs.pop(run_id, None)
    for key in [k for k in _instances if k[0] == run_id]:
        del _instances[key]
