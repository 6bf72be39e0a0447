"""The DataStream API, as in ``pyflink.datastream``."""
from .data_stream import DataStream, DataStreamSink, KeyedStream
from .execution_mode import RuntimeExecutionMode
from .functions import (AggregateFunction, FilterFunction, FlatMapFunction, Function,
                        KeyedProcessFunction, KeySelector, MapFunction, Partitioner,
                        ProcessFunction, ReduceFunction, RuntimeContext, SinkFunction,
                        TimerService)
from .stream_execution_environment import CloseableIterator, StreamExecutionEnvironment

__all__ = [
    "AggregateFunction", "CloseableIterator", "DataStream", "DataStreamSink",
    "FilterFunction", "FlatMapFunction", "Function", "KeyedProcessFunction", "KeyedStream",
    "KeySelector", "MapFunction", "Partitioner", "ProcessFunction", "ReduceFunction",
    "RuntimeContext", "RuntimeExecutionMode", "SinkFunction", "StreamExecutionEnvironment",
    "TimerService",
]
