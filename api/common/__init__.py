"""The pure-Python equivalent of ``pyflink.common``; one import per line so others can append."""
from .configuration import Configuration
from .config_options import ConfigOption, ConfigOptions
from .time import Duration, Instant, Time
from .typeinfo import TypeInformation, Types
from .types import Row, RowKind
from .execution_config import ExecutionConfig
from .completable_future import CompletableFuture
from .input_dependency_constraint import InputDependencyConstraint
from .job_client import JobClient
from .job_status import JobStatus
from .job_execution_result import JobExecutionResult
from .job_id import JobID
from .restart_strategy import RestartStrategies, RestartStrategyConfiguration
from .serializer import TypeSerializer
from .watermark_strategy import (AssignerWithPeriodicWatermarksWrapper, TimestampAssigner,
                                 WatermarkStrategy)
from .serialization import Encoder

__all__ = ['Configuration', 'ConfigOption', 'ConfigOptions', 'Duration', 'Instant', 'Time',
           'TypeInformation', 'Types', 'Row', 'RowKind', 'ExecutionConfig', 'CompletableFuture',
           'InputDependencyConstraint', 'JobClient', 'JobStatus', 'JobExecutionResult', 'JobID',
           'RestartStrategies', 'RestartStrategyConfiguration', 'TypeSerializer',
           'AssignerWithPeriodicWatermarksWrapper', 'TimestampAssigner', 'WatermarkStrategy',
           'Encoder']
from .serialization import ByteArraySchema
from .serialization import DeserializationSchema
from .serialization import SerializationSchema
from .serialization import SimpleStringSchema
from ._formats_compat import __getattr__
__all__ += ['ByteArraySchema', 'DeserializationSchema', 'SerializationSchema', 'SimpleStringSchema']
