"""TimeCharacteristic, as in PyFlink 1.x's ``pyflink.datastream.time_characteristic``
(removed in PyFlink 2.x; ``env.set_stream_time_characteristic`` takes it).

Event time is the default, and each window assigner says which time it uses
(``TumblingEventTimeWindows``, ``TumblingProcessingTimeWindows``); what the
characteristic still decides is described at ``set_stream_time_characteristic``.
"""
from enum import Enum

__all__ = ['TimeCharacteristic']


class TimeCharacteristic(Enum):
    """ProcessingTime, IngestionTime or EventTime."""
    ProcessingTime = 0
    IngestionTime = 1
    EventTime = 2
