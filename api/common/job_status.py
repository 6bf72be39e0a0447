"""JobStatus, as in ``pyflink.common.job_status``."""
from enum import Enum

__all__ = ['JobStatus']


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
