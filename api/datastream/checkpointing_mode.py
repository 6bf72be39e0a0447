"""CheckpointingMode, as in ``pyflink.datastream.checkpointing_mode``."""
from enum import Enum

__all__ = ['CheckpointingMode']


class CheckpointingMode(Enum):
    """The consistency guarantee of checkpoints after a failure and restart.

    EXACTLY_ONCE: upon recovery every record is reflected exactly once in operator state
    (the default once checkpointing is enabled). AT_LEAST_ONCE: some records may be
    reflected more than once after recovery.

    Here every micro-batch commits its state changes atomically, so both modes restore the
    same state; the mode is recorded in ``execution.checkpointing.mode``.
    """

    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1
