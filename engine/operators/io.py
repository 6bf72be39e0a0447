"""Source and sink operators: the two ends of a chain."""
import os
import re
import uuid
from itertools import islice

from ..batch import SinkItems
from ..errors import OperatorError
from .base import Operator

SOURCE_CHUNK = 4096  # records a source passes down the chain at a time


class SourceOperator(Operator):
    """Emits the records of this subtask's split range for the batch, read by ``reader``.

    In a timed job records leave as ``(None, value)`` (a source's timestamp assigner is
    a TimestampsOperator chained after it), or as the reader's ``(timestamp, value)``
    pairs when the source ``stamps_records``."""

    def __init__(self, reader, stamps_records: bool = False):
        super().__init__()
        self.reader = reader
        self.stamps_records = stamps_records

    def process_chunk(self, records):
        self.output(records)

    def run(self, split_batch) -> None:
        records = iter(self.reader(split_batch))
        shape = self.task.shape
        as_elements = shape.from_stamped if self.stamps_records else shape.from_values
        while True:
            chunk = list(islice(records, SOURCE_CHUNK))
            if not chunk:
                return
            self.output(as_elements(chunk))


class SinkWriterOperator(Operator):
    """Collects the records a sink receives in this batch; the driver publishes them once
    the batch is committed. ``to_item`` turns a record into what is shipped (e.g. a
    printed line)."""

    def __init__(self, to_item=None):
        super().__init__()
        self.to_item = to_item
        self.items = []

    def take_items(self) -> list:
        """The batch's items so far; starts a new list."""
        items = self.items
        self.items = []
        return items

    def driver_results(self, node_id: int, subtask: int):
        items = self.take_items()
        return (SinkItems(node_id, subtask, items),) if items else ()

    def process_chunk(self, records):
        records = self.cursor.records(records)  # sinks see values, not timestamps
        if self.to_item is None:
            self.items.extend(records)
            return
        to_item = self.to_item
        append = self.items.append
        record = None
        try:
            for record in records:
                append(to_item(record))
        except Exception as e:
            raise OperatorError.wrap(self.name, record, e) from None


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


class FileWriterOperator(SinkWriterOperator):
    """The task side of FileSink: writes this subtask's records of the batch as lines into
    in-progress part files of the batch's bucket and ships only their paths; the driver
    renames them to their finished names once the batch is committed.

    File names are a function of (run, sink, subtask, batch, part index), so a retried
    task overwrites its own files: ``<prefix>-<uuid>-<part index><suffix>``, with one uuid
    per subtask and batch (Flink's uuid per writer; each batch here is a fresh writer,
    since a batch's files are all closed when it commits). ``part_size`` None never rolls
    within a batch; otherwise a file rolls once it has grown past ``part_size`` bytes.
    ``bucket_id`` maps the batch's processing time to the bucket (sub-directory)."""

    def __init__(self, base_path: str, part_prefix: str, part_suffix: str, part_size,
                 bucket_id, to_line, charset: str, sink_token: str):
        super().__init__()
        self.base_path = base_path
        self.part_prefix = part_prefix
        self.part_suffix = part_suffix
        self.part_size = part_size
        self.bucket_id = bucket_id
        self.to_line = to_line
        self.charset = charset
        self.sink_token = sink_token
        self._file = None
        self._size = 0
        self._bucket_dir = None
        self._writer_id = None

    def process_chunk(self, records):
        records = self.cursor.records(records)
        to_line, charset, part_size = self.to_line, self.charset, self.part_size
        record = None
        try:
            for record in records:
                # Java's String.getBytes writes '?' for characters the charset lacks.
                data = to_line(record).encode(charset, "replace") + b"\n"
                if self._file is None or (part_size is not None and self._size > part_size):
                    self._roll()
                self._file.write(data)
                self._size += len(data)
        except Exception as e:
            raise OperatorError.wrap(self.name, record, e) from None

    def _roll(self) -> None:
        """Closes the open part file, if any, and opens the batch's next one."""
        task = self.task
        if self._file is not None:
            self._file.close()
        else:  # the batch's first file
            bucket = self.bucket_id(task.clock.processing_time)
            self._bucket_dir = os.path.join(self.base_path, bucket)
            os.makedirs(self._bucket_dir, exist_ok=True)
            self._writer_id = uuid.uuid5(_PART_FILE_IDS, f"{task.run_id}/"
                                         f"{self.sink_token}/{task.subtask}/{task.batch_id}")
        name = f"{self.part_prefix}-{self._writer_id}-{len(self.items)}{self.part_suffix}"
        path = in_progress_file(os.path.join(self._bucket_dir, name), task.batch_id)
        self._file = open(path, "wb")
        self._size = 0
        self.items.append(path)

    def take_items(self) -> list:
        """Closes the batch's part files; returns their in-progress paths."""
        if self._file is not None:
            self._file.close()
            self._file = None
        return super().take_items()
