"""NumberSequenceSource, as in ``pyflink.datastream.connectors.number_seq``."""
from engine.io import sources

from api.common.typeinfo import Types

from .base import Source


class NumberSequenceSource(Source):
    """A bounded, parallel source of the numbers from ``start`` to ``end`` (inclusive), as
    LONG values: ``env.from_source(NumberSequenceSource(1, 10), strategy, "seq")``."""

    def __init__(self, start: int, end: int):
        if end < start:
            raise ValueError(f"end ({end}) must not be smaller than start ({start})")
        self._start = start
        self._end = end

    def get_produced_type(self):
        return Types.LONG()

    def engine_source(self) -> sources.NumberSequenceSource:
        return sources.NumberSequenceSource(self._start, self._end)
