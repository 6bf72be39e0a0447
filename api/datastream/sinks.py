"""The built-in sinks as engine ``Sink``s: print, collect and a user's SinkFunction
(FileSink's is in ``engine.connectors.files``).

Print and collect format a batch's records in the tasks and write them in the driver
once the batch is committed; a SinkFunction's ``invoke`` runs in the tasks, where the
records are.
"""
import sys
import time
from collections import deque
from typing import Callable, Optional

from engine.errors import RecordWriteError
from engine.sinks import Committer, ListWriter, Sink, SinkWriter, WriterContext

from api.common.typeinfo import PickledBytesTypeInfo


def print_formatter(type_info):
    """How ``print()`` renders a record of ``type_info``: ``str()`` for untyped (pickled)
    streams, Flink's Java-style text for declared types."""
    if type_info is None or isinstance(type_info, PickledBytesTypeInfo):
        return str
    return type_info.to_print_string


def string_formatter(type_info):
    """How FileSink's ``simple_string_encoder`` renders a record of ``type_info``: Java's
    ``toString()`` of the serialized record (for a ROW too, unlike ``print()``), and
    ``str()`` for untyped (pickled) records, where Flink writes a useless byte-array
    identity (``[B@3e840498``)."""
    if type_info is None or isinstance(type_info, PickledBytesTypeInfo):
        return str
    return type_info.to_java_string


class _DriverCommitter(Committer):
    """Commits in the driver by handing each subtask's items to ``take(subtask, items)``."""

    def __init__(self, take: Callable):
        self.take = take

    def commit(self, batch_id: int, subtask: int, committable: list) -> None:
        self.take(subtask, committable)


class PrintSink(Sink):
    """``print()``: lines formatted in the tasks with Flink's ``id:N> `` prefix, written to
    the driver's stdout when the batch is committed."""

    def __init__(self, type_info, sink_identifier: Optional[str]):
        self.format = print_formatter(type_info)
        self.sink_identifier = sink_identifier or ""

    def create_writer(self, context: WriterContext) -> SinkWriter:
        prefix = self.sink_identifier
        if context.parallelism > 1:
            prefix += (":" if prefix else "") + str(context.subtask + 1)
        prefix = prefix + "> " if prefix else ""
        to_text = self.format
        return ListWriter(lambda record: f"{prefix}{to_text(record)}\n")

    def create_committer(self) -> Committer:
        return _DriverCommitter(_write_stdout)


def _write_stdout(subtask: int, lines: list) -> None:
    sys.stdout.write("".join(lines))
    sys.stdout.flush()


class CollectSink(Sink):
    """``execute_and_collect()``: the records reach ``buffer`` in the driver as each batch
    is committed."""

    def __init__(self, to_item: Optional[Callable]):
        self.to_item = to_item
        self.buffer = deque()

    def create_writer(self, context: WriterContext) -> SinkWriter:
        return ListWriter(self.to_item)

    def create_committer(self) -> Committer:
        return _DriverCommitter(lambda subtask, items: self.buffer.extend(items))

    def __getstate__(self):  # the tasks need no buffer
        return {"to_item": self.to_item, "buffer": deque()}


class _SinkContext:
    """The ``context`` passed to ``SinkFunction.invoke``."""

    def __init__(self, clock):
        self.clock = clock

    def current_processing_time(self) -> int:
        return int(time.time() * 1000)

    def current_watermark(self) -> int:
        return self.clock.current_watermark

    def timestamp(self):
        return None


class SinkFunctionSink(Sink):
    """``add_sink(SinkFunction)``: ``invoke`` is called in the tasks for each record, as
    it arrives (at least once across a failure, as for Flink's SinkFunction); ``open``
    and ``close`` once per subtask."""

    def __init__(self, sink_function):
        self.sink_function = sink_function
        self.context = None

    def open_subtask(self, runtime_context) -> None:
        self.context = _SinkContext(runtime_context._clock)
        self.sink_function.open(runtime_context)

    def close_subtask(self) -> None:
        self.sink_function.close()

    def create_writer(self, context: WriterContext) -> SinkWriter:
        return _InvokingWriter(self.sink_function.invoke, self.context)

    def create_committer(self) -> Committer:
        return Committer()


class _InvokingWriter(SinkWriter):
    def __init__(self, invoke: Callable, context: _SinkContext):
        self.invoke = invoke
        self.context = context

    def write(self, values: list) -> None:
        invoke, context = self.invoke, self.context
        value = None
        try:
            for value in values:
                invoke(value, context)
        except Exception as e:
            raise RecordWriteError(value, e) from None
