"""Driver-side publishers of the built-in sinks (print, collect, SinkFunction).

Tasks only gather a batch's records (print formats them there, in parallel);
publishers run in the driver once the batch is committed.
"""
import sys
import time
from collections import deque

from engine.runtime_context import MIN_WATERMARK, StreamingRuntimeContext
from engine.scheduler import Publisher

from api.common.typeinfo import PickledBytesTypeInfo


def print_formatter(type_info):
    """How ``print()`` renders a record of ``type_info``: ``str()`` for untyped (pickled)
    streams, Flink's Java-style text for declared types."""
    if type_info is None or isinstance(type_info, PickledBytesTypeInfo):
        return str
    return type_info.to_print_string


class PrintPublisher(Publisher):
    """Writes lines to stdout as Flink's print sink: ``id:N> `` prefixes."""

    def __init__(self, sink_identifier, parallelism: int):
        self.sink_identifier = sink_identifier or ""
        self.parallelism = parallelism

    def _prefix(self, subtask: int) -> str:
        prefix = self.sink_identifier
        if self.parallelism > 1:
            prefix += (":" if prefix else "") + str(subtask + 1)
        return prefix + "> " if prefix else ""

    def publish(self, subtask: int, items: list) -> None:
        prefix = self._prefix(subtask)
        sys.stdout.write("".join(f"{prefix}{line}\n" for line in items))
        sys.stdout.flush()


class CollectPublisher(Publisher):
    """Buffers results for ``execute_and_collect``'s iterator."""

    def __init__(self):
        self.buffer = deque()

    def publish(self, subtask: int, items: list) -> None:
        self.buffer.extend(items)


class _SinkContext:
    """The ``context`` passed to ``SinkFunction.invoke``."""

    def current_processing_time(self) -> int:
        return int(time.time() * 1000)

    def current_watermark(self) -> int:
        return MIN_WATERMARK

    def timestamp(self):
        return None


class SinkFunctionPublisher(Publisher):
    """Calls a user SinkFunction's ``invoke`` for every committed record, in the driver."""

    def __init__(self, sink_function):
        self.sink_function = sink_function
        self.context = _SinkContext()

    def open(self) -> None:
        self.sink_function.open(StreamingRuntimeContext("Sink", 0, 1, 1, 0, {}, None))

    def publish(self, subtask: int, items: list) -> None:
        invoke = self.sink_function.invoke
        for item in items:
            invoke(item, self.context)

    def close(self) -> None:
        self.sink_function.close()
