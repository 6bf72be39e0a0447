"""DataStream, KeyedStream and DataStreamSink, as in ``pyflink.datastream``.

Calls only record transformations (nothing runs until ``execute``); they check
what can be checked at build time: function kinds, keyed-only operations,
parallelism settings.
"""
import sys
from enum import Enum
from functools import partial
from typing import Callable, List, Optional, Union

from engine import graph
from engine.graph import Partitioning, Transformation
from engine.runtime.operators.io import SinkOperator
from engine.runtime.operators.keyed import ReduceOperator
from engine.runtime.operators.timestamps import IngestionTimestampsOperator, TimestampsOperator
from engine.runtime.operators.two_input import BroadcastProcessOperator, CoProcessOperator
from engine.runtime.operators.udf import FilterOperator, FlatMapOperator, MapOperator, ProcessOperator
from engine.runtime.state_descriptors import declares_pickled

from api.common.typeinfo import PickledBytesTypeInfo, TupleTypeInfo, Types, TypeInformation
from api.common.watermark_strategy import TimestampAssigner, WatermarkStrategy
from api.unavailable import check_available
from . import functions as fn
from .aggregations import aggregation
from .output_tag import OutputTag
from .state import MapStateDescriptor
from .sinks import (CollectSink, PrintSink, SinkFunctionSink, WriteMode, csv_line, socket_sink,
                    text_file_sink, text_line)
from .windowed_stream import AllWindowedStream, WindowedStream

COLLECT_SINK = "Collect Stream Sink"
KEYED_PARTITIONING = "Cannot override partitioning for KeyedStream."
NOT_KEYED = ("{}() can only be used on a KeyedStream: call key_by(...) on the DataStream "
             "first, e.g. ds.key_by(lambda x: x[0]).{}(...)")


class DataStream:
    """A stream of elements of the same type; transformations create new DataStreams."""

    def __init__(self, env, transformation: Transformation):
        self._env = env
        self._transformation = transformation
        if transformation.physical and transformation.parallelism is None:
            # As in PyFlink, an operator takes the environment's parallelism of the moment
            # it is created: a later env.set_parallelism() leaves it as it is.
            transformation.parallelism = env.get_parallelism()

    # --- properties of the operator that produces this stream -----------------
    def get_name(self) -> str:
        return self._transformation.name

    def name(self, name: str) -> "DataStream":
        """Sets the name of the operator (shown in the execution plan and in errors)."""
        self._physical("name").name = name
        return self

    def uid(self, uid: str) -> "DataStream":
        """Sets a stable id for the operator; its keyed state is stored under it."""
        self._physical("uid").uid = uid
        return self

    def set_uid_hash(self, uid_hash: str) -> "DataStream":
        self._physical("set_uid_hash").uid_hash = uid_hash
        return self

    def set_description(self, description: str) -> "DataStream":
        self._physical("set_description").description = description
        return self

    def set_parallelism(self, parallelism: int) -> "DataStream":
        """Sets the parallelism of this operator."""
        t = self._physical("set_parallelism")
        if parallelism < 1:
            raise ValueError("The parallelism of an operator must be at least 1.")
        if t.kind == "source" and getattr(t.source, "parallelism", None) == 1 and parallelism != 1:
            raise ValueError("The parallelism of a non-parallel source (from_collection) "
                             "must be 1.")
        t.parallelism = parallelism
        return self

    def set_max_parallelism(self, max_parallelism: int) -> "DataStream":
        """Sets the maximum parallelism (number of key groups) of this operator."""
        if not 0 < max_parallelism <= 32768:
            raise ValueError("The maximum parallelism must be between 1 and 32768.")
        self._physical("set_max_parallelism").max_parallelism = max_parallelism
        return self

    def force_non_parallel(self) -> "DataStream":
        t = self._physical("force_non_parallel")
        t.parallelism = 1
        t.max_parallelism = 1
        return self

    def get_type(self) -> TypeInformation:
        """The type information of this stream's elements."""
        return self._transformation.output_type

    def get_execution_environment(self):
        return self._env

    def get_execution_config(self):
        """The ExecutionConfig of this stream's environment."""
        return self._env.get_config()

    def set_buffer_timeout(self, timeout_millis: int) -> "DataStream":
        """Sets how long this operator's output may wait before it is sent on: records
        cross operators once per micro-batch, so an unbounded job starts its micro-batches
        at most this many ms apart (the smallest such timeout of the job, or of the
        environment's ``set_buffer_timeout``). -1 means the environment's timeout; 0 (no
        buffering at all) cannot apply and raises ValueError."""
        t = self._physical("set_buffer_timeout")
        t.buffer_timeout = None if timeout_millis == -1 else checked_buffer_timeout(
            timeout_millis, "DataStream.set_buffer_timeout")
        return self

    def start_new_chain(self) -> "DataStream":
        """Starts a new chain (stage) at this operator."""
        self._physical("start_new_chain").chaining = graph.HEAD
        return self

    def disable_chaining(self) -> "DataStream":
        """Runs this operator in a chain (stage) of its own."""
        self._physical("disable_chaining").chaining = graph.NEVER
        return self

    def slot_sharing_group(self, slot_sharing_group) -> "DataStream":
        """Operators in different slot sharing groups are not chained together."""
        name = getattr(slot_sharing_group, "get_name", lambda: slot_sharing_group)()
        self._physical("slot_sharing_group").slot_sharing_group = name
        return self

    def _physical(self, method: str) -> Transformation:
        t = self._transformation
        if not t.physical:
            raise ValueError(f"{method}() cannot be set on a partitioning or union: "
                             "set it on the operator that follows.")
        return t

    # --- transformations ------------------------------------------------------
    def _operator(self, name: str, factory: Callable, output_type=None,
                  keyed=False, python=True) -> "DataStream":
        t = Transformation("operator", name, [self._transformation], factory,
                           output_type=output_type or Types.PICKLED_BYTE_ARRAY(), keyed=keyed)
        t.python_operator = python and not _defined_by_table_planner()
        self._env._add_transformation(t)
        return DataStream(self._env, t)

    def map(self, func: Union[Callable, fn.MapFunction],
            output_type: TypeInformation = None) -> "DataStream":
        """Applies ``func`` to each element: ``ds.map(lambda x: x * 2)``."""
        return self._operator("Map", partial(MapOperator, fn.wrap_map(func)), output_type)

    def flat_map(self, func: Union[Callable, fn.FlatMapFunction],
                 output_type: TypeInformation = None) -> "DataStream":
        """Applies ``func`` to each element and emits every element of the iterable it returns
        (or yields)."""
        return self._operator("FlatMap", partial(FlatMapOperator, fn.wrap_flat_map(func)),
                              output_type)

    def filter(self, func: Union[Callable, fn.FilterFunction]) -> "DataStream":
        """Keeps the elements for which ``func`` returns true."""
        return self._operator("Filter", partial(FilterOperator, fn.wrap_filter(func)),
                              self.get_type())

    def process(self, func: fn.ProcessFunction,
                output_type: TypeInformation = None) -> "DataStream":
        """Applies a ProcessFunction: ``process_element(value, ctx)`` yields outputs."""
        if isinstance(func, fn.KeyedProcessFunction):
            raise TypeError("process() with a KeyedProcessFunction needs a KeyedStream: call "
                            "key_by(...) first, e.g. ds.key_by(lambda x: x[0]).process(...)")
        return self._operator("Process", partial(ProcessOperator, fn.wrap_process(func)),
                              output_type)

    def project(self, *field_indexes: int) -> "DataStream":
        """Keeps the given fields of a tuple stream (typed with ``Types.TUPLE``)."""
        input_type = self.get_type()
        if not isinstance(input_type, TupleTypeInfo):
            raise TypeError("project() needs a stream of tuples typed with Types.TUPLE([...]), "
                            f"got {input_type}")
        types = input_type.get_field_types()
        for i in field_indexes:
            if not 0 <= i < len(types):
                raise IndexError(f"project(): field {i} does not exist in {input_type}")
        indexes = tuple(field_indexes)
        # (Flink's projection runs in Java: the records it reads and emits are converted)
        return self._operator("Map", partial(MapOperator, fn.wrap_map(_Projection(indexes))),
                              Types.TUPLE([types[i] for i in indexes]), python=False)

    def assign_timestamps_and_watermarks(self, watermark_strategy: WatermarkStrategy
                                         ) -> "DataStream":
        """Stamps each record with its event time (the strategy's TimestampAssigner, or the
        record's own timestamp) and generates watermarks per parallel instance."""
        return _with_timestamps(self, watermark_strategy)

    def get_side_output(self, output_tag: OutputTag) -> "DataStream":
        """The records this operator's process function emitted to ``output_tag``."""
        if not isinstance(output_tag, OutputTag):
            raise TypeError(f"get_side_output() expects an OutputTag, got "
                            f"{type(output_tag).__name__}")
        t = Transformation("side_output", f"SideOutput: {output_tag.tag_id}",
                           [self._physical("get_side_output")], output_type=output_tag.type_info)
        t.side_tag = output_tag.tag_id
        return DataStream(self._env, t)

    def split(self, output_selector) -> "SplitStream":
        """Splits the stream by the output names ``output_selector.select(value)`` gives
        each element; ``select(*names)`` on the result picks the elements of some names
        (see ``api.datastream.split_stream``)."""
        from .split_stream import split
        return split(self, output_selector)

    def iterate(self, max_wait_time_ms: int = 0) -> "IterativeStream":
        """The head of an iteration: this stream merged with what
        ``close_with(feedback_stream)`` feeds back, one micro-batch later (see
        ``api.datastream.iterations``)."""
        from .iterations import IterativeStream
        return IterativeStream(self, max_wait_time_ms)

    def window_all(self, window_assigner) -> AllWindowedStream:
        """Cuts the whole (non-keyed) stream into windows; one subtask evaluates them all."""
        return AllWindowedStream(self, _checked_assigner(window_assigner))

    def key_by(self, key_selector: Union[Callable, fn.KeySelector],
               key_type: TypeInformation = None) -> "KeyedStream":
        """Partitions the stream by the key ``key_selector`` returns; keyed state and keyed
        aggregations follow."""
        selector = fn.wrap_key_selector(key_selector)
        t = Transformation("partition", "Partition", [self._transformation],
                           output_type=self.get_type(),
                           partitioning=Partitioning(graph.HASH, key_selector=selector,
                                                     key_type=_placement(key_type)))
        self._env._add_transformation(t)  # its key selector runs, read or not (see below)
        return KeyedStream(self._env, t, selector, key_type)

    def connect(self, ds: Union["DataStream", "BroadcastStream"]
                ) -> Union["ConnectedStreams", "BroadcastConnectedStream"]:
        """Connects this stream with ``ds`` for a two-input operator:
        ``ds1.connect(ds2).map(MyCoMapFunction())``; with a BroadcastStream
        (``ds.broadcast(descriptor)``), for a (Keyed)BroadcastProcessFunction."""
        if isinstance(ds, BroadcastStream):
            return BroadcastConnectedStream(self, ds, ds.broadcast_state_descriptors)
        if not isinstance(ds, DataStream):
            raise TypeError(f"connect() expects a DataStream or a BroadcastStream, got "
                            f"{type(ds).__name__}")
        return ConnectedStreams(self, ds)

    def union(self, *streams: "DataStream") -> "DataStream":
        """Merges this stream with ``streams`` into one."""
        inputs = [self._transformation] + [s._transformation for s in streams]
        t = Transformation("union", "Union", inputs, output_type=self.get_type())
        return DataStream(self._env, t)

    def cache(self) -> "CachedDataStream":
        """Marks this (bounded) stream's result for reuse by later jobs of the environment.

        Accepted, but nothing is kept between jobs here: each job that uses the returned
        stream computes it again, as Flink does in STREAMING mode. Results differ from
        Flink's BATCH mode only where the stream is not deterministic (random values,
        processing time)."""
        return CachedDataStream(self._env, self._transformation)

    # --- partitioning ---------------------------------------------------------
    def _partition(self, strategy: str, **kwargs) -> "DataStream":
        t = Transformation("partition", "Partition", [self._transformation],
                           output_type=self.get_type(),
                           partitioning=Partitioning(strategy, **kwargs))
        return DataStream(self._env, t)

    def shuffle(self) -> "DataStream":
        """Sends each element to a uniformly random downstream subtask."""
        return self._partition(graph.SHUFFLE)

    def rebalance(self) -> "DataStream":
        """Distributes elements round-robin over all downstream subtasks."""
        return self._partition(graph.REBALANCE)

    def rescale(self) -> "DataStream":
        """Distributes elements round-robin over a local subset of downstream subtasks."""
        return self._partition(graph.RESCALE)

    def forward(self) -> "DataStream":
        """Sends elements to the downstream subtask of the same index (equal parallelism)."""
        return self._partition(graph.FORWARD)

    def broadcast(self, broadcast_state_descriptor: Optional[MapStateDescriptor] = None,
                  *other_broadcast_state_descriptors: MapStateDescriptor
                  ) -> Union["DataStream", "BroadcastStream"]:
        """Sends every element to every downstream subtask. Given MapStateDescriptors, returns
        a BroadcastStream whose broadcast states they declare, to ``connect`` with."""
        if broadcast_state_descriptor is None:
            return self._partition(graph.BROADCAST)
        descriptors = [broadcast_state_descriptor, *other_broadcast_state_descriptors]
        for descriptor in descriptors:
            if not isinstance(descriptor, MapStateDescriptor):
                raise TypeError(f"broadcast() takes MapStateDescriptors, got "
                                f"{type(descriptor).__name__}")
        return BroadcastStream(self, descriptors)

    def partition_custom(self, partitioner: Union[Callable, fn.Partitioner],
                         key_selector: Union[Callable, fn.KeySelector]) -> "DataStream":
        """Sends each element to ``partitioner.partition(key_selector(element), n)``."""
        return self._partition(graph.CUSTOM, key_selector=fn.wrap_key_selector(key_selector),
                               partitioner=fn.wrap_partitioner(partitioner))

    # --- keyed-only operations give a clear build-time error here ---------------
    def reduce(self, func):
        raise TypeError(NOT_KEYED.format("reduce", "reduce"))

    def sum(self, position_to_sum=0):
        raise TypeError(NOT_KEYED.format("sum", "sum"))

    def min(self, position_to_min=0):
        raise TypeError(NOT_KEYED.format("min", "min"))

    def max(self, position_to_max=0):
        raise TypeError(NOT_KEYED.format("max", "max"))

    def min_by(self, position_to_min_by=0):
        raise TypeError(NOT_KEYED.format("min_by", "min_by"))

    def max_by(self, position_to_max_by=0):
        raise TypeError(NOT_KEYED.format("max_by", "max_by"))

    # --- sinks ----------------------------------------------------------------
    def _sink(self, name: str, sink) -> "DataStreamSink":
        t = Transformation("sink", name, [self._transformation], partial(SinkOperator, sink),
                           parallelism=self._env.get_parallelism(), pact="Data Sink", sink=sink)
        self._env._add_transformation(t)
        return DataStreamSink(t)

    def print(self, sink_identifier: Optional[str] = None) -> "DataStreamSink":
        """Prints each element to standard output, prefixed by ``N> `` (the subtask, when the
        sink's parallelism is above 1) and/or the ``sink_identifier``."""
        return self._sink("Print to Std. Out", PrintSink(self.get_type(), sink_identifier))

    def add_sink(self, sink_func: fn.SinkFunction) -> "DataStreamSink":
        """Adds a SinkFunction: its ``invoke`` is called in the parallel tasks for each
        record; a connector's sink function (e.g. ``FlinkKafkaProducer``, ``JdbcSink``)
        writes exactly as its connector does."""
        check_available(sink_func)  # sink_to also comes here for connector sinks
        if hasattr(sink_func, "engine_sink"):
            return self._sink("Sink", sink_func.engine_sink(self.get_type()))
        return self._sink("Sink", SinkFunctionSink(fn.wrap_sink(sink_func)))

    def sink_to(self, sink) -> "DataStreamSink":
        """Adds a Sink: a connector sink such as ``FileSink`` or ``KafkaSink`` (written in
        the tasks, committed when each batch commits), or any SinkFunction."""
        check_available(sink)
        if hasattr(sink, "engine_sink"):
            return self._sink("Writer", sink.engine_sink(self.get_type()))
        return self.add_sink(sink)

    def write_as_text(self, path: str, write_mode: WriteMode = WriteMode.NO_OVERWRITE
                      ) -> "DataStreamSink":
        """Writes each element as a line of text (its ``str()``; typed elements as Java's
        ``toString()``) to the file ``path`` (a local path or ``file://`` URI), or, at sink
        parallelism above 1, to the files ``path/1``, ``path/2``, ... A batch's lines are
        appended once the batch is committed. If ``path`` exists when the job starts,
        NO_OVERWRITE fails the job and OVERWRITE deletes it first."""
        return self._sink("Unnamed", text_file_sink("write_as_text", path, write_mode,
                                                    text_line(self.get_type())))

    def write_as_csv(self, path: str, write_mode: WriteMode = WriteMode.NO_OVERWRITE,
                     row_delimiter: str = "\n", field_delimiter: str = ",") -> "DataStreamSink":
        """Writes a stream of tuples (typed ``Types.TUPLE``) as CSV lines, fields joined by
        ``field_delimiter`` (no quoting), to files as
        ``write_as_text`` does."""
        return self._sink("Unnamed", text_file_sink(
            "write_as_csv", path, write_mode,
            csv_line(self.get_type(), row_delimiter, field_delimiter)))

    def write_to_socket(self, host: str, port: int, schema) -> "DataStreamSink":
        """Writes each element's ``schema`` bytes (a SerializationSchema, e.g.
        ``SimpleStringSchema()``) to the socket ``host:port``, nothing added between them,
        as elements arrive (at least once across a failure); each parallel subtask
        connects anew for each micro-batch (``engine.io.socket``)."""
        return self._sink("Unnamed", socket_sink(host, port, schema))

    def execute_and_collect(self, job_execution_name: str = None, limit: int = None):
        """Runs the job and returns its results: a CloseableIterator, or a list of at most
        ``limit`` elements when ``limit`` is given."""
        iterator = self._collect(job_execution_name)
        if limit is None:
            return iterator
        with iterator:
            return [x for _, x in zip(range(limit), iterator)]

    def _collect(self, job_name: Optional[str], alone: bool = False) -> "CloseableIterator":
        """Runs the job of the environment's transformations and this stream's results
        (``alone``: of this stream only, leaving the others to the environment's next job);
        returns an iterator of the results."""
        stream_type = self.get_type()
        sink = CollectSink(None if _is_pickled(stream_type) else stream_type.collected_value)
        t = Transformation("sink", COLLECT_SINK, [self._transformation],
                           partial(SinkOperator, sink), pact="Data Sink", sink=sink)
        return self._env._execute_collect(t, sink.buffer, job_name, alone)


def with_key_selector_readers(defined: List[Transformation]) -> List[Transformation]:
    """``defined`` (a job's operators, sinks and KeyedStreams) with each KeyedStream that
    nothing reads replaced by an operator reading it, which drops its records. PyFlink
    computes a ``key_by``'s keys in an operator of its own
    (``_stream_key_by_map_operator``), which runs with nothing after it; here keys are
    computed where the records are routed to their key's subtask, which needs a
    reader."""
    read = {i.id for t in graph.reachable(defined) for i in t.inputs}
    return [t if t.kind != "partition" or t.id in read else
            Transformation("operator", "_stream_key_by_map_operator", [t],
                           partial(FilterOperator, fn.wrap_filter(_no_record)),
                           output_type=t.output_type)
            for t in defined]


def _no_record(value) -> bool:
    return False


class _RecordTimestampAssigner(TimestampAssigner):
    """Keeps the timestamp a record already has (a strategy without an assigner)."""

    def extract_timestamp(self, value, record_timestamp):
        return record_timestamp


def _with_timestamps(stream: DataStream, strategy: WatermarkStrategy) -> DataStream:
    """The "Timestamps/Watermarks" operator after ``stream``; the driver makes watermarks
    from the largest timestamps it sees in each parallel instance."""
    if not isinstance(strategy, WatermarkStrategy):
        raise TypeError(f"expected a WatermarkStrategy, got {type(strategy).__name__}")
    assigner = strategy.get_timestamp_assigner() or _RecordTimestampAssigner()
    return _stamped(stream, partial(TimestampsOperator, assigner), strategy)


def ingestion_timestamps(stream: DataStream) -> DataStream:
    """The operator after a source under ``TimeCharacteristic.IngestionTime``: each record's
    timestamp is the processing time it enters at, and watermarks follow (monotonously)."""
    return _stamped(stream, IngestionTimestampsOperator,
                    WatermarkStrategy.for_monotonous_timestamps())


def _stamped(stream: DataStream, factory: Callable, strategy: WatermarkStrategy) -> DataStream:
    timestamped = stream._operator("Timestamps/Watermarks", factory, stream.get_type(),
                                   python=False)
    timestamped._transformation.watermark_spec = strategy.watermark_spec()
    timestamped._transformation.uses_time = True
    return timestamped


def checked_buffer_timeout(timeout_millis: int, owner: str) -> int:
    """``timeout_millis`` if positive; 0 (flush every record) and -1 (flush full buffers
    only) cannot apply to micro-batches."""
    if isinstance(timeout_millis, bool) or not isinstance(timeout_millis, int):
        raise TypeError(f"{owner}(): the timeout is an int of milliseconds, got "
                        f"{timeout_millis!r}")
    if timeout_millis == 0:
        raise ValueError(f"{owner}(0) cannot apply: records cross operators once per "
                         "micro-batch, not one by one. For the lowest latency use a small "
                         "positive timeout (e.g. 1 ms): micro-batches then start back to back.")
    if timeout_millis < 0:
        raise ValueError(f"{owner}({timeout_millis}) cannot apply: there are no output "
                         "buffers that fill up here; records cross operators once per "
                         "micro-batch. For throughput, set a long timeout and a large "
                         "'execution.micro-batch.size'.")
    return timeout_millis


def _checked_assigner(window_assigner):
    if not hasattr(window_assigner, "assign_windows"):
        raise TypeError(f"expected a WindowAssigner, got {type(window_assigner).__name__}")
    return window_assigner


def _placement(key_type: Optional[TypeInformation]):
    """The ``core.keygroups.KeyType`` that places keys of ``key_type`` (None: untyped)."""
    return None if key_type is None else key_type._key_type()


def _is_pickled(type_info) -> bool:
    return type_info is None or isinstance(type_info, PickledBytesTypeInfo)


class _Projection:
    def __init__(self, indexes):
        self.indexes = indexes

    def __call__(self, value):
        return tuple(value[i] for i in self.indexes)


class KeyedStream(DataStream):
    """A DataStream partitioned by key: keyed state, keyed process functions and rolling
    aggregations (reduce, sum, min, max, min_by, max_by)."""

    def __init__(self, env, transformation: Transformation, key_selector, key_type=None):
        super().__init__(env, transformation)
        self._key_selector = key_selector
        self._key_type = key_type

    @property
    def _origin_stream(self) -> DataStream:
        """The stream this KeyedStream partitions."""
        return DataStream(self._env, self._transformation.inputs[0])

    def _keyed(self, name: str, factory: Callable, output_type=None) -> DataStream:
        stream = self._operator(name, factory, output_type, keyed=True)
        stream._transformation.pickled_keys = declares_pickled(self._key_type)
        return stream

    def map(self, func, output_type: TypeInformation = None) -> DataStream:
        """Map with keyed state available through the runtime context."""
        return self._keyed("Map", partial(MapOperator, fn.wrap_map(func)), output_type)

    def flat_map(self, func, output_type: TypeInformation = None) -> DataStream:
        """FlatMap with keyed state available through the runtime context."""
        return self._keyed("FlatMap", partial(FlatMapOperator, fn.wrap_flat_map(func)),
                           output_type)

    def filter(self, func) -> DataStream:
        """Filter with keyed state available through the runtime context."""
        return self._keyed("Filter", partial(FilterOperator, fn.wrap_filter(func)),
                           self.get_type())

    def process(self, func, output_type: TypeInformation = None) -> DataStream:
        """Applies a KeyedProcessFunction to each element, with keyed state."""
        stream = self._keyed("KeyedProcess",
                             partial(ProcessOperator, fn.wrap_keyed_process(func)), output_type)
        stream._transformation.uses_time = True  # timers and timestamps
        return stream

    def reduce(self, func: Union[Callable, fn.ReduceFunction]) -> DataStream:
        """Rolling reduce per key: ``reduce(accumulated, new)``. STREAMING emits every new
        value; BATCH emits each key's final value."""
        func = fn.wrap_reduce(func)
        return self._keyed("Reduce", partial(ReduceOperator, func, uses_state=fn.opens(func),
                                             pickled=declares_pickled(self.get_type())),
                           self.get_type())

    def _aggregate(self, kind: str, field) -> DataStream:
        return self._keyed("Reduce", partial(ReduceOperator, aggregation(
            kind, field, self.get_type()), uses_state=False,
            pickled=declares_pickled(self.get_type())), self.get_type())

    def sum(self, position_to_sum: Union[int, str] = 0) -> DataStream:
        """Rolling sum of the given field (position or name) per key."""
        return self._aggregate("sum", position_to_sum)

    def min(self, position_to_min: Union[int, str] = 0) -> DataStream:
        """Rolling minimum of the given field per key (other fields from the first record)."""
        return self._aggregate("min", position_to_min)

    def max(self, position_to_max: Union[int, str] = 0) -> DataStream:
        """Rolling maximum of the given field per key (other fields from the first record)."""
        return self._aggregate("max", position_to_max)

    def min_by(self, position_to_min_by: Union[int, str] = 0) -> DataStream:
        """Rolling element with the minimum value of the given field per key."""
        return self._aggregate("min_by", position_to_min_by)

    def max_by(self, position_to_max_by: Union[int, str] = 0) -> DataStream:
        """Rolling element with the maximum value of the given field per key."""
        return self._aggregate("max_by", position_to_max_by)

    def window(self, window_assigner) -> WindowedStream:
        """Cuts each key's elements into windows, e.g.
        ``ks.window(TumblingEventTimeWindows.of(Time.seconds(5))).reduce(f)``."""
        return WindowedStream(self, _checked_assigner(window_assigner))

    def time_window(self, size, slide=None) -> WindowedStream:
        """Tumbling (or, with ``slide``, sliding) windows of ``size`` (a ``Time``), in event
        time, or in processing time if the environment's stream time characteristic is
        ProcessingTime when this is called (as in Flink 1.x)."""
        from .time_characteristic import TimeCharacteristic
        from .window import (SlidingEventTimeWindows, SlidingProcessingTimeWindows,
                             TumblingEventTimeWindows, TumblingProcessingTimeWindows)
        processing = self._env.get_stream_time_characteristic() is \
            TimeCharacteristic.ProcessingTime
        if slide is None:
            assigner = (TumblingProcessingTimeWindows if processing
                        else TumblingEventTimeWindows).of(size)
        else:
            assigner = (SlidingProcessingTimeWindows if processing
                        else SlidingEventTimeWindows).of(size, slide)
        return WindowedStream(self, assigner)

    def count_window(self, size: int, slide: int = 0) -> WindowedStream:
        """Windows of ``size`` elements per key, sliding by ``slide`` if given."""
        from .window import CountSlidingWindowAssigner, CountTumblingWindowAssigner
        assigner = CountTumblingWindowAssigner.of(size) if slide == 0 \
            else CountSlidingWindowAssigner.of(size, slide)
        return WindowedStream(self, assigner)

    class AccumulateType(Enum):
        """The rolling aggregations of ``sum``, ``min``, ``max``, ``min_by``, ``max_by``."""
        MIN = 1
        MAX = 2
        MIN_BY = 3
        MAX_BY = 4
        SUM = 5

    # A KeyedStream is defined by its partitioning: these cannot change it.
    def shuffle(self):
        raise ValueError(KEYED_PARTITIONING)

    def rebalance(self):
        raise ValueError(KEYED_PARTITIONING)

    def rescale(self):
        raise ValueError(KEYED_PARTITIONING)

    def forward(self):
        raise ValueError(KEYED_PARTITIONING)

    def broadcast(self, *args, **kwargs):
        raise ValueError(KEYED_PARTITIONING)

    def partition_custom(self, partitioner, key_selector):
        raise ValueError(KEYED_PARTITIONING)

    def cache(self):
        raise ValueError("Cache for KeyedStream is not supported.")

    def set_parallelism(self, parallelism: int):
        raise ValueError("Set parallelism for KeyedStream is not supported.")

    def name(self, name: str):
        raise ValueError("Set name for KeyedStream is not supported.")

    def uid(self, uid: str):
        raise ValueError("Set uid for KeyedStream is not supported.")


class CachedDataStream(DataStream):
    """The stream ``DataStream.cache()`` returns; its operator's properties are fixed.
    See ``cache`` for what caching does here."""

    def invalidate(self) -> None:
        """Releases the cached result: there is none to release here."""

    def _unsupported(self, what: str):
        raise ValueError(f"{what} for CachedDataStream is not supported.")

    def set_parallelism(self, parallelism: int):
        self._unsupported("Set parallelism")

    def name(self, name: str):
        self._unsupported("Set name")

    def get_name(self) -> str:
        raise ValueError("Get name of CachedDataStream is not supported.")

    def uid(self, uid: str):
        self._unsupported("Set uid")

    def set_uid_hash(self, uid_hash: str):
        self._unsupported("Set uid hash")

    def set_max_parallelism(self, max_parallelism: int):
        self._unsupported("Set max parallelism")

    def force_non_parallel(self):
        self._unsupported("Set force non-parallel")

    def set_buffer_timeout(self, timeout_millis: int):
        self._unsupported("Set buffer timeout")

    def start_new_chain(self):
        self._unsupported("Start new chain")

    def disable_chaining(self):
        self._unsupported("Disable chaining")

    def slot_sharing_group(self, slot_sharing_group):
        self._unsupported("Setting slot sharing group")


class DataStreamSink:
    """The end of a stream; sets the sink's name, uid and parallelism."""

    def __init__(self, transformation: Transformation):
        self._transformation = transformation

    def name(self, name: str) -> "DataStreamSink":
        self._transformation.name = name
        return self

    def uid(self, uid: str) -> "DataStreamSink":
        self._transformation.uid = uid
        return self

    def set_uid_hash(self, uid_hash: str) -> "DataStreamSink":
        self._transformation.uid_hash = uid_hash
        return self

    def set_description(self, description: str) -> "DataStreamSink":
        self._transformation.description = description
        return self

    def set_parallelism(self, parallelism: int) -> "DataStreamSink":
        if parallelism < 1:
            raise ValueError("The parallelism of an operator must be at least 1.")
        self._transformation.parallelism = parallelism
        return self

    def disable_chaining(self) -> "DataStreamSink":
        self._transformation.chaining = graph.NEVER
        return self

    def slot_sharing_group(self, slot_sharing_group) -> "DataStreamSink":
        name = getattr(slot_sharing_group, "get_name", lambda: slot_sharing_group)()
        self._transformation.slot_sharing_group = name
        return self


def _defined_by_table_planner() -> bool:
    """Whether the operator being defined is the Table planner's (its first caller outside
    ``api.datastream`` is in ``api.table``). Flink runs the planner's operators in Java,
    so they convert what they emit at every step, as operators of no Python function."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("api.datastream"):
        frame = frame.f_back
    return frame is not None and frame.f_globals.get("__name__", "").startswith("api.table")


def _two_input(name: str, factory: Callable, input1: DataStream, input2: Transformation,
               output_type, keyed: bool, key_types=()) -> DataStream:
    t = Transformation("operator", name, [input1._transformation, input2], factory,
                       output_type=output_type or Types.PICKLED_BYTE_ARRAY(), keyed=keyed)
    t.python_operator = not _defined_by_table_planner()
    input1._env._add_transformation(t)
    t.uses_time = keyed  # timers and timestamps, as KeyedStream.process
    t.pickled_keys = any(map(declares_pickled, key_types))
    return DataStream(input1._env, t)


class ConnectedStreams:
    """Two connected streams of (possibly) different types, for operators that see both
    (``map``/``flat_map``/``process`` with Co-functions) and may share state between them.
    Connected KeyedStreams share keyed state and timers per key.

    Within a micro-batch, all of the first stream's records are processed before the
    second stream's; each stream's records keep their order.
    """

    def __init__(self, stream1: DataStream, stream2: DataStream):
        self.stream1 = stream1
        self.stream2 = stream2

    def key_by(self, key_selector1: Union[Callable, fn.KeySelector],
               key_selector2: Union[Callable, fn.KeySelector],
               key_type: TypeInformation = None) -> "ConnectedStreams":
        """Keys both inputs (by ``key_selector1`` and ``key_selector2``) for keyed state
        and timers shared by records of the same key."""
        ds1, ds2 = (s._origin_stream if isinstance(s, KeyedStream) else s
                    for s in (self.stream1, self.stream2))
        return ConnectedStreams(ds1.key_by(key_selector1, key_type),
                                ds2.key_by(key_selector2, key_type))

    def map(self, func: fn.CoMapFunction, output_type: TypeInformation = None) -> DataStream:
        """Applies ``func.map1`` to the first stream's elements and ``func.map2`` to the
        second's; one output per element."""
        return self._process("Co-Map", fn.wrap_co_map(func), output_type)

    def flat_map(self, func: fn.CoFlatMapFunction,
                 output_type: TypeInformation = None) -> DataStream:
        """Applies ``func.flat_map1``/``flat_map2``; each yields zero or more outputs."""
        return self._process("Co-Flat Map", fn.wrap_co_flat_map(func), output_type)

    def process(self, func: Union[fn.CoProcessFunction, fn.KeyedCoProcessFunction],
                output_type: TypeInformation = None) -> DataStream:
        """Applies a CoProcessFunction, or on keyed streams a KeyedCoProcessFunction
        (keyed state, timers and ``on_timer``)."""
        keyed = self._is_keyed_stream()
        return self._process("Keyed Co-Process" if keyed else "Co-Process",
                             fn.wrap_co_process(func, keyed), output_type)

    def _process(self, name: str, func, output_type) -> DataStream:
        keyed = self._is_keyed_stream()
        key_types = (self.stream1._key_type, self.stream2._key_type) if keyed else ()
        if keyed:  # keys of both inputs meet in one state, on one subtask
            first, second = (key_type or Types.PICKLED_BYTE_ARRAY() for key_type in key_types)
            if first != second:
                raise TypeError(f"Key types if input KeyedStreams don't match: "
                                f"Row(f0: {first!r}) and Row(f0: {second!r}).")
        return _two_input(name, partial(CoProcessOperator, func), self.stream1,
                          self.stream2._transformation, output_type, keyed, key_types)

    def _is_keyed_stream(self) -> bool:
        return isinstance(self.stream1, KeyedStream) and isinstance(self.stream2, KeyedStream)


class BroadcastStream:
    """A stream whose elements reach every parallel instance of the operator it is
    connected to, with the broadcast states its MapStateDescriptors declare. Made by
    ``ds.broadcast(descriptor, ...)``; it can only be connected to another stream."""

    def __init__(self, input_stream: DataStream, broadcast_state_descriptors):
        self.input_stream = input_stream
        self.broadcast_state_descriptors = list(broadcast_state_descriptors)


class BroadcastConnectedStream:
    """A (keyed or non-keyed) stream connected with a BroadcastStream; ``process`` applies
    a (Keyed)BroadcastProcessFunction.

    Within a micro-batch, the broadcast stream's records are processed first, on every
    parallel instance, then the other stream's: a batch's broadcast updates are seen by
    that batch's elements. Broadcast state is stored in checkpoints and savepoints and
    restored on every instance, at any parallelism.
    """

    def __init__(self, non_broadcast_stream: DataStream, broadcast_stream: BroadcastStream,
                 broadcast_state_descriptors):
        self.non_broadcast_stream = non_broadcast_stream
        self.broadcast_stream = broadcast_stream
        self.broadcast_state_descriptors = list(broadcast_state_descriptors)

    def process(self, func: Union[fn.BroadcastProcessFunction,
                                  fn.KeyedBroadcastProcessFunction],
                output_type: TypeInformation = None) -> DataStream:
        """Applies ``func``: ``process_element`` on the other stream's elements (read-only
        broadcast state; keyed state and timers on a KeyedStream),
        ``process_broadcast_element`` on the broadcast elements (writable broadcast
        state)."""
        keyed = self._is_keyed_stream()
        func = fn.wrap_broadcast_process(func, keyed)
        names = [d.get_name() for d in self.broadcast_state_descriptors]
        broadcast = Transformation(
            "partition", "Partition", [self.broadcast_stream.input_stream._transformation],
            output_type=self.broadcast_stream.input_stream.get_type(),
            partitioning=Partitioning(graph.BROADCAST))
        stream = _two_input("Keyed-Co-Process-Broadcast" if keyed else "Co-Process-Broadcast",
                            partial(BroadcastProcessOperator, func, names),
                            self.non_broadcast_stream, broadcast, output_type, keyed,
                            (self.non_broadcast_stream._key_type,) if keyed else ())
        stream._transformation.broadcast_input = 1
        return stream

    def _is_keyed_stream(self) -> bool:
        return isinstance(self.non_broadcast_stream, KeyedStream)


class CloseableIterator:
    """Iterator over a running job's results (``execute_and_collect``); ``close()`` (or
    leaving a ``with`` block) stops the job."""

    def __init__(self, runner, buffer):
        self._runner = runner
        self._buffer = buffer
        self._batches = runner.batches()
        self._done = False

    def __iter__(self):
        return self

    def __next__(self):
        while not self._buffer:
            if self._done:
                raise StopIteration
            try:
                next(self._batches)
            except StopIteration:
                self._done = True
        return self._buffer.popleft()

    def next(self):
        """The next result (``next(iterator)``); raises StopIteration after the last."""
        return self.__next__()

    def close(self) -> None:
        self._done = True
        self._batches.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
