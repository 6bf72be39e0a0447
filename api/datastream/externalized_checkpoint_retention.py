"""ExternalizedCheckpointRetention, as in
``pyflink.datastream.externalized_checkpoint_retention`` (PyFlink 2.x)."""
from enum import Enum

__all__ = ['ExternalizedCheckpointRetention']


class ExternalizedCheckpointRetention(Enum):
    """What happens to a job's checkpoints when the job is cancelled.

    DELETE_ON_CANCELLATION: deleted on cancellation (kept if the job fails).
    RETAIN_ON_CANCELLATION: kept; delete them yourself.
    NO_EXTERNALIZED_CHECKPOINTS: externalized checkpoints are disabled (the default).
    """

    DELETE_ON_CANCELLATION = 0
    RETAIN_ON_CANCELLATION = 1
    NO_EXTERNALIZED_CHECKPOINTS = 2
