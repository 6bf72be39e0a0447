"""The pure-Python equivalent of ``pyflink.common``; one import per line so others can append."""
from .configuration import Configuration
from .time import Duration, Instant, Time
from .typeinfo import TypeInformation, Types
from .types import Row, RowKind

__all__ = ['Configuration', 'Duration', 'Instant', 'Time', 'TypeInformation', 'Types', 'Row',
           'RowKind']
