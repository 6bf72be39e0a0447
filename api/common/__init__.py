"""The pure-Python equivalent of ``pyflink.common``; one import per line so others can append."""
from .configuration import Configuration
from .time import Duration, Instant, Time
from .typeinfo import TypeInformation, Types
from .types import Row, RowKind
from .execution_config import ExecutionConfig
from .job_client import CompletableFuture, JobClient, JobStatus
from .job_execution_result import JobExecutionResult, JobID
from .watermark_strategy import TimestampAssigner, WatermarkStrategy
from .serialization import Encoder

__all__ = ['Configuration', 'Duration', 'Instant', 'Time', 'TypeInformation', 'Types', 'Row',
           'RowKind', 'ExecutionConfig', 'CompletableFuture', 'JobClient', 'JobStatus',
           'JobExecutionResult', 'JobID', 'TimestampAssigner', 'WatermarkStrategy', 'Encoder']
from .serialization import ByteArraySchema
from .serialization import DeserializationSchema
from .serialization import SerializationSchema
from .serialization import SimpleStringSchema
from ._formats_compat import __getattr__
__all__ += ['ByteArraySchema', 'DeserializationSchema', 'SerializationSchema', 'SimpleStringSchema']
