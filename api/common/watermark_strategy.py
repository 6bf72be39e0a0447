"""WatermarkStrategy, as in ``pyflink.common.WatermarkStrategy``.

Recorded on the source; event-time processing (timestamps, watermarks, timers)
uses it from the event-time release on.
"""
from typing import Optional

from .time import Duration


class WatermarkStrategy:
    """How a source's records get timestamps and how watermarks are generated."""

    def __init__(self, kind: str, max_out_of_orderness: Optional[Duration] = None):
        self._kind = kind
        self._max_out_of_orderness = max_out_of_orderness
        self._timestamp_assigner = None
        self._idleness: Optional[Duration] = None

    @staticmethod
    def no_watermarks() -> "WatermarkStrategy":
        """No watermarks: event time never advances (processing-time jobs)."""
        return WatermarkStrategy("no_watermarks")

    @staticmethod
    def for_monotonous_timestamps() -> "WatermarkStrategy":
        """Watermarks for ascending timestamps: watermark = max timestamp - 1."""
        return WatermarkStrategy("monotonous", Duration.of_millis(0))

    @staticmethod
    def for_bounded_out_of_orderness(max_out_of_orderness: Duration) -> "WatermarkStrategy":
        """Watermark = max timestamp - max_out_of_orderness - 1."""
        return WatermarkStrategy("bounded", max_out_of_orderness)

    def with_timestamp_assigner(self, timestamp_assigner) -> "WatermarkStrategy":
        """Sets the TimestampAssigner that extracts each record's event time."""
        self._timestamp_assigner = timestamp_assigner
        return self

    def with_idleness(self, idle_timeout: Duration) -> "WatermarkStrategy":
        """Marks a source idle after ``idle_timeout`` without records."""
        self._idleness = idle_timeout
        return self
