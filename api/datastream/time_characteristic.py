"""TimeCharacteristic, as in PyFlink 1.x's ``pyflink.datastream.time_characteristic``
(removed in PyFlink 2.x; ``env.set_stream_time_characteristic`` takes it).

Since Flink 1.12 event time is the default and each window assigner says which time it
uses (``TumblingEventTimeWindows``, ``TumblingProcessingTimeWindows``), so the
characteristic is only recorded.
"""
from enum import Enum

__all__ = ['TimeCharacteristic']


class TimeCharacteristic(Enum):
    """ProcessingTime, IngestionTime or EventTime."""
    ProcessingTime = 0
    IngestionTime = 1
    EventTime = 2
