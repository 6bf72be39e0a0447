"""Connectors, as in ``pyflink.datastream.connectors``."""
from .datagen import DataGeneratorSource
from .file_system import (BucketAssigner, DefaultRollingPolicy, FileSink,
                          OnCheckpointRollingPolicy, OutputFileConfig, RollingPolicy)
from .number_seq import NumberSequenceSource

__all__ = ["BucketAssigner", "DataGeneratorSource", "DefaultRollingPolicy", "FileSink",
           "NumberSequenceSource", "OnCheckpointRollingPolicy", "OutputFileConfig",
           "RollingPolicy"]
