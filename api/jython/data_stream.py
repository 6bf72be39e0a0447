"""PythonDataStream and its relatives, as the older Python streaming guide uses them: thin
wrappers over this project's DataStream, KeyedStream, WindowedStream and SplitStream
(as Flink's were over Java's) that take the guide's camelCase functions.

Streams here carry Python objects (the guide declares no types): ``print()``/``output()``
write ``str(record)``, ``write_as_text`` one ``str(record)`` per line.
"""
from typing import Optional

from api.datastream import DataStream, KeyedStream, OutputSelector, WriteMode
from api.datastream.windowed_stream import WindowedStream

from .functions import (FilterFunction, FlatMapFunction, KeySelector, MapFunction,
                        ReduceFunction, WindowFunction, adapt)

class PythonDataStream:
    """A stream of Python objects; transformations return new PythonDataStreams."""

    def __init__(self, stream: DataStream):
        self.stream = stream

    def union(self, *streams: "PythonDataStream") -> "PythonDataStream":
        """All elements of this stream and of ``streams``."""
        return PythonDataStream(self.stream.union(*(s.stream for s in streams)))

    def split(self, output_selector: OutputSelector) -> "PythonSplitStream":
        """Names the outputs of each element by ``output_selector.select(value)``;
        ``select(*names)`` on the result picks them."""
        return PythonSplitStream(self.stream.split(output_selector))

    def filter(self, filter_func: FilterFunction) -> "PythonDataStream":
        """The elements for which ``filter(value)`` is true."""
        return PythonDataStream(self.stream.filter(adapt(filter_func, FilterFunction,
                                                         "filter")))

    def map(self, mapper: MapFunction) -> "PythonDataStream":
        """``map(value)`` of each element."""
        return PythonDataStream(self.stream.map(adapt(mapper, MapFunction, "map")))

    def flat_map(self, flat_mapper: FlatMapFunction) -> "PythonDataStream":
        """Every record ``flatMap(value, collector)`` collects."""
        return PythonDataStream(self.stream.flat_map(adapt(flat_mapper, FlatMapFunction,
                                                           "flat_map")))

    def key_by(self, selector: KeySelector) -> "PythonKeyedStream":
        """This stream partitioned by ``getKey(value)``."""
        return PythonKeyedStream(self.stream.key_by(adapt(selector, KeySelector, "key_by")))

    def print(self) -> None:
        """Prints ``str(record)`` of each element to standard output (``N> `` first when
        the sink's parallelism is above 1)."""
        self.stream.print()

    def output(self) -> None:
        """The guide's name of ``print()``."""
        self.print()

    def write_as_text(self, path: str, mode: WriteMode = WriteMode.NO_OVERWRITE) -> None:
        """Writes ``str(record)`` of each element as a line to ``path``; ``mode`` says what
        happens if it exists (``WriteMode.OVERWRITE`` replaces it)."""
        self.stream.write_as_text(path, mode)

    def write_to_socket(self, host: str, port: int, schema) -> None:
        """Writes ``schema.serialize(record)`` of each element to the socket
        ``host:port``."""
        self.stream.write_to_socket(host, port, schema)

    def iterate(self, max_wait_time_ms: Optional[int] = None) -> "PythonIterativeStream":
        """The head of an iteration; ``close_with(feedback)`` feeds records back to it (one
        micro-batch later: see ``api.datastream.iterations``)."""
        return PythonIterativeStream(self.stream.iterate(max_wait_time_ms or 0))


class PythonIterativeStream(PythonDataStream):
    """The head of an iteration, as the guide's ``iterate()`` returns it."""

    def close_with(self, feedback: PythonDataStream) -> PythonDataStream:
        """Feeds ``feedback``'s elements back to this head."""
        self.stream.close_with(feedback.stream)
        return feedback


class PythonKeyedStream(PythonDataStream):
    """A PythonDataStream partitioned by key: rolling reduce and windows."""

    stream: KeyedStream

    def reduce(self, reducer: ReduceFunction) -> PythonDataStream:
        """Rolling reduce per key: emits ``reduce(accumulated, value)`` for every element."""
        return PythonDataStream(self.stream.reduce(adapt(reducer, ReduceFunction, "reduce")))

    def count_window(self, size: int, slide: int = 0) -> "PythonWindowedStream":
        """Windows of the last ``size`` elements per key, every ``slide`` elements if
        given."""
        return PythonWindowedStream(self.stream.count_window(size, slide))

    def time_window(self, size, slide=None) -> "PythonWindowedStream":
        """Tumbling windows of ``size`` (e.g. ``milliseconds(50)``), sliding by ``slide``
        if given, in the time of the environment (see ``environment``)."""
        return PythonWindowedStream(self.stream.time_window(size, slide))


class PythonWindowedStream:
    """A keyed stream cut into windows."""

    def __init__(self, stream: WindowedStream):
        self.stream = stream

    def reduce(self, fun: ReduceFunction) -> PythonDataStream:
        """One ``reduce``-combined value per key and window."""
        return PythonDataStream(self.stream.reduce(adapt(fun, ReduceFunction, "reduce")))

    def apply(self, fun: WindowFunction) -> PythonDataStream:
        """Every record ``apply(key, window, values, collector)`` collects, per key and
        window."""
        return PythonDataStream(self.stream.apply(adapt(fun, WindowFunction, "apply")))


class PythonSplitStream(PythonDataStream):
    """A stream whose elements carry the output names an OutputSelector gave them."""

    def select(self, *output_names: str) -> PythonDataStream:
        """The elements with one of ``output_names``: ``select("even")``."""
        return PythonDataStream(self.stream.select(*output_names))
