"""The operator of ``assign_timestamps_and_watermarks``: stamps each record with its
event time; the largest timestamp of each batch feeds the driver's watermark."""
from ..batch import MaxTimestamp
from ..errors import OperatorError
from .base import Operator


class TimestampsOperator(Operator):
    """Stamps records with ``timestamp_assigner.extract_timestamp(value, old_timestamp)``."""

    def __init__(self, timestamp_assigner):
        super().__init__()
        self.timestamp_assigner = timestamp_assigner
        self.max_timestamp = None

    def driver_results(self, node_id: int, subtask: int):
        """The largest timestamp emitted in this batch (None if none), for the watermark."""
        max_timestamp, self.max_timestamp = self.max_timestamp, None
        return (MaxTimestamp(node_id, subtask, max_timestamp),)

    def process_chunk(self, records):
        extract = self.timestamp_assigner.extract_timestamp
        cursor = self.cursor
        out = []
        append = out.append
        value = None
        try:
            for value in cursor.records(records):
                append((extract(value, cursor.timestamp), value))
        except Exception as e:
            raise OperatorError.wrap(self.name, value, e) from None
        if out:
            batch_max = max(ts for ts, _ in out)
            if self.max_timestamp is None or batch_max > self.max_timestamp:
                self.max_timestamp = batch_max
        self.output(out)
