"""JobClient, as in ``pyflink.common.job_client``."""
import concurrent.futures
from typing import Optional

from .completable_future import CompletableFuture, completed
from .job_id import JobID
from .job_status import JobStatus


class JobClient:
    """A handle on a job started with ``execute_async``: status, cancel, result."""

    def __init__(self, job_id: JobID, run):
        self._job_id = job_id
        self._run = run  # engine-side AsyncRun: status(), cancel(), future

    def get_job_id(self) -> JobID:
        return self._job_id

    def get_job_status(self) -> CompletableFuture:
        return completed(JobStatus[self._run.status()])

    def cancel(self) -> CompletableFuture:
        """Cancels the job before its next micro-batch; completes when it stopped."""
        self._run.cancel()
        stopped = concurrent.futures.Future()
        self._run.future.add_done_callback(lambda _: stopped.set_result(None))
        return CompletableFuture(stopped)

    def trigger_savepoint(self, savepoint_directory: str = None) -> CompletableFuture:
        """Takes a savepoint after the job's next committed micro-batch; completes with
        the savepoint's path. Without ``savepoint_directory`` the environment's default
        savepoint directory (``state.savepoints.dir``) is used."""
        return CompletableFuture(self._run.savepoint(savepoint_directory))

    def stop_with_savepoint(self, advance_to_end_of_event_time: bool,
                            savepoint_directory: str = None) -> CompletableFuture:
        """Stops the job with a savepoint taken after its next committed micro-batch;
        completes with the savepoint's path. ``advance_to_end_of_event_time`` first ends
        event time: every event-time timer and window fires, as at end of input."""
        return CompletableFuture(self._run.savepoint(
            savepoint_directory, stop=True, drain=advance_to_end_of_event_time))

    def get_accumulators(self) -> CompletableFuture:
        """Completes with the job's accumulators: always empty, as Python functions cannot
        add accumulators (nor can they in PyFlink)."""
        return completed({})

    def get_metrics(self) -> Optional[dict]:
        """The job's metrics after its latest committed batch (None before the first);
        see ``JobExecutionResult.get_metrics``. Not in PyFlink, whose clients read
        metrics from reporters or the REST API."""
        return self._run.metrics()

    def get_job_execution_result(self) -> CompletableFuture:
        """Completes with the JobExecutionResult, or with the job's exception."""
        return CompletableFuture(self._run.future)
