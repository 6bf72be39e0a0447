"""Connectors, as in ``pyflink.datastream.connectors``."""
from .number_seq import NumberSequenceSource

__all__ = ["NumberSequenceSource"]
