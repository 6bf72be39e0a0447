"""The driver's micro-batch loop.

Each batch: plan every source split's next range, run all stages as one
executor call, then -- only if no task failed -- commit the batch (its state
version becomes the base of the next) and let the sinks publish its output.
"""
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, Iterator, List, Optional

from .errors import JobExecutionException
from .executor.base import Executor
from .task import ERROR, SINK, STATS, BatchInfo, CompiledJob
from .time.watermarks import MAX_WATERMARK, WatermarkTracker


class Publisher:
    """Driver side of a sink: receives a committed batch's items per subtask."""

    def open(self) -> None:
        pass

    def recover(self, committed_batch: int) -> None:
        """Called after ``open`` when a job resumes from ``committed_batch``: finish
        publishing that batch if a crash interrupted it, and discard what tasks
        prepared for later batches (they never committed and will run again)."""

    def publish(self, subtask: int, items: list) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass


@dataclass
class RunOptions:
    max_records_per_batch: int
    batch_mode: bool
    state_dir: Optional[str] = None
    job_parameters: Dict[str, str] = field(default_factory=dict)
    clock: Callable[[], int] = lambda: int(time.time() * 1000)
    batch_interval_ms: int = 200  # an unbounded job starts a batch at most this often


class _SplitCursor:
    """Progress of one source split: how many records were handed out so far. A split
    of unbounded size never finishes; a rate-limited one hands out only as many records
    as its rate allows since the job started."""

    def __init__(self, source, split: int, size: Optional[int], started_ms: int):
        self.source, self.split, self.size, self.offset = source, split, size, 0
        self.started_ms = started_ms
        self.limit = getattr(source, "max_per_batch", None)
        rate = getattr(source, "rate_per_split", lambda: None)()
        self.rate_per_ms = None if rate is None else rate / 1000

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
        # Watermarks: one input per parallel instance of each Timestamps/Watermarks node.
        self.tracker = WatermarkTracker()
        for node in plan.nodes.values():
            if node.watermark_spec is not None:
                for subtask in range(node.parallelism):
                    self.tracker.add_input((node.id, subtask), node.watermark_spec)

    def _input_finished(self, node_id: int, subtask: int) -> bool:
        """A watermark input chained to a source split ends with that split."""
        cursors = self.cursors.get(self.job.plan.nodes[node_id].stage)
        return cursors is not None and cursors[subtask].finished

    def cancel(self) -> None:
        """Stops the job before its next batch."""
        self.cancelled = True

    def batches(self) -> Iterator[int]:
        """Runs the job; yields each batch id after the batch is committed and published."""
        options = self.options
        state_dir = options.state_dir or tempfile.mkdtemp(prefix="spark-datastream-state-")
        max_records = float("inf") if options.batch_mode else options.max_records_per_batch
        for publisher in self.publishers.values():
            publisher.open()
        self.executor.start(self.job)
        try:
            committed, batch_id, watermark = -1, 0, self.tracker.watermark()
            while not self.cancelled:
                started = time.monotonic()
                now = options.clock()
                ranges = {stage_id: [[r] if (r := c.next_range(max_records, now)) is not None
                                     else [] for c in cursors]
                          for stage_id, cursors in self.cursors.items()}
                is_final = all(c.finished for cs in self.cursors.values() for c in cs)
                # Fixed before the batch runs, from what earlier batches saw; the last
                # batch of bounded input ends with MAX_WATERMARK.
                next_watermark = MAX_WATERMARK if is_final else self.tracker.advance(now)
                scripted_watermark, now = self._scripted_time(now)
                if scripted_watermark is not None and not is_final:
                    next_watermark = max(watermark, scripted_watermark)
                batch = BatchInfo(self.job.run_id, batch_id, committed, is_final, state_dir,
                                  now, options.batch_mode, options.job_parameters,
                                  input_watermark=watermark, watermark=next_watermark)
                results = self.executor.run_batch(batch, ranges)
                errors = [item[1] for item in results if item[0] == ERROR]
                if errors:
                    raise JobExecutionException(f"Job failed in batch {batch_id}: {errors[0]}")
                committed, watermark = batch_id, next_watermark
                self._observe_timestamps(results)
                self._publish(results)
                yield batch_id
                if is_final:
                    break
                batch_id += 1
                if not self.bounded:  # wait for the next trigger, so idle jobs don't spin
                    time.sleep(max(0.0, options.batch_interval_ms / 1000
                                   - (time.monotonic() - started)))
        finally:
            self.executor.stop()
            for publisher in self.publishers.values():
                publisher.close()
            if options.state_dir is None:
                shutil.rmtree(state_dir, ignore_errors=True)

    def _scripted_time(self, now: int):
        """A scripted source (api.testing.TestStream) sets the watermark and the
        processing time of its batches."""
        for cursors in self.cursors.values():
            time_of = getattr(cursors[0].source, "time_of", None)
            if time_of is not None:
                return time_of(cursors[0].offset)
        return None, now

    def _observe_timestamps(self, results: List[tuple]) -> None:
        for _, node_id, subtask, max_timestamp in (r for r in results if r[0] == STATS):
            if not self.tracker.is_finished():
                self.tracker.observe((node_id, subtask), max_timestamp,
                                     finished=self._input_finished(node_id, subtask))

    def _publish(self, results: List[tuple]) -> None:
        sink_items = sorted((item for item in results if item[0] == SINK),
                            key=lambda item: (item[1], item[2]))
        for _, node_id, subtask, items in sink_items:
            self.publishers[node_id].publish(subtask, items)
