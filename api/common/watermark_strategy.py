"""WatermarkStrategy, as in ``pyflink.common.WatermarkStrategy``.

Given to ``from_source`` or ``assign_timestamps_and_watermarks``: records are stamped
by the TimestampAssigner, and the driver turns the largest timestamps of each parallel
instance into the job's watermark.
"""
import copy
from abc import ABC, abstractmethod
from typing import Optional

from engine.time.watermarks import WatermarkSpec

from .time import Duration


class TimestampAssigner(ABC):
    """Extracts the event timestamp (epoch milliseconds) of a record."""

    @abstractmethod
    def extract_timestamp(self, value, record_timestamp: int) -> int:
        """Returns the timestamp of ``value``; ``record_timestamp`` is its previous one
        (None if it had none)."""


class WatermarkStrategy:
    """How a source's records get timestamps and how watermarks are generated."""

    def __init__(self, kind: str, max_out_of_orderness: Optional[Duration] = None):
        self._kind = kind
        self._max_out_of_orderness = max_out_of_orderness
        self._timestamp_assigner = None
        self._idleness: Optional[Duration] = None
        self._alignment = None  # (group, max drift, update interval): recorded only

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

    def with_timestamp_assigner(self, timestamp_assigner: TimestampAssigner
                                ) -> "WatermarkStrategy":
        """A copy of this strategy whose TimestampAssigner extracts each record's time."""
        if not isinstance(timestamp_assigner, TimestampAssigner):
            raise TypeError("with_timestamp_assigner() expects a TimestampAssigner, got "
                            f"{type(timestamp_assigner).__name__}")
        strategy = copy.copy(self)
        strategy._timestamp_assigner = timestamp_assigner
        return strategy

    def with_idleness(self, idle_timeout: Duration) -> "WatermarkStrategy":
        """A copy of this strategy that marks a split idle after ``idle_timeout`` of
        processing time without records, so it stops holding the watermark back."""
        strategy = copy.copy(self)
        strategy._idleness = idle_timeout
        return strategy

    def with_watermark_alignment(self, watermark_group: str, max_allowed_watermark_drift: Duration,
                                 update_interval: Optional[Duration] = None
                                 ) -> "WatermarkStrategy":
        """A copy of this strategy in the alignment group ``watermark_group``. Recorded, with
        no effect: every micro-batch reads a bounded amount from every split and the
        watermark is the minimum over them, so no source runs far ahead of the others."""
        strategy = copy.copy(self)
        strategy._alignment = (watermark_group, max_allowed_watermark_drift,
                               update_interval or Duration.of_millis(1000))
        return strategy

    def get_timestamp_assigner(self) -> Optional[TimestampAssigner]:
        return self._timestamp_assigner

    def watermark_spec(self) -> WatermarkSpec:
        """The engine's plain-data view of this strategy."""
        return WatermarkSpec(
            self._kind,
            self._max_out_of_orderness.to_milliseconds() if self._kind == "bounded" else 0,
            self._idleness.to_milliseconds() if self._idleness else None)

    def is_no_watermarks(self) -> bool:
        """True for ``no_watermarks()`` without a timestamp assigner: nothing to do."""
        return self._kind == "no_watermarks" and self._timestamp_assigner is None


class AssignerWithPeriodicWatermarksWrapper(object):
    """JVM-only: wraps a Java AssignerWithPeriodicWatermarks, which cannot run here. Use
    ``WatermarkStrategy.for_bounded_out_of_orderness(...).with_timestamp_assigner(...)``
    instead."""

    def __init__(self, j_assigner_with_periodic_watermarks):
        raise TypeError("AssignerWithPeriodicWatermarksWrapper wraps a Java assigner, which "
                        "needs a JVM: use a WatermarkStrategy with a TimestampAssigner "
                        "written in Python instead.")
