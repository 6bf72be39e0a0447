"""The DataStream API, as in ``pyflink.datastream``."""
from .checkpoint_config import CheckpointConfig, ExternalizedCheckpointCleanup
from .checkpoint_storage import (CheckpointStorage, CustomCheckpointStorage,
                                 FileSystemCheckpointStorage, JobManagerCheckpointStorage)
from .checkpointing_mode import CheckpointingMode
from .data_stream import (BroadcastConnectedStream, BroadcastStream, CloseableIterator,
                          ConnectedStreams, DataStream, DataStreamSink, KeyedStream)
from .execution_mode import RuntimeExecutionMode
from .functions import (AggregateFunction, AllWindowFunction, BroadcastProcessFunction,
                        CoFlatMapFunction, CoMapFunction, CoProcessFunction,
                        FilterFunction, FlatMapFunction, Function,
                        KeyedBroadcastProcessFunction, KeyedCoProcessFunction,
                        KeyedProcessFunction, KeySelector, MapFunction, Partitioner,
                        ProcessAllWindowFunction, ProcessFunction, ProcessWindowFunction,
                        ReduceFunction, RuntimeContext, SinkFunction, SourceFunction,
                        WindowFunction)
from .windowed_stream import AllWindowedStream, WindowedStream
from .output_tag import OutputTag
from .externalized_checkpoint_retention import ExternalizedCheckpointRetention
from .state_backend import (CustomStateBackend, EmbeddedRocksDBStateBackend, FsStateBackend,
                            HashMapStateBackend, MemoryStateBackend, PredefinedOptions,
                            RocksDBStateBackend, StateBackend)
from .stream_execution_environment import StreamExecutionEnvironment
from .sinks import WriteMode
from .split_stream import OutputSelector, SplitStream
from .time_characteristic import TimeCharacteristic
from .time_domain import TimeDomain
from .timerservice import TimerService
from .slot_sharing_group import MemorySize, SlotSharingGroup
from .window import (CountWindow, GlobalWindow, MergingWindowAssigner, TimeWindow, Trigger,
                     TriggerResult, Window, WindowAssigner)

__all__ = [
    "EmbeddedRocksDBStateBackend", "HashMapStateBackend", "StateBackend",
    "FsStateBackend", "MemoryStateBackend", "RocksDBStateBackend",
    "CheckpointConfig", "CheckpointingMode", "CheckpointStorage", "ExternalizedCheckpointCleanup",
    "ExternalizedCheckpointRetention", "FileSystemCheckpointStorage",
    "JobManagerCheckpointStorage",
    "BroadcastConnectedStream", "BroadcastStream", "ConnectedStreams",
    "BroadcastProcessFunction", "CoFlatMapFunction", "CoMapFunction", "CoProcessFunction",
    "KeyedBroadcastProcessFunction", "KeyedCoProcessFunction",
    "AggregateFunction", "AllWindowFunction", "AllWindowedStream", "ProcessAllWindowFunction",
    "ProcessWindowFunction", "WindowFunction", "WindowedStream", "CloseableIterator", "DataStream", "DataStreamSink",
    "FilterFunction", "FlatMapFunction", "Function", "KeyedProcessFunction", "KeyedStream",
    "KeySelector", "MapFunction", "OutputTag", "Partitioner", "ProcessFunction",
    "ReduceFunction", "TimeDomain",
    "RuntimeContext", "RuntimeExecutionMode", "SinkFunction", "StreamExecutionEnvironment",
    "TimerService",
    "MemorySize", "SlotSharingGroup",
    "CountWindow", "GlobalWindow", "MergingWindowAssigner", "TimeWindow", "Trigger",
    "TriggerResult", "Window", "WindowAssigner",
    "CustomCheckpointStorage", "CustomStateBackend", "PredefinedOptions", "SourceFunction",
    "OutputSelector", "SplitStream", "TimeCharacteristic", "WriteMode",
]

from .async_data_stream import AsyncDataStream  # noqa: E402
from .functions import AsyncFunction, AsyncRetryPredicate, AsyncRetryStrategy  # noqa: E402

__all__ += ["AsyncDataStream", "AsyncFunction", "AsyncRetryPredicate", "AsyncRetryStrategy"]
