"""The built-in sinks as engine ``Sink``s: print, collect and a user's SinkFunction
(FileSink's is in ``engine.io.files.sink``), and the legacy ``write_as_text``,
``write_as_csv`` and ``write_to_socket`` sinks with their ``WriteMode``.

Print writes each record's line to the task's stdout, which reaches the driver's with
the rest of what the task printed; collect formats a batch's records in the tasks and
hands them over in the driver once the batch is committed; a SinkFunction's ``invoke``
runs in the tasks, where the records are.
"""
import sys
import time
from collections import deque
from enum import Enum
from typing import Callable, Optional

from engine.io.files.sink import TextFileSink
from engine.io.socket import SocketSink
from engine.errors import RecordWriteError
from engine.io.sinks import Committer, ListWriter, Sink, SinkWriter, WriterContext, convert_each

from api.common.serialization import SerializationSchema
from api.common.typeinfo import PickledBytesTypeInfo, TupleTypeInfo


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
    """``print()``: each record as a line with Flink's ``id:N> `` prefix, printed in the
    task as it arrives, as Flink's print sink does; it reaches the driver's stdout with
    whatever else the task printed (``engine.runtime.stdout_capture``). At least once:
    a batch that fails and runs again prints its lines again, as Flink does after a
    restart."""

    def __init__(self, type_info, sink_identifier: Optional[str]):
        self.format = print_formatter(type_info)
        self.sink_identifier = sink_identifier or ""

    def create_writer(self, context: WriterContext) -> SinkWriter:
        prefix = self.sink_identifier
        if context.parallelism > 1:
            prefix += (":" if prefix else "") + str(context.subtask + 1)
        prefix = prefix + "> " if prefix else ""
        to_text = self.format
        return _PrintingWriter(lambda record: f"{prefix}{to_text(record)}\n")

    def create_committer(self) -> Committer:
        return Committer()


class _PrintingWriter(SinkWriter):
    """Prints each record's line to ``sys.stdout``."""

    def __init__(self, to_line: Callable):
        self.to_line = to_line

    def write(self, values: list) -> None:
        sys.stdout.write("".join(convert_each(self.to_line, values)))


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


class WriteMode(Enum):
    """What ``write_as_text``/``write_as_csv`` do when their path exists as the job starts
    (Flink's ``FileSystem.WriteMode``): NO_OVERWRITE fails the job, OVERWRITE deletes it."""
    NO_OVERWRITE = 0
    OVERWRITE = 1


def text_file_sink(owner: str, path: str, write_mode: WriteMode, encode: Callable) -> Sink:
    """The bytes ``encode(record)`` of each record, appended to ``path`` (parallelism 1) or
    ``path/<subtask + 1>``."""
    from .connectors.file_system import _local_path
    if not isinstance(write_mode, WriteMode):
        raise TypeError(f"{owner}(): write_mode must be WriteMode.NO_OVERWRITE or "
                        f"WriteMode.OVERWRITE, got {write_mode!r}")
    if not isinstance(path, str) or not path:
        raise ValueError(f"{owner}(): path must be a non-empty string, got {path!r}")
    return TextFileSink(owner, _local_path(path, owner), encode,
                        write_mode is WriteMode.OVERWRITE)


def text_line(type_info) -> Callable:
    """How ``write_as_text`` writes a record of ``type_info``: as FileSink's
    ``simple_string_encoder`` renders it (``str()`` for untyped records), then a newline."""
    return _TextLine(string_formatter(type_info))


class _TextLine:

    def __init__(self, to_text: Callable):
        self.to_text = to_text

    def __call__(self, record) -> bytes:
        return (self.to_text(record) + "\n").encode("utf-8")


def csv_line(type_info, row_delimiter: str, field_delimiter: str) -> Callable:
    """How ``write_as_csv`` writes a tuple of ``type_info`` (Flink's CsvOutputFormat):
    each field's Java ``toString()``, no quoting, then the row delimiter."""
    if not isinstance(type_info, TupleTypeInfo):
        raise TypeError("write_as_csv() can only be used on streams of tuples typed with "
                        "Types.TUPLE([...]); map to one first, e.g. ds.map(f, output_type="
                        f"Types.TUPLE([Types.STRING(), Types.INT()])), or use write_as_text(). "
                        f"The stream's type is {type_info}")
    return _CsvLine(type_info.get_field_types(), row_delimiter, field_delimiter)


class _CsvLine:
    def __init__(self, field_types, row_delimiter: str, field_delimiter: str):
        self.field_types = field_types
        self.row_delimiter = row_delimiter
        self.field_delimiter = field_delimiter

    def __call__(self, record) -> bytes:
        text = self.field_delimiter.join(field_type.to_java_string(value)
                                         for field_type, value in zip(self.field_types, record))
        return (text + self.row_delimiter).encode("utf-8")


def socket_sink(host: str, port: int, schema: SerializationSchema) -> Sink:
    """``write_to_socket``: each record's ``schema`` bytes, sent to ``host:port``."""
    if not isinstance(schema, SerializationSchema):
        raise TypeError(f"write_to_socket() expects a SerializationSchema (e.g. "
                        f"SimpleStringSchema()), got {type(schema).__name__}")
    if not isinstance(port, int) or not 0 < port < 65536:
        raise ValueError(f"write_to_socket(): port must be between 1 and 65535, got {port!r}")
    return SocketSink(host, port, schema._serialize)
