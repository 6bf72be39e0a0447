"""Connectors, as in ``pyflink.datastream.connectors``."""
from .datagen import DataGeneratorSource
from .number_seq import NumberSequenceSource

__all__ = ["DataGeneratorSource", "NumberSequenceSource"]
