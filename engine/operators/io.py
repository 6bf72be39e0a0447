"""Source and sink operators: the two ends of a chain."""
from itertools import islice

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
        timed, stamped = self.task.timed, self.stamps_records
        while True:
            chunk = list(islice(records, SOURCE_CHUNK))
            if not chunk:
                return
            if timed != stamped:
                chunk = [(None, v) for v in chunk] if timed else [v for _, v in chunk]
            self.output(chunk)


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
