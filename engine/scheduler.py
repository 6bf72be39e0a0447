"""The driver's micro-batch loop.

Each batch: plan every source split's next range, run all stages as one
executor call, then -- only if no task failed -- commit the batch to the
metadata log (its state version becomes the base of the next), complete a
checkpoint or savepoint if one is due, and let the sinks publish its output.

On start, a job with a checkpoint directory resumes from the newest committed
batch (or complete checkpoint) found there, or from an explicit checkpoint or
savepoint: state is restored, sources are rewound to the recorded offsets and
the watermark continues where it was.
"""
import concurrent.futures
import logging
import os
import queue
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterator, List, Optional

from checkpoint.job_directory import JobDirectory, RestorePoint, export_checkpoint, \
    read_restore_point
from checkpoint.metadata import CommitRecord, OperatorInfo

from .errors import JobExecutionException
from .executor.base import Executor
from .sinks import Publisher
from .batch import BatchInfo, CompiledJob, MaxTimestamp, SinkItems, TaskFailure
from .time.watermarks import MAX_WATERMARK, MIN_WATERMARK, WatermarkTracker


log = logging.getLogger("spark_datastream")


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
    savepoint_dir: Optional[str] = None        # default target of savepoints


@dataclass
class RunOptions:
    max_records_per_batch: int
    batch_mode: bool
    job_dir: Optional[str] = None  # persistent checkpoint directory of this job
    job_parameters: Dict[str, str] = field(default_factory=dict)
    clock: Callable[[], int] = lambda: int(time.time() * 1000)
    batch_interval_ms: int = 200  # an unbounded job starts a batch at most this often
    job_name: str = "Flink Streaming Job"
    state_backend: str = "hashmap"
    checkpoints: CheckpointOptions = field(default_factory=CheckpointOptions)


@dataclass
class _SavepointRequest:
    directory: Optional[str]
    stop: bool = False
    drain: bool = False
    future: concurrent.futures.Future = field(default_factory=concurrent.futures.Future)


class _SplitCursor:
    """Progress of one source split: how many records were handed out so far. A split
    of unbounded size never finishes; a rate-limited one hands out only as many records
    as its rate allows since the job started."""

    def __init__(self, source, split: int, size: Optional[int], started_ms: int):
        self.source, self.split, self.size, self.offset = source, split, size, 0
        self.started_ms = started_ms
        self.limit = source.max_per_batch
        rate = source.rate_per_split()
        self.rate_per_ms = None if rate is None else rate / 1000

    def rewind(self, offset: int) -> None:
        """Continues after the first ``offset`` records (a restore)."""
        self.offset = offset
        if self.rate_per_ms is not None:  # as if the job had run at its rate so far
            self.started_ms -= int(offset / self.rate_per_ms)

    def next_range(self, max_records: int, now_ms: int):
        count = max_records if self.limit is None else min(max_records, self.limit)
        if self.size is not None:
            count = min(count, self.size - self.offset)
        if self.rate_per_ms is not None:
            count = min(count, int((now_ms - self.started_ms) * self.rate_per_ms) - self.offset)
        if count <= 0:
            return None
        batch_range = self.source.batch_range(self.split, self.offset, count)
        self.offset += count
        return batch_range

    @property
    def finished(self) -> bool:
        return self.size is not None and self.offset >= self.size


class JobRunner:
    """Runs a compiled job batch by batch on an executor."""

    def __init__(self, job: CompiledJob, sources: Dict[int, object],
                 publishers: Dict[int, Publisher], executor: Executor, options: RunOptions):
        self.job = job
        self.publishers = publishers
        self.executor = executor
        self.options = options
        self.cancelled = False
        self.stopped = False  # stopped with a savepoint (FINISHED, not CANCELED)
        self._savepoint_requests: "queue.Queue[_SavepointRequest]" = queue.Queue()
        plan = job.plan
        self.cursors: Dict[int, List[_SplitCursor]] = {}
        started = options.clock()
        for stage in plan.stages:
            if stage.is_source:
                source = sources[stage.nodes[0]]
                sizes = source.split_sizes(stage.parallelism)
                self.cursors[stage.id] = [_SplitCursor(source, i, n, started)
                                          for i, n in enumerate(sizes)]
        self.bounded = all(c.size is not None for cs in self.cursors.values() for c in cs)
        self.tracker = self._new_tracker(MIN_WATERMARK)
        restore_path = options.checkpoints.restore_path
        self._origin = None if restore_path is None else os.path.abspath(restore_path)
        self.keyed_operators = {  # (and broadcast state, stored as one key group)
            state_id: OperatorInfo(node.name, node.parallelism, max_parallelism)
            for node in plan.nodes.values()
            for state_id, max_parallelism in node.stored_state().items()}

    def _new_tracker(self, watermark: int) -> WatermarkTracker:
        """Watermarks: one input per parallel instance of each Timestamps/Watermarks node."""
        tracker = WatermarkTracker(watermark)
        for node in self.job.plan.nodes.values():
            if node.watermark_spec is not None:
                for subtask in range(node.parallelism):
                    tracker.add_input((node.id, subtask), node.watermark_spec)
        return tracker

    def _input_finished(self, node_id: int, subtask: int) -> bool:
        """A watermark input chained to a source split ends with that split."""
        cursors = self.cursors.get(self.job.plan.nodes[node_id].stage)
        return cursors is not None and cursors[subtask].finished

    def cancel(self) -> None:
        """Stops the job before its next batch."""
        self.cancelled = True

    def request_savepoint(self, directory: Optional[str], stop: bool = False,
                          drain: bool = False) -> concurrent.futures.Future:
        """Asks for a savepoint after the next committed batch; the future gets its path.
        ``stop`` ends the job after it; ``drain`` first ends event time (MAX_WATERMARK)."""
        directory = directory or self.options.checkpoints.savepoint_dir
        request = _SavepointRequest(directory, stop, drain)
        if directory is None:
            request.future.set_exception(ValueError(
                "No savepoint directory configured. Pass one to trigger_savepoint / "
                "stop_with_savepoint, or set a default with "
                "env.set_default_savepoint_directory(...) ('state.savepoints.dir')."))
        else:
            self._savepoint_requests.put(request)
        return request.future

    # -- the loop -----------------------------------------------------------------

    def batches(self) -> Iterator[int]:
        """Runs the job; yields each batch id after the batch is committed and published."""
        options = self.options
        temporary = options.job_dir is None
        directory = JobDirectory(options.job_dir or tempfile.mkdtemp(
            prefix="spark-datastream-state-"))
        max_records = float("inf") if options.batch_mode else options.max_records_per_batch
        outcome = "failed"
        opened: List[Publisher] = []
        try:
            start = self._restore(directory)
            committed = -1 if start is None else start.record.batch_id
            for publisher in self.publishers.values():
                publisher.open()
                opened.append(publisher)
                publisher.recover(committed)
            self.executor.start(self.job)
            checkpoints = _CheckpointClock(options.checkpoints, directory)
            batch_id = committed + 1
            watermark = self.tracker.watermark() if start is None else start.record.watermark
            while not self.cancelled:
                started = time.monotonic()
                now = options.clock()
                pending = self._pending_savepoints()
                drain = any(r.drain for r in pending)
                ranges = {stage_id: [[r] if (r := c.next_range(max_records, now)) is not None
                                     else [] for c in cursors]
                          for stage_id, cursors in self.cursors.items()}
                is_final = drain or all(c.finished for cs in self.cursors.values() for c in cs)
                # Fixed before the batch runs, from what earlier batches saw; the last
                # batch of bounded input ends with MAX_WATERMARK.
                next_watermark = MAX_WATERMARK if is_final else self.tracker.advance(now)
                scripted_watermark, now = self._scripted_time(now)
                if scripted_watermark is not None and not is_final:
                    next_watermark = max(watermark, scripted_watermark)
                batch = BatchInfo(self.job.run_id, batch_id, committed, is_final,
                                  directory.root, now, options.batch_mode,
                                  options.job_parameters,
                                  input_watermark=watermark, watermark=next_watermark)
                results = self.executor.run_batch(batch, ranges)
                errors = [r.error for r in results if isinstance(r, TaskFailure)]
                if errors:
                    raise JobExecutionException(f"Job failed in batch {batch_id}: {errors[0]}")
                self._observe_timestamps(results)
                record = self._record(batch_id, next_watermark)
                directory.commit(record)
                committed, watermark = batch_id, next_watermark
                if not is_final:
                    checkpoints.after_commit(record)
                stop = self._complete_savepoints(pending, directory, record)
                self._publish(results)
                yield batch_id
                if is_final or stop:
                    outcome = "finished"
                    self.stopped = stop
                    break
                batch_id += 1
                if not self.bounded:  # wait for the next trigger, so idle jobs don't spin
                    time.sleep(max(0.0, options.batch_interval_ms / 1000
                                   - (time.monotonic() - started)))
            else:
                outcome = "cancelled"
        finally:
            self._fail_savepoints(outcome)
            self.executor.stop()
            for publisher in opened:
                publisher.close()
            # Flink keeps a job's checkpoints only when it failed, or when it was
            # cancelled with RETAIN_ON_CANCELLATION. A failed job keeps them here too:
            # running it again resumes from its last committed batch.
            if temporary or outcome == "finished" or (
                    outcome == "cancelled" and not options.checkpoints.retain_on_cancellation):
                directory.clear()

    # -- restore and commit ---------------------------------------------------------

    def _source_uids(self) -> Dict[str, int]:
        plan = self.job.plan
        return {plan.nodes[plan.stages[stage_id].nodes[0]].uid: stage_id
                for stage_id in self.cursors}

    def _restore(self, directory: JobDirectory) -> Optional[RestorePoint]:
        """Finds where the job continues from (None: from scratch) and rewinds to it."""
        restore_path = self.options.checkpoints.restore_path
        point = directory.find_restore_point()
        explicit = restore_path is not None and (
            point is None or point.record.extra.get("restored_from") != self._origin)
        if explicit:  # (a run that started from this savepoint and failed goes on instead)
            point = read_restore_point(restore_path)
        if point is None:
            return None
        record = point.record
        sources = {uid: len(self.cursors[stage_id])
                   for uid, stage_id in self._source_uids().items()}
        record.check_restorable_by(point.path, self.keyed_operators, sources,
                                   self.options.checkpoints.allow_non_restored_state)
        directory.restore(point, explicit=explicit)
        for uid, stage_id in self._source_uids().items():
            for cursor, offset in zip(self.cursors[stage_id],
                                      record.source_offsets.get(uid, ())):  # new: from 0
                cursor.rewind(offset)
        stored_inputs = {tuple(i) for i, _ in record.watermark_tracker["inputs"]}
        if stored_inputs == {(n.id, s) for n in self.job.plan.nodes.values()
                             if n.watermark_spec is not None for s in range(n.parallelism)}:
            self.tracker = WatermarkTracker.restore(record.watermark_tracker)
        else:  # inputs changed (another parallelism): keep the watermark, not the inputs
            self.tracker = self._new_tracker(record.watermark)
        log.info("Job %r resumes after batch %d from %s", self.options.job_name,
                 record.batch_id, point.path)
        return point

    def _record(self, batch_id: int, watermark: int) -> CommitRecord:
        return CommitRecord(
            job_name=self.options.job_name, batch_id=batch_id,
            state_backend=self.options.state_backend, operators=dict(self.keyed_operators),
            source_offsets={uid: [c.offset for c in self.cursors[stage_id]]
                            for uid, stage_id in self._source_uids().items()},
            watermark=watermark, watermark_tracker=self.tracker.snapshot(),
            extra={"restored_from": self._origin})

    # -- savepoints -----------------------------------------------------------------

    def _pending_savepoints(self) -> List[_SavepointRequest]:
        pending = []
        while True:
            try:
                pending.append(self._savepoint_requests.get_nowait())
            except queue.Empty:
                return pending

    def _complete_savepoints(self, pending: List[_SavepointRequest], directory: JobDirectory,
                             record: CommitRecord) -> bool:
        """Writes the requested savepoints of the committed batch; True if one stops the job."""
        for request in pending:
            target = os.path.join(request.directory,
                                  f"savepoint-{self.job.run_id[:6]}-{uuid.uuid4().hex[:12]}")
            try:
                request.future.set_result(export_checkpoint(directory.store, record, target))
            except Exception as e:  # the job goes on; the caller learns why
                request.future.set_exception(e)
        return any(r.stop for r in pending)

    def _fail_savepoints(self, outcome: str) -> None:
        for request in self._pending_savepoints():
            request.future.set_exception(JobExecutionException(
                f"The job {outcome} before the savepoint was taken."))

    def _scripted_time(self, now: int):
        """A scripted source (api.testing.TestStream) sets the watermark and the
        processing time of its batches."""
        for cursors in self.cursors.values():
            scripted = cursors[0].source.time_of(cursors[0].offset)
            if scripted is not None:
                return scripted
        return None, now

    def _observe_timestamps(self, results: list) -> None:
        for result in results:
            if isinstance(result, MaxTimestamp) and not self.tracker.is_finished():
                self.tracker.observe((result.node, result.subtask), result.timestamp,
                                     finished=self._input_finished(result.node, result.subtask))

    def _publish(self, results: list) -> None:
        sink_items = sorted((r for r in results if isinstance(r, SinkItems)),
                            key=lambda r: (r.node, r.subtask))
        for result in sink_items:
            self.publishers[result.node].publish(result.subtask, result.items)


class _CheckpointClock:
    """Decides when a committed batch also becomes a checkpoint (``chk-<n>``): at most
    once per interval and never sooner than ``min_pause`` after the previous one."""

    def __init__(self, options: CheckpointOptions, directory: JobDirectory):
        self.options = options
        self.directory = directory
        self.next_id = max(directory.checkpoint_ids(), default=0) + 1
        self.last = time.monotonic()
        self.failures = 0

    def after_commit(self, record: CommitRecord) -> None:
        options = self.options
        if options.interval_ms is None:
            return
        elapsed_ms = (time.monotonic() - self.last) * 1000
        if elapsed_ms < max(options.interval_ms, options.min_pause_ms):
            return
        try:
            self.directory.write_checkpoint(self.next_id, record, options.num_retained)
        except OSError as e:
            self.failures += 1
            log.warning("Checkpoint %d failed: %s", self.next_id, e)
            if self.failures > options.tolerable_failures:
                raise JobExecutionException(
                    f"Exceeded checkpoint tolerable failure threshold "
                    f"({options.tolerable_failures}): checkpoint {self.next_id} failed: "
                    f"{e}") from e
        else:
            self.failures = 0
        self.next_id += 1
        self.last = time.monotonic()
