"""Source and sink operators: the two ends of a chain."""
from ..errors import OperatorError
from .base import Operator


class SourceOperator(Operator):
    """Emits the records of this subtask's split range for the batch, read by ``reader``."""

    def __init__(self, reader):
        super().__init__()
        self.reader = reader

    def process(self, record):
        self.output(record)

    def run(self, split_batch) -> None:
        output = self.output
        for record in self.reader(split_batch):
            output(record)


class SinkWriterOperator(Operator):
    """Collects the records a sink receives in this batch; the driver publishes them once
    the batch is committed. ``to_item`` turns a record into what is shipped (e.g. a
    printed line)."""

    def __init__(self, to_item=None):
        super().__init__()
        self.to_item = to_item
        self.items = []
        if to_item is None:
            self.process = self.items.append

    def take_items(self) -> list:
        """The batch's items so far; starts a new list."""
        items = self.items[:]
        self.items.clear()
        return items

    def process(self, record):
        try:
            item = self.to_item(record)
        except Exception as e:
            raise OperatorError.wrap(self.name, record, e) from None
        self.items.append(item)
