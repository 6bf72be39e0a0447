"""The operator of ``assign_timestamps_and_watermarks``: stamps each record with its
event time; the largest timestamp of each batch feeds the watermark (the driver's tracker,
and the stages downstream: ``engine.batch.DataChunk.timestamps``)."""
from operator import itemgetter

from engine.batch import MaxTimestamp
from engine.errors import OperatorError
from engine.runtime.operators.base import Operator


class TimestampsOperator(Operator):
    """Stamps records with ``timestamp_assigner.extract_timestamp(value, old_timestamp)``."""

    forwards_input = True

    def __init__(self, timestamp_assigner):
        super().__init__()
        self.timestamp_assigner = timestamp_assigner
        self.max_timestamps = {}  # watermark input (split or subtask) -> largest timestamp

    def driver_results(self, node_id: int, subtask: int):
        """The largest timestamp emitted in this batch per watermark input: per source
        split when chained to a source, else per subtask."""
        found, self.max_timestamps = self.max_timestamps, {}
        return tuple(MaxTimestamp(node_id, input_id, timestamp)
                     for input_id, timestamp in found.items())

    def process_chunk(self, records):
        extract = self.timestamp_assigner.extract_timestamp
        out = []
        append = out.append
        value = None
        try:
            for timestamp, value in records:  # (timestamp, value) elements: a timed job
                append((extract(value, timestamp), value))
        except Exception as e:
            raise OperatorError.wrap(self.name, value, e) from None
        self.take_stamped(out)

    def take_stamped(self, out: list) -> None:
        """Passes on elements this operator's assigner has stamped already (a chained map
        stamps its results: ``MapOperator.stamp_for``)."""
        if out:
            split = self.task.clock.current_split
            input_id = self.task.subtask if split is None else split
            batch_max = max(map(itemgetter(0), out))
            if batch_max > self.max_timestamps.get(input_id, batch_max - 1):
                self.max_timestamps[input_id] = batch_max
        self.output(out)


class IngestionTimestampsOperator(TimestampsOperator):
    """Stamps each record with the processing time of the micro-batch in which it enters
    the job (``TimeCharacteristic.IngestionTime``)."""

    def __init__(self):
        super().__init__(self)

    def extract_timestamp(self, value, record_timestamp) -> int:
        return self.task.clock.processing_time
