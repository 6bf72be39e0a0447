"""Driver-side publishers of the built-in sinks (print, collect, SinkFunction, FileSink).

Tasks only gather a batch's records (print formats them there, in parallel);
publishers run in the driver once the batch is committed.
"""
import os
import sys
import time
from collections import deque

from engine.operators.io import parse_in_progress_file
from engine.runtime_context import MIN_WATERMARK, StreamingRuntimeContext
from engine.sinks import Publisher

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


class FileSinkPublisher(Publisher):
    """The committer of FileSink: renames a committed batch's in-progress part files to
    their finished names. Renaming is idempotent: a part file already finished is left
    alone, so publishing a batch twice (e.g. during recovery) changes nothing."""

    def __init__(self, base_path: str, part_prefix: str, part_suffix: str):
        self.base_path = base_path
        self.part_prefix = part_prefix
        self.part_suffix = part_suffix

    def publish(self, subtask: int, items: list) -> None:
        for path in items:
            if not _finish(path, parse_in_progress_file(path)[0]):
                raise FileNotFoundError(
                    f"FileSink: the part file {path} written by subtask {subtask} is not "
                    "visible to the driver; the sink's base path must be on a file system "
                    "that the driver and every worker share")

    def recover(self, committed_batch: int) -> None:
        """Finishes this sink's in-progress part files of batches up to
        ``committed_batch`` (committed, but the crash came before they were published)
        and deletes those of later batches (never committed; they will be written
        again)."""
        if not os.path.isdir(self.base_path):
            return
        for directory, _, names in os.walk(self.base_path):
            for name in names:
                path = os.path.join(directory, name)
                parsed = parse_in_progress_file(path)
                if parsed is None or not self._is_own(os.path.basename(parsed[0])):
                    continue
                finished, batch_id = parsed
                if batch_id <= committed_batch:
                    _finish(path, finished)
                else:
                    os.remove(path)

    def _is_own(self, finished_name: str) -> bool:
        """Whether a part file name has this sink's prefix and suffix (others may write
        to the same base path)."""
        return (finished_name.startswith(self.part_prefix + "-")
                and finished_name.endswith(self.part_suffix))


def _finish(in_progress: str, finished: str) -> bool:
    """Renames an in-progress part file to its finished name; False if neither exists."""
    if os.path.exists(finished):  # published before: keep it, drop a leftover copy
        if os.path.exists(in_progress):
            os.remove(in_progress)
        return True
    if os.path.exists(in_progress):
        os.rename(in_progress, finished)
        return True
    return False
