"""The function interfaces of the older (Jython) Python streaming guide, with their
camelCase methods, and the adapters that run them as this project's functions.

A program subclasses these under their Java names (``from
org.apache.flink.api.common.functions import FlatMapFunction``, see ``aliases``)::

    class Tokenizer(FlatMapFunction):
        def flatMap(self, value, collector):
            for word in value.lower().split():
                collector.collect((1, word))

A class that lacks its interface's method cannot be instantiated (a build-time
TypeError naming the method). ``SourceFunction`` (``run(ctx)``/``cancel()``) and
``OutputSelector`` (``select(value)``) are this project's own classes: their contract is
the same in both APIs.
"""
from abc import ABC, abstractmethod

from api.common import Configuration
from api.common.serialization import SerializationSchema as _SerializationSchema
from api.datastream import functions as fn


class Collector:
    """Collects the output records of ``flatMap`` and ``apply``: ``collector.collect(x)``."""

    __slots__ = ("records",)

    def __init__(self):
        self.records = []

    def collect(self, record) -> None:
        """Emits ``record``."""
        self.records.append(record)


class RichFunction:
    """Mixed into the Rich variants: ``open(config)`` is called before the first record,
    with the (empty) Configuration Flink passes, and ``close()`` after the last."""

    def open(self, config: Configuration) -> None:
        """Initialization method, called once per parallel instance."""

    def close(self) -> None:
        """Tear-down method, called once per parallel instance."""


class MapFunction(ABC):
    """Transforms each element into one element: ``map(value)``."""

    @abstractmethod
    def map(self, value):
        """Returns the transformed element."""


class FlatMapFunction(ABC):
    """Transforms each element into zero or more: ``flatMap(value, collector)`` calls
    ``collector.collect(x)`` for each output."""

    @abstractmethod
    def flatMap(self, value, collector: Collector) -> None:
        """Emits the outputs of ``value`` through ``collector``."""


class FilterFunction(ABC):
    """Keeps the elements for which ``filter(value)`` returns true."""

    @abstractmethod
    def filter(self, value) -> bool:
        """Returns True to keep the element."""


class ReduceFunction(ABC):
    """Combines two values into one: ``reduce(input1, input2)``."""

    @abstractmethod
    def reduce(self, input1, input2):
        """Combines the accumulated ``input1`` with the new ``input2``."""


class KeySelector(ABC):
    """Extracts the key of an element: ``getKey(input)``."""

    @abstractmethod
    def getKey(self, input):
        """Returns the key of ``input``."""


class WindowFunction(ABC):
    """Evaluates a window: ``apply(key, window, values, collector)`` emits its outputs
    through ``collector.collect(x)``."""

    @abstractmethod
    def apply(self, key, window, values, collector: Collector) -> None:
        """Emits the outputs of the window's ``values``."""


class RichMapFunction(RichFunction, MapFunction):
    """A MapFunction with ``open(config)`` and ``close()``."""


class RichFlatMapFunction(RichFunction, FlatMapFunction):
    """A FlatMapFunction with ``open(config)`` and ``close()``."""


class RichFilterFunction(RichFunction, FilterFunction):
    """A FilterFunction with ``open(config)`` and ``close()``."""


class RichReduceFunction(RichFunction, ReduceFunction):
    """A ReduceFunction with ``open(config)`` and ``close()``."""


class RichWindowFunction(RichFunction, WindowFunction):
    """A WindowFunction with ``open(config)`` and ``close()``."""


class SerializationSchema(_SerializationSchema):
    """Turns a record into the bytes ``write_to_socket`` sends: ``serialize(value)``."""

    @abstractmethod
    def serialize(self, value) -> bytes:
        """The bytes of ``value``."""

    def _serialize(self, value) -> bytes:
        return self.serialize(value)


# --- adapters: run a legacy function as this project's function ------------------------

class _Adapter(fn.Function):
    """Holds the user's function; forwards the lifecycle of Rich functions (Flink calls
    ``open``/``close`` only on those)."""

    def __init__(self, function):
        self.function = function

    def open(self, runtime_context) -> None:
        if isinstance(self.function, RichFunction):
            self.function.open(Configuration())

    def close(self) -> None:
        if isinstance(self.function, RichFunction):
            self.function.close()


class _Map(_Adapter, fn.MapFunction):
    def map(self, value):
        return self.function.map(value)


class _FlatMap(_Adapter, fn.FlatMapFunction):
    def flat_map(self, value):
        collector = Collector()
        self.function.flatMap(value, collector)
        return collector.records


class _Filter(_Adapter, fn.FilterFunction):
    def filter(self, value) -> bool:
        return self.function.filter(value)


class _Reduce(_Adapter, fn.ReduceFunction):
    def reduce(self, value1, value2):
        return self.function.reduce(value1, value2)


class _KeySelector(_Adapter, fn.KeySelector):
    def get_key(self, value):
        return self.function.getKey(value)


class _Window(_Adapter, fn.WindowFunction):
    def apply(self, key, window, inputs):
        collector = Collector()
        self.function.apply(key, window, inputs, collector)
        return collector.records


_ADAPTERS = {MapFunction: _Map, FlatMapFunction: _FlatMap, FilterFunction: _Filter,
             ReduceFunction: _Reduce, KeySelector: _KeySelector, WindowFunction: _Window}


def adapt(function, interface: type, operation: str) -> fn.Function:
    """``function`` (an instance of the legacy ``interface``) as the function this
    project's ``operation`` takes; anything else is a TypeError naming what is expected."""
    if not isinstance(function, interface):
        method = next(iter(interface.__abstractmethods__))
        raise TypeError(f"{operation}() expects a {interface.__name__} (a class with "
                        f"{method}(...)), got {type(function).__name__}")
    return _ADAPTERS[interface](function)
