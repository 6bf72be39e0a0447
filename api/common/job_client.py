"""JobClient, JobStatus and CompletableFuture, as in ``pyflink.common``."""
import concurrent.futures
from enum import Enum

from .job_execution_result import JobID


class JobStatus(Enum):
    """Status of a job."""
    INITIALIZING = 0
    CREATED = 1
    RUNNING = 2
    FAILING = 3
    FAILED = 4
    CANCELLING = 5
    CANCELED = 6
    FINISHED = 7
    RESTARTING = 8
    SUSPENDED = 9
    RECONCILING = 10

    def is_globally_terminal_state(self) -> bool:
        return self in (JobStatus.FAILED, JobStatus.CANCELED, JobStatus.FINISHED)

    def is_terminal_state(self) -> bool:
        return self.is_globally_terminal_state() or self is JobStatus.SUSPENDED


class CompletableFuture:
    """A future result: ``result()`` waits for it, ``done()`` tells whether it is there."""

    def __init__(self, future: concurrent.futures.Future):
        self._future = future

    def result(self, timeout=None):
        return self._future.result(timeout)

    def done(self) -> bool:
        return self._future.done()

    def exception(self, timeout=None):
        return self._future.exception(timeout)

    def cancel(self) -> bool:
        return self._future.cancel()

    def cancelled(self) -> bool:
        return self._future.cancelled()


def completed(value) -> CompletableFuture:
    future = concurrent.futures.Future()
    future.set_result(value)
    return CompletableFuture(future)


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

    def get_job_execution_result(self) -> CompletableFuture:
        """Completes with the JobExecutionResult, or with the job's exception."""
        return CompletableFuture(self._run.future)
