"""Source and sink operators: the two ends of a chain."""
import os
import re
import uuid
from itertools import islice

from ..batch import SinkCommittable, SplitPosition
from ..errors import OperatorError, RecordReadError, RecordWriteError
from ..sinks import Sink, SinkWriter, WriterContext
from .base import Operator

SOURCE_CHUNK = 4096  # records a source passes down the chain at a time


class SourceOperator(Operator):
    """Emits the records of the source split ranges this subtask reads in the batch.

    In a timed job records leave as ``(None, value)`` (a source's timestamp assigner is
    a TimestampsOperator chained after it), or as the reader's ``(timestamp, value)``
    pairs when the source ``stamps_records``. While a split's records pass down the
    chain, ``task.clock.current_split`` names it (per-split watermarks)."""

    def __init__(self, source):
        super().__init__()
        self.source = source
        self.positions = []  # (split, position) the reader reported in this batch

    def process_chunk(self, records):
        self.output(records)

    def run(self, split_range) -> None:
        shape = self.task.shape
        as_elements = shape.from_stamped if self.source.stamps_records else shape.from_values
        clock = self.task.clock
        clock.current_split = split_range.split
        try:
            records, position = self.source.read(split_range.descriptor)
            records = iter(records)
            while True:
                chunk = list(islice(records, SOURCE_CHUNK))
                if not chunk:
                    break
                self.output(as_elements(chunk))
        except RecordReadError as e:
            raise OperatorError.wrap(self.name, e.record, e.cause, what=e.where()) from None
        finally:
            clock.current_split = None
        if split_range.end is None:
            self.positions.append((split_range.split, position))

    def driver_results(self, node_id: int, subtask: int):
        positions, self.positions = self.positions, []
        return tuple(SplitPosition(node_id, split, position) for split, position in positions)


class SinkOperator(Operator):
    """The task side of a sink: a fresh ``SinkWriter`` per batch receives the batch's
    values; at the end of the batch its committable goes to the driver, which commits it
    once the batch is committed (see ``engine.sinks``)."""

    def __init__(self, sink: Sink):
        super().__init__()
        self.sink = sink
        self.writer = None

    def open(self) -> None:
        self.sink.open_subtask(self.task.runtime_context(self.name))

    def process_chunk(self, records):
        values = self.cursor.records(records)  # sinks see values, not timestamps
        if self.writer is None:
            task = self.task
            batch = task.clock.batch
            self.writer = self.sink.create_writer(WriterContext(
                batch.job_name, batch.run_id, task.uid, task.subtask, task.parallelism,
                batch.batch_id, os.path.join(batch.state_dir, "sinks", task.uid),
                task.clock.processing_time))
        try:
            self.writer.write(values)
        except RecordWriteError as e:
            raise OperatorError.wrap(self.name, e.record, e.cause) from None

    def driver_results(self, node_id: int, subtask: int):
        writer, self.writer = self.writer, None
        committable = None if writer is None else writer.prepare_commit()
        return () if committable is None else (SinkCommittable(node_id, subtask, committable),)

    def close(self) -> None:
        self.sink.close_subtask()


# A part file being written is hidden and names its batch, so the driver can tell, after a
# crash, whether that batch committed: ".<finished name>.inprogress.<batch id>".
_IN_PROGRESS = re.compile(r"^\.(?P<final>.+)\.inprogress\.(?P<batch>\d+)$")
_PART_FILE_IDS = uuid.UUID("6f1d1c1e-9a53-4c8e-9b8e-3f0c2d7a5b10")  # namespace of uuid5


def in_progress_file(finished_path: str, batch_id: int) -> str:
    """The path a part file has while its batch is not yet published."""
    directory, name = os.path.split(finished_path)
    return os.path.join(directory, f".{name}.inprogress.{batch_id}")


def parse_in_progress_file(path: str):
    """``(finished path, batch id)`` of an in-progress part file, or None for other files."""
    directory, name = os.path.split(path)
    match = _IN_PROGRESS.match(name)
    if match is None:
        return None
    return os.path.join(directory, match["final"]), int(match["batch"])


class RowFileWriter(SinkWriter):
    """The task side of FileSink's row format: writes this subtask's records of the batch
    as lines into in-progress part files of the batch's bucket; the committable is their
    paths, which ``FileCommitter`` renames to their finished names once the batch is
    committed.

    File names are a function of (run, sink, subtask, batch, part index), so a retried
    task overwrites its own files: ``<prefix>-<uuid>-<part index><suffix>``, with one uuid
    per subtask and batch (Flink's uuid per writer; each batch here is a fresh writer,
    since a batch's files are all closed when it commits). ``part_size`` None never rolls
    within a batch; otherwise a file rolls once it has grown past ``part_size`` bytes.
    ``bucket_id`` maps the batch's processing time to the bucket (sub-directory)."""

    def __init__(self, context: WriterContext, base_path: str, part_prefix: str,
                 part_suffix: str, part_size, bucket_id, to_line, charset: str):
        self.context = context
        self.part_prefix = part_prefix
        self.part_suffix = part_suffix
        self.part_size = part_size
        self.to_line = to_line
        self.charset = charset
        self.bucket_dir = os.path.join(base_path, bucket_id(context.processing_time))
        self.writer_id = uuid.uuid5(_PART_FILE_IDS, f"{context.run_id}/{context.sink_id}/"
                                    f"{context.subtask}/{context.batch_id}")
        self.paths = []
        self._file = None
        self._size = 0

    def write(self, values: list) -> None:
        to_line, charset, part_size = self.to_line, self.charset, self.part_size
        record = None
        try:
            for record in values:
                # Java's String.getBytes writes '?' for characters the charset lacks.
                data = to_line(record).encode(charset, "replace") + b"\n"
                if self._file is None or (part_size is not None and self._size > part_size):
                    self._roll()
                self._file.write(data)
                self._size += len(data)
        except Exception as e:
            raise RecordWriteError(record, e) from None

    def _roll(self) -> None:
        """Closes the open part file, if any, and opens the batch's next one."""
        if self._file is not None:
            self._file.close()
        else:
            os.makedirs(self.bucket_dir, exist_ok=True)
        name = f"{self.part_prefix}-{self.writer_id}-{len(self.paths)}{self.part_suffix}"
        path = in_progress_file(os.path.join(self.bucket_dir, name), self.context.batch_id)
        self._file = open(path, "wb")
        self._size = 0
        self.paths.append(path)

    def prepare_commit(self):
        """Closes the batch's part files; their in-progress paths are the committable."""
        if self._file is not None:
            self._file.close()
            self._file = None
        return self.paths or None
