"""What the REST API knows of one running job: its vertices, the checkpoints, savepoints
and failures seen so far, and its control calls. The driver feeds it as a metric
reporter (after each committed batch) and tells it of failed runs; HTTP threads read it.

Control calls go through the job's ``JobControl`` (``engine/driver/job_control.py``),
the path of the command line's requests.
"""
import collections
import hashlib
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Deque, Dict, List, Optional, Tuple

from engine.graph import PlanVertex, plan_vertices
from engine.driver.job_control import JobControl
from engine.driver.job_metrics import sizes_by_operator
from engine.driver.metric_reporters import MetricReporter
from engine.driver.rest.server import serve, withdraw
from engine.driver.settings import RestOptions

HISTORY = 10      # checkpoints remembered (Flink's web.checkpoints.history)
LINGER_SECONDS = 5  # an ended job is still served: a client polling it sees how it ended
EXCEPTIONS = 20   # failures remembered


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class Vertex:
    """A plan vertex with its REST id (32 hex digits from its first operator's uid, so it
    stays the same across runs, as Flink's vertex ids do) and its operators' names in
    the metric snapshots."""
    id: str
    plan: PlanVertex
    operators: List[str]


@dataclass
class Trigger:
    """A savepoint or stop asked for over REST: the JobControl request it became."""
    request_id: str
    trigger_timestamp: int
    recorded: bool = False  # in the history


def serve_job(runner, control: JobControl, options: RestOptions) -> "JobView":
    """Starts serving the job of ``runner`` (a JobRunner) over REST; the view is a metric
    reporter of the job, and closing it ends serving the job."""
    view = JobView(runner, control, options)
    serve(view, options.address, options.port)
    return view


class JobView(MetricReporter):
    """One running job as the REST API shows it."""

    def __init__(self, runner, control: JobControl, options: RestOptions):
        self.runner = runner
        self.control = control
        self.options = options
        self.job_id = runner.job_id
        self.name = runner.settings.job_name
        self.start_time = now_ms()
        plan = runner.job.plan
        names = runner.metrics.names
        self.vertices = [
            Vertex(hashlib.md5(plan.nodes[v.id].uid.encode()).hexdigest(), v,
                   [names[n] for n in v.members])
            for v in plan_vertices(plan)]
        self.max_parallelism = max(node.max_parallelism for node in plan.nodes.values())
        self.checkpoints: Deque[dict] = collections.deque(maxlen=HISTORY)
        self.counts = {"completed": 0, "failed": 0, "savepoints": 0}
        self.last_id = 0  # of the last completed checkpoint
        self.latest: Dict[str, Optional[dict]] = {"completed": None, "savepoint": None,
                                                  "failed": None}
        self.exceptions: Deque[dict] = collections.deque(maxlen=EXCEPTIONS)
        self.triggers: Dict[str, Trigger] = {}
        self.end_time: Optional[int] = None
        self._ended: Optional[str] = None
        self._failing = False  # the last run failed (and no batch committed since)
        self._lock = threading.Lock()

    # -- fed by the driver --------------------------------------------------------

    def report(self, snapshot: dict) -> None:
        """After a committed batch: the checkpoints and savepoints completed since."""
        job = snapshot["job"]
        with self._lock:
            self._failing = False
            if job["numberOfCompletedCheckpoints"] > self.counts["completed"]:
                self.counts["completed"] = job["numberOfCompletedCheckpoints"]
                path = job["lastCheckpointExternalPath"]
                self.last_id = int(path.rstrip("/").rsplit("chk-", 1)[-1])
                self._add(self.last_id, "COMPLETED", snapshot["timestamp"],
                          job["lastCheckpointDuration"], job["lastCheckpointSize"], path)
            if job["numberOfFailedCheckpoints"] > self.counts["failed"]:
                self.counts["failed"] = job["numberOfFailedCheckpoints"]
                self._add(self.last_id + 1, "FAILED", snapshot["timestamp"], 0, 0, None)
            for trigger in self.triggers.values():
                result = self.control.result(trigger.request_id)
                if trigger.recorded or result is None or "savepoint" not in result:
                    continue
                trigger.recorded = True
                self.counts["savepoints"] += 1
                path = result["savepoint"]
                self._add(None, "COMPLETED", snapshot["timestamp"],
                          snapshot["timestamp"] - trigger.trigger_timestamp,
                          sum(sizes_by_operator(path).values()), path, savepoint=True)

    def job_failed(self, error: BaseException) -> None:
        with self._lock:
            self._failing = True
            self.exceptions.appendleft({
                "exceptionName": type(error).__name__,
                "stacktrace": "".join(traceback.format_exception(
                    type(error), error, error.__traceback__)),
                "timestamp": now_ms(), "taskName": None, "location": None,
                "concurrentExceptions": []})

    def close(self, discard: bool = False) -> None:
        """The job ended: it is served as ended for ``LINGER_SECONDS`` more."""
        runner = self.runner
        self._ended = "FINISHED" if runner.stopped else "CANCELED" if runner.cancelled \
            else "FAILED" if self._failing else "FINISHED"
        self.end_time = now_ms()
        timer = threading.Timer(LINGER_SECONDS, withdraw, (self,))
        timer.daemon = True
        timer.start()

    def _add(self, checkpoint_id: Optional[int], status: str, ack: int, duration: float,
             size: int, path: Optional[str], savepoint: bool = False) -> None:
        """Adds a checkpoint or savepoint (``checkpoint_id`` None: savepoints have no
        number here) to the history, as Flink's CheckpointStatistics."""
        subtasks = sum(v.plan.parallelism for v in self.vertices)
        completed = status == "COMPLETED"
        entry = {"className": "completed" if completed else "failed",
                 "id": checkpoint_id, "status": status, "is_savepoint": savepoint,
                 "checkpoint_type": "SAVEPOINT" if savepoint else "CHECKPOINT",
                 "trigger_timestamp": ack - int(duration), "latest_ack_timestamp": ack,
                 "end_to_end_duration": int(duration), "state_size": size,
                 "checkpointed_size": size, "num_subtasks": subtasks,
                 "num_acknowledged_subtasks": subtasks if completed else 0}
        if completed:
            entry.update(external_path=path, discarded=False)
        else:
            entry.update(failure_timestamp=ack, failure_message="the checkpoint failed "
                         "(the driver's log says why)")
        self.latest["savepoint" if savepoint else "completed" if completed else "failed"] = entry
        self.checkpoints.appendleft(entry)

    # -- read by HTTP threads -----------------------------------------------------

    def state(self) -> str:
        """Flink's job status: RUNNING, CANCELLING once cancelled, then how it ended
        (FINISHED, also when stopped with a savepoint; CANCELED; FAILED)."""
        if self._ended is not None:
            return self._ended
        return "CANCELLING" if self.runner.cancelled else "RUNNING"

    def history(self) -> Tuple[Dict[str, int], List[dict]]:
        """The counts of checkpoints (completed, failed) and savepoints since the job
        started, and the latest ones, newest first."""
        with self._lock:
            return dict(self.counts), list(self.checkpoints)

    def failures(self) -> List[dict]:
        """The failed runs of the job, newest first (Flink's exception history)."""
        with self._lock:
            return list(self.exceptions)

    def trigger(self, stop: bool, directory: Optional[str], drain: bool = False) -> str:
        """Asks for a savepoint (and a stop) through the job's control; returns its id."""
        request_id = self.control.submit("stop" if stop else "savepoint", directory, drain)
        with self._lock:
            self.triggers[request_id] = Trigger(request_id, now_ms())
        return request_id
