"""The driver's micro-batch loop.

Each batch: plan every source split's next range and how the watermark moves
(``WatermarkStep``), run all stages as one executor call, then -- only if no task
failed -- advance the watermark tracker with the batch's timestamps to the watermark
the stages after every watermark input reached, and commit the batch to the
metadata log (its state version becomes the base of the next), complete a
checkpoint or savepoint if one is due, and let the sinks commit its output (in the
driver, or in the next batch's tasks of the sinks' subtasks while they run it:
``engine.runtime.sink_commits``).

On start, a job with a checkpoint directory resumes from the newest committed
batch (or complete checkpoint) found there, or from an explicit checkpoint or
savepoint: state is restored, sources are rewound to the recorded offsets and
the watermark continues where it was. A restart after a failed batch (when the
job's ``engine.driver.restart`` policy allows one) goes back the same way to the last
committed batch, with a new run id so that every task opens its operators afresh.
"""
import concurrent.futures
import dataclasses
import logging
import os
import queue
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Dict, Iterator, List, Optional, Set, Tuple

from checkpoint import storage
from checkpoint.job_directory import JobDirectory, NoValidRestorePointError, RestorePoint, \
    export_checkpoint, read_restore_point
from checkpoint.metadata import CommitRecord, OperatorInfo

from engine.errors import JobExecutionException
from engine.executor.base import Executor
from engine.driver.job_control import JobControl
from engine.driver.job_metrics import JobMetrics
from engine.driver.metric_reporters import JsonLinesReporter, MetricReporter, PrometheusReporter
from engine.driver.progress import progress_display
from engine.driver.rest.job_view import serve_job
from engine.driver.settings import CheckpointOptions, JobSettings
from engine.io.sinks import Committer, CommitterContext
from engine.batch import BatchInfo, CompiledJob, MaxTimestamp, Printed, SinkCommit, \
    SinkCommittable, SplitPosition, TaskFailure
from engine.io.sources import Source, SplitRange
from engine.time.watermarks import MAX_WATERMARK, MIN_WATERMARK, WatermarkStep, \
    WatermarkTracker


log = logging.getLogger(__name__)

UNTRUSTED_STATE = "untrusted_state"  # a commit record's mark: state from a given savepoint


def _now_ms() -> int:
    """The processing time: wall-clock milliseconds."""
    return int(time.time() * 1000)


def _resumed_watermark(record: CommitRecord) -> int:
    """Where event time resumes after ``record``: its watermark, unless a drained stop
    ended event time (MAX_WATERMARK) for the stop only; then where its inputs were, as
    Flink's restored job, which keeps no watermark, starts afresh."""
    if record.watermark < MAX_WATERMARK:
        return record.watermark
    return record.watermark_tracker["watermark"]


def _write_printed(results: list) -> None:
    """Writes what the batch's tasks printed (``Printed``) to stdout, stage by stage and
    subtask by subtask, once they are done (what ``close()`` printed last); that of a
    failed batch too: as in Flink, what a function printed before it failed has been
    printed."""
    printed = sorted((r for r in results if isinstance(r, Printed)),
                     key=lambda p: (p.closing, p.stage, p.subtask))
    if printed:
        sys.stdout.write("".join(p.text for p in printed))
        sys.stdout.flush()


@dataclass
class _SavepointRequest:
    directory: Optional[str]
    stop: bool = False
    drain: bool = False
    future: concurrent.futures.Future = field(default_factory=concurrent.futures.Future)


class _SourceSplits:
    """The splits of one source stage and their positions. Split ``i`` (in the order
    the source listed it) is read by subtask ``i % parallelism``."""

    def __init__(self, source: Source, parallelism: int):
        self.source = source
        self.parallelism = parallelism
        self.positions: Dict[str, Any] = {}  # split id -> position, in listing order
        self.reported: Set[str] = set()       # splits whose position a task reports
        self.discover()

    def discover(self) -> List[str]:
        """Adds the splits the source lists now; returns the new ones."""
        new = [split for split in self.source.splits(self.parallelism)
               if split not in self.positions]
        for split in new:
            self.positions[split] = self.source.start_position(split)
        return new

    def plan(self, max_records: float, now_ms: int) -> List[List[SplitRange]]:
        """The batch's ranges per subtask. A range with a known end moves its split's
        position now; otherwise the task reports it (``SplitPosition``)."""
        source = self.source
        ranges: List[List[SplitRange]] = [[] for _ in range(self.parallelism)]
        for index, (split, position) in enumerate(list(self.positions.items())):
            if source.is_finished(split, position):
                continue
            split_range = source.plan(split, position, max_records, now_ms)
            if split_range is None:
                continue
            ranges[index % self.parallelism].append(split_range)
            if split_range.end is None:
                self.reported.add(split)
            else:
                self.positions[split] = split_range.end
        return ranges

    def has_input(self) -> bool:
        """Whether some split's source says records wait to be read now."""
        return any(self.source.has_input(split, position)
                   for split, position in self.positions.items()
                   if split not in self.reported and not self.is_finished(split))

    def report(self, split: str, position: Any) -> None:
        self.positions[split] = position
        self.reported.discard(split)

    def is_finished(self, split: str) -> bool:
        return self.source.is_finished(split, self.positions[split])

    @property
    def finished(self) -> bool:
        """Every split is read to its end, and no more splits can come."""
        return (not self.reported and not (self.source.splits_change and not self.source.bounded)
                and all(self.is_finished(split) for split in self.positions))


class JobRunner:
    """Runs a compiled job batch by batch on an executor."""

    def __init__(self, job: CompiledJob, sources: Dict[int, Source],
                 sinks: Dict[int, "SinkNode"], executor: Executor, settings: JobSettings):
        self.job = job
        self.job_id = job.run_id  # stays when a restart gives the job a new run id
        self.sinks = sinks
        self.executor = executor
        self.settings = settings
        self.cancelled = False
        self.stopped = False  # stopped with a savepoint (FINISHED, not CANCELED)
        self._savepoint_requests: "queue.Queue[_SavepointRequest]" = queue.Queue()
        plan = job.plan
        self.splits: Dict[int, _SourceSplits] = {
            stage.id: _SourceSplits(sources[stage.nodes[0]], stage.parallelism)
            for stage in plan.stages if stage.is_source}
        self.bounded = all(s.source.bounded for s in self.splits.values())
        self._feeds_back = any(s.source.feeds_back for s in self.splits.values())
        self.tracker = self._new_tracker(MIN_WATERMARK)
        self.metrics = JobMetrics(plan, settings.job_name, job.run_id)
        restore_path = settings.checkpoints.restore_path
        self._origin = None if restore_path is None or storage.is_url(restore_path) \
            else os.path.abspath(restore_path)
        self._untrusted = False  # whether the job's state comes from a savepoint given to it
        self.keyed_operators = {  # (and broadcast state, stored as one key group)
            state_id: OperatorInfo(node.name, node.parallelism, max_parallelism)
            for node in plan.nodes.values()
            for state_id, max_parallelism in node.stored_state().items()}

    def _watermark_inputs(self, stage_id: int, splits):
        """The watermark inputs of Timestamps/Watermarks nodes in ``stage_id`` for
        ``splits`` (a node chained to a source has one input per split)."""
        return [((node.id, split), node.watermark_spec) for node in self.job.plan.nodes.values()
                if node.watermark_spec is not None and node.stage == stage_id
                for split in splits]

    def _new_tracker(self, watermark: int) -> WatermarkTracker:
        """Watermarks: one input per source split a Timestamps/Watermarks node is chained
        to, or per parallel instance of a node after a shuffle."""
        tracker = WatermarkTracker(watermark, dynamic_inputs=any(
            s.source.splits_change and not s.source.bounded for s in self.splits.values()))
        for node in self.job.plan.nodes.values():
            if node.watermark_spec is not None:
                splits = self.splits.get(node.stage)
                for input_id in (splits.positions if splits else range(node.parallelism)):
                    tracker.add_input((node.id, input_id), node.watermark_spec)
        return tracker

    def cancel(self) -> None:
        """Stops the job before its next batch."""
        self.cancelled = True

    def request_savepoint(self, directory: Optional[str], stop: bool = False,
                          drain: bool = False) -> concurrent.futures.Future:
        """Asks for a savepoint after the next committed batch; the future gets its path.
        ``stop`` ends the job after it; ``drain`` first ends event time (MAX_WATERMARK)."""
        directory = directory or self.settings.checkpoints.savepoint_dir
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
        """Runs the job; yields each batch id after the batch is committed and its sinks'
        commits are under way (the last batch's: done). A failed batch restarts the job
        from its last committed batch when the restart policy allows it
        (``engine.driver.restart``)."""
        settings = self.settings
        temporary = settings.job_dir is None
        directory = JobDirectory(settings.job_dir or tempfile.mkdtemp(
            prefix="spark-datastream-state-"))
        self._control = JobControl(self, None if temporary else directory)
        outcome, error = "failed", None
        reporters: List[MetricReporter] = []
        try:
            self._start_reporters(reporters, None if temporary else directory.root)
            while True:
                try:
                    outcome = yield from self._run(directory, reporters)
                    break
                except JobExecutionException as failure:
                    for reporter in reporters:
                        reporter.job_failed(failure)
                    delay_ms = settings.restart.on_failure(_now_ms())
                    if delay_ms is None or self.cancelled:
                        raise
                    log.warning("Job %r failed, restarting from its last committed batch in "
                                "%d ms: %s", settings.job_name, delay_ms, failure)
                    if self._cancelled_within(delay_ms / 1000):
                        outcome = "cancelled"
                        break
                    self._reset_for_restart()
        except BaseException as e:
            error = e
            raise
        finally:
            self._fail_savepoints(outcome)
            for splits in self.splits.values():
                splits.source.close()
            # Flink keeps a job's checkpoints only when it failed, or when it was
            # cancelled with RETAIN_ON_CANCELLATION. A failed job keeps them here too:
            # running it again resumes from its last committed batch.
            clear = temporary or outcome == "finished" or (
                outcome == "cancelled" and not settings.checkpoints.retain_on_cancellation)
            for reporter in reporters:
                reporter.close(discard=clear)
            if clear:
                directory.clear()
            self._control.ended("stopped" if self.stopped else outcome, error)

    def _run(self, directory: JobDirectory, reporters: List[MetricReporter]) -> Iterator[int]:
        """One run of the job from where ``directory`` says it stands, until it finishes
        ("finished"), is cancelled ("cancelled") or a batch fails (raises)."""
        settings = self.settings
        if directory.finished_while_clearing():
            log.warning("Job %r finished in an earlier run, which ended while it deleted its "
                        "checkpoints: nothing runs again", settings.job_name)
            return "finished"
        max_records = sys.maxsize if settings.batch_mode else settings.max_records_per_batch
        opened: List[SinkNode] = []
        commits: Tuple[SinkCommit, ...] = ()  # the last committed batch's, made in tasks
        try:
            start = self._restore(directory)
            committed = -1 if start is None else start.record.batch_id
            for sink in self.sinks.values():
                sink.committer.open(CommitterContext(
                    settings.job_name, sink.uid, os.path.join(directory.root, "sinks", sink.uid),
                    sink.parallelism))
                opened.append(sink)
                sink.committer.recover(committed)
            self.executor.start(self.job)
            checkpoints = _CheckpointClock(settings.checkpoints, directory, self.metrics)
            batch_id = committed + 1
            watermark = self.tracker.watermark() if start is None else _resumed_watermark(
                start.record)
            while not self.cancelled:
                started = time.monotonic()
                now = _now_ms()
                pending = self._pending_savepoints()
                drain = any(r.drain for r in pending)
                self._discover_splits()
                ranges = {stage_id: splits.plan(max_records, now)
                          for stage_id, splits in self.splits.items()}
                is_final = drain or (all(s.finished for s in self.splits.values()) and not (
                    # a job that feeds records back ends with a batch without input, so
                    # that nothing can be fed back after it
                    self._feeds_back and any(r for rs in ranges.values() for r in rs)))
                # The batch's records see the committed watermark. Stages after every
                # watermark input advance, after the records, to the watermark the
                # records' timestamps give (``step``: what the tracker reaches after the
                # batch); the others stay there. The last batch of bounded input ends
                # with MAX_WATERMARK, a scripted batch with its script's.
                step = self._watermark_step(now)
                fixed = MAX_WATERMARK if is_final else None
                scripted_watermark, now = self._scripted_time(now)
                if scripted_watermark is not None and not is_final:
                    fixed = max(watermark, scripted_watermark)
                batch = BatchInfo(self.job.run_id, batch_id, committed, is_final,
                                  directory.root, now, settings.batch_mode,
                                  settings.job_parameters, input_watermark=watermark,
                                  watermark=watermark if fixed is None else fixed,
                                  watermark_step=step if fixed is None else None,
                                  job_name=settings.job_name, commits=commits)
                results = self.executor.run_batch(batch, ranges)
                _write_printed(results)
                errors = [r.error for r in results if isinstance(r, TaskFailure)]
                if errors:
                    raise JobExecutionException(f"Job failed in batch {batch_id}: {errors[0]}")
                self._report_positions(results)
                self.tracker = step.advanced({(r.node, r.input): r.timestamp for r in results
                                              if isinstance(r, MaxTimestamp)})
                next_watermark = max(watermark, self.tracker.watermark()) if fixed is None \
                    else fixed
                record = self._record(batch_id, next_watermark)
                directory.commit(record)
                committed, watermark = batch_id, next_watermark
                if not is_final:
                    checkpoints.after_commit(record)
                stop = self._complete_savepoints(pending, directory, record)
                commits = self._commit_sinks(batch_id, results)
                if is_final or stop:
                    commits = self._run_commits(commits)
                snapshot = self.metrics.batch_completed(
                    batch_id, results, next_watermark, _now_ms(),
                    (time.monotonic() - started) * 1000)
                for reporter in reporters:
                    reporter.report(snapshot)
                log.debug("Job %r committed batch %d", settings.job_name, batch_id)
                self._control.after_batch(batch_id, next_watermark)
                yield batch_id
                if is_final or stop:
                    self.stopped = stop
                    return "finished"
                batch_id += 1
                # Unbounded: the next batch starts at the next interval, so that an idle
                # job does not spin, or at once when input is waiting.
                # Before it waits, the driver commits what no next batch carries yet.
                interval = settings.batch_interval_ms / 1000
                if not self.bounded and time.monotonic() - started < interval and \
                        not any(s.has_input() for s in self.splits.values()):
                    commits = self._run_commits(commits)
                    self._cancelled_within(interval - (time.monotonic() - started))
            self._run_commits(commits)
            return "cancelled"
        finally:
            self.executor.stop()
            for sink in opened:
                sink.committer.close()

    def _cancelled_within(self, seconds: float) -> bool:
        """Waits ``seconds`` (a restart's delay, the rest of a batch interval); True as
        soon as the job is cancelled."""
        deadline = time.monotonic() + seconds
        while not self.cancelled and time.monotonic() < deadline:
            time.sleep(min(0.05, max(0.0, deadline - time.monotonic())))
        return self.cancelled

    def _reset_for_restart(self) -> None:
        """Forgets the failed run: a new run id (tasks open their operators afresh) and
        source positions and watermarks to be restored from the last committed batch."""
        self.job = dataclasses.replace(self.job, run_id=uuid.uuid4().hex)
        self.splits = {stage_id: _SourceSplits(splits.source, splits.parallelism)
                       for stage_id, splits in self.splits.items()}
        self.tracker = self._new_tracker(MIN_WATERMARK)

    def _start_reporters(self, reporters: List[MetricReporter], job_dir: Optional[str]) -> None:
        options = self.settings.metrics
        if job_dir is not None and not storage.is_url(job_dir):  # (appends to a local file)
            reporters.append(JsonLinesReporter(job_dir))
        if options.prometheus_ports is not None:
            reporters.append(PrometheusReporter(self.metrics.snapshot, options.prometheus_host,
                                                options.prometheus_ports))
        if self.settings.rest.port is not None:
            reporters.append(serve_job(self, self._control, self.settings.rest))
        display = progress_display(self.settings.job_name) if options.progress else None
        if display is not None:
            reporters.append(display)

    # -- restore and commit ---------------------------------------------------------

    def _source_uids(self) -> Dict[str, int]:
        plan = self.job.plan
        return {plan.nodes[plan.stages[stage_id].nodes[0]].uid: stage_id
                for stage_id in self.splits}

    def _restore(self, directory: JobDirectory) -> Optional[RestorePoint]:
        """Finds where the job continues from (None: from scratch) and rewinds to it."""
        restore_path = self.settings.checkpoints.restore_path
        try:
            point = directory.find_restore_point()
        except NoValidRestorePointError:
            if restore_path is None:
                raise
            point = None  # the savepoint given replaces the damaged ones
        explicit = restore_path is not None and (
            point is None or point.record.extra.get("restored_from") != self._origin)
        if explicit:  # (a run that started from this savepoint and failed goes on instead)
            point = read_restore_point(restore_path)
        if point is None:
            return None
        record = point.record
        sources = {uid: None if self.splits[stage_id].source.splits_change
                   else list(self.splits[stage_id].positions)
                   for uid, stage_id in self._source_uids().items()}
        record.check_restorable_by(point.path, self.keyed_operators, sources,
                                   self.settings.checkpoints.allow_non_restored_state)
        # State from a savepoint given to the job, and all state built on it, is not the
        # job's own: it is unpickled only if the user says to trust it. (The mark in the
        # job's own records is trusted: its directory is this user's.)
        self._untrusted = explicit or record.extra.get(UNTRUSTED_STATE) is True
        record.extra = dict(record.extra, **{UNTRUSTED_STATE: self._untrusted})
        self._trust_state(not self._untrusted
                          or self.settings.checkpoints.trust_pickled_savepoint)
        directory.restore(point, explicit=explicit)
        for uid, stage_id in self._source_uids().items():  # (a new source starts afresh)
            positions = self.splits[stage_id].positions
            for split, position in record.source_offsets.get(uid, {}).items():
                if split in positions:
                    positions[split] = position
                else:  # e.g. a file that was deleted since
                    log.warning("Source %r no longer has split %r; its position is dropped",
                                uid, split)
        stored_inputs = {tuple(i) for i, _ in record.watermark_tracker["inputs"]}
        if stored_inputs == {i for i, _ in self._new_tracker(MIN_WATERMARK).snapshot()["inputs"]}:
            self.tracker = WatermarkTracker.restore(record.watermark_tracker)
        else:  # inputs changed (another parallelism): keep the watermark, not the inputs
            self.tracker = self._new_tracker(_resumed_watermark(record))
        log.info("Job %r resumes after batch %d from %s", self.settings.job_name,
                 record.batch_id, point.path)
        return point

    def _record(self, batch_id: int, watermark: int) -> CommitRecord:
        return CommitRecord(
            job_name=self.settings.job_name, batch_id=batch_id,
            state_backend=self.settings.task_settings.state_backend,
            operators=dict(self.keyed_operators),
            source_offsets={uid: dict(self.splits[stage_id].positions)
                            for uid, stage_id in self._source_uids().items()},
            watermark=watermark, watermark_tracker=self.tracker.snapshot(),
            extra={"restored_from": self._origin, UNTRUSTED_STATE: self._untrusted})

    def _trust_state(self, trusted: bool) -> None:
        """Lets this run's tasks unpickle stored state (as the job's settings allow) only
        if it is ``trusted``."""
        options = self.settings.task_settings.state_backend_options
        allowed = trusted and options.get("allow_pickled", True)
        self.job = dataclasses.replace(self.job, settings=dataclasses.replace(
            self.job.settings, state_backend_options=dict(options, allow_pickled=allowed)))

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
        for splits in self.splits.values():
            positions = list(splits.positions.values())
            scripted = splits.source.time_of(positions[0]) if positions else None
            if scripted is not None:
                return scripted
        return None, now

    def _discover_splits(self) -> None:
        """Asks sources whose splits change for new ones (new partitions, new files)."""
        for stage_id, splits in self.splits.items():
            if splits.source.splits_change and not self.tracker.is_finished():
                for input_id, spec in self._watermark_inputs(stage_id, splits.discover()):
                    self.tracker.add_input(input_id, spec)

    def _report_positions(self, results: list) -> None:
        nodes = self.job.plan.nodes
        for result in results:
            if isinstance(result, SplitPosition):
                self.splits[nodes[result.node].stage].report(result.split, result.position)

    def _watermark_step(self, now: int) -> WatermarkStep:
        """How the tracker moves in the batch just planned, at processing time ``now``:
        every input observes its largest timestamp of the batch; an input of a split that
        the batch reads to its end is finished (a split whose end only its reader can
        tell, ``SplitPosition``, once the driver knows it: from the next batch)."""
        finished = set()
        for node in self.job.plan.nodes.values():
            splits = self.splits.get(node.stage)
            if node.watermark_spec is not None and splits is not None:
                finished.update((node.id, split) for split in splits.positions
                                if splits.is_finished(split) and split not in splits.reported)
        return WatermarkStep(self.tracker, frozenset(finished), now)

    def _commit_sinks(self, batch_id: int, results: list) -> Tuple[SinkCommit, ...]:
        """Commits the sinks' output of the committed batch that the driver commits; returns
        the rest, which the next batch's tasks commit (``engine.runtime.sink_commits``)."""
        in_tasks = []
        for result in sorted((r for r in results if isinstance(r, SinkCommittable)),
                             key=lambda r: (r.node, r.subtask)):
            node = self.job.plan.nodes[result.node]
            committer = self.sinks[result.node].committer
            if committer.commits_in_tasks:
                in_tasks.append(SinkCommit(node.name, node.stage, result.subtask, batch_id,
                                           committer, result.committable))
                continue
            try:
                committer.commit(batch_id, result.subtask, result.committable)
            except Exception as e:  # the batch stays committed; a restart commits it again
                raise JobExecutionException(
                    f"Sink {node.name!r} failed to commit batch {batch_id}: {e}") from e
        return tuple(in_tasks)

    def _run_commits(self, commits: Tuple[SinkCommit, ...]) -> tuple:
        """Makes ``commits`` now, when no batch carries them (the last batch, a wait for
        input), in the sinks' subtasks (``Executor.run_commits``); returns ()."""
        try:
            self.executor.run_commits(commits)
        except Exception as e:  # the batch stays committed; a restart commits it again
            raise JobExecutionException(
                f"Sink {commits[0].sink!r} failed to commit batch {commits[0].batch_id}: "
                f"{e}") from e
        return ()


@dataclass
class SinkNode:
    """The driver side of a sink node: its uid (names its staging directory), its
    committer and its parallelism."""
    uid: str
    committer: Committer
    parallelism: int = 1


class _CheckpointClock:
    """Decides when a committed batch also becomes a checkpoint (``chk-<n>``): at most
    once per interval and never sooner than ``min_pause`` after the previous one."""

    def __init__(self, options: CheckpointOptions, directory: JobDirectory,
                 metrics: JobMetrics):
        self.options = options
        self.directory = directory
        self.metrics = metrics
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
        started = time.monotonic()
        try:
            path = self.directory.write_checkpoint(self.next_id, record, options.num_retained)
        except OSError as e:
            self.metrics.checkpoint_failed()
            self.failures += 1
            log.warning("Checkpoint %d failed: %s", self.next_id, e)
            if self.failures > options.tolerable_failures:
                raise JobExecutionException(
                    f"Exceeded checkpoint tolerable failure threshold "
                    f"({options.tolerable_failures}): checkpoint {self.next_id} failed: "
                    f"{e}") from e
        else:
            self.metrics.checkpoint_completed(path, (time.monotonic() - started) * 1000)
            self.failures = 0
        self.next_id += 1
        self.last = time.monotonic()
