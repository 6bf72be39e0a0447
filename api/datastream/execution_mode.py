"""RuntimeExecutionMode, as in ``pyflink.datastream.RuntimeExecutionMode``."""
from enum import Enum


class RuntimeExecutionMode(Enum):
    """How a DataStream program runs.

    STREAMING: results are emitted continuously (a keyed reduce emits one result per
    record). BATCH: bounded input only; keyed aggregations emit one final result per
    key at the end of input. AUTOMATIC: BATCH if every source is bounded.
    """
    STREAMING = 0
    BATCH = 1
    AUTOMATIC = 2
