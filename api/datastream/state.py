"""Keyed state: descriptors and state interfaces (= ``pyflink.datastream.state``).

A user function asks its ``RuntimeContext`` for state with a descriptor, e.g.
``ctx.get_state(ValueStateDescriptor("count", Types.LONG()))``; the returned
object always reads and writes the entry of the key of the current element.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Dict, Generic, Iterable, Iterator, List, Tuple, TypeVar

__all__ = [
    "State", "ValueState", "AppendingState", "MergingState", "ReducingState",
    "AggregatingState", "ListState", "MapState",
    "StateDescriptor", "ValueStateDescriptor", "ListStateDescriptor",
    "MapStateDescriptor", "ReducingStateDescriptor", "AggregatingStateDescriptor",
]

T = TypeVar("T")
K = TypeVar("K")
V = TypeVar("V")
IN = TypeVar("IN")
OUT = TypeVar("OUT")


class State(ABC):
    """Base interface for partitioned state."""

    @abstractmethod
    def clear(self) -> None:
        """Removes the value mapped under the current key."""


class ValueState(State, Generic[T]):
    """State holding a single value per key."""

    @abstractmethod
    def value(self) -> T:
        """Returns the current value, or None if it was never set."""

    @abstractmethod
    def update(self, value: T) -> None:
        """Sets the current value; updating with None removes it."""


class AppendingState(State, Generic[IN, OUT]):
    """State that values can be added to and whose current result can be read."""

    @abstractmethod
    def get(self) -> OUT:
        """Returns the current result for the current key."""

    @abstractmethod
    def add(self, value: IN) -> None:
        """Adds a value to the state of the current key."""


class MergingState(AppendingState[IN, OUT]):
    """AppendingState whose contents can be merged (e.g. for merging windows)."""


class ReducingState(MergingState[T, T]):
    """State combining added values with a ReduceFunction; get() is None when empty."""


class AggregatingState(MergingState[IN, OUT]):
    """State pre-aggregating added values with an AggregateFunction.

    It stores the accumulator; get() returns ``get_result(accumulator)``, or None
    when empty. Adding None clears the state.
    """


class ListState(MergingState[T, Iterable[T]]):
    """State holding a list of values per key; get() is empty when nothing was added."""

    @abstractmethod
    def update(self, values: List[T]) -> None:
        """Replaces the list with the given values."""

    @abstractmethod
    def add_all(self, values: List[T]) -> None:
        """Appends all given values."""

    def __iter__(self) -> Iterator[T]:
        return iter(self.get())


class MapState(State, Generic[K, V]):
    """State holding a map per key.

    ``get`` of a missing key returns None, and ``contains`` is False for keys
    mapped to None, as in PyFlink.
    """

    @abstractmethod
    def get(self, key: K) -> V:
        """Returns the value mapped to ``key``, or None."""

    @abstractmethod
    def put(self, key: K, value: V) -> None:
        """Maps ``key`` to ``value``."""

    @abstractmethod
    def put_all(self, dict_value: Dict[K, V]) -> None:
        """Copies all mappings of a dict (or an iterable of pairs)."""

    @abstractmethod
    def remove(self, key: K) -> None:
        """Removes the mapping of ``key``, if any."""

    @abstractmethod
    def contains(self, key: K) -> bool:
        """Whether ``key`` is mapped to a value that is not None."""

    @abstractmethod
    def items(self) -> Iterable[Tuple[K, V]]:
        """All (key, value) pairs."""

    @abstractmethod
    def keys(self) -> Iterable[K]:
        """All keys."""

    @abstractmethod
    def values(self) -> Iterable[V]:
        """All values."""

    @abstractmethod
    def is_empty(self) -> bool:
        """Whether the map has no mappings."""

    def __getitem__(self, key: K) -> V:
        return self.get(key)

    def __setitem__(self, key: K, value: V) -> None:
        self.put(key, value)

    def __delitem__(self, key: K) -> None:
        self.remove(key)

    def __contains__(self, key: K) -> bool:
        return self.contains(key)

    def __iter__(self) -> Iterator[K]:
        return iter(self.keys())


class StateDescriptor(ABC):
    """Names a state and its type; used to create partitioned state.

    ``state_kind`` tells the state backend which kind of state to create.
    """

    state_kind: str = ""

    def __init__(self, name: str, type_info: Any):
        self.name = name
        self.type_info = type_info

    def get_name(self) -> str:
        """Returns the name of the state."""
        return self.name

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class ValueStateDescriptor(StateDescriptor):
    """StateDescriptor for ValueState (``RuntimeContext.get_state``)."""

    state_kind = "value"

    def __init__(self, name: str, value_type_info: Any):
        super().__init__(name, value_type_info)


class ListStateDescriptor(StateDescriptor):
    """StateDescriptor for ListState (``RuntimeContext.get_list_state``)."""

    state_kind = "list"

    def __init__(self, name: str, elem_type_info: Any):
        super().__init__(name, elem_type_info)
        self.elem_type_info = elem_type_info


class MapStateDescriptor(StateDescriptor):
    """StateDescriptor for MapState (``RuntimeContext.get_map_state``)."""

    state_kind = "map"

    def __init__(self, name: str, key_type_info: Any, value_type_info: Any):
        super().__init__(name, value_type_info)
        self.key_type_info = key_type_info
        self.value_type_info = value_type_info


class _CallableReduceFunction:
    """Gives a plain two-argument callable the ReduceFunction ``reduce`` method."""

    def __init__(self, func):
        self._func = func

    def reduce(self, value1, value2):
        return self._func(value1, value2)


class ReducingStateDescriptor(StateDescriptor):
    """StateDescriptor for ReducingState (``RuntimeContext.get_reducing_state``).

    ``reduce_function`` is a ReduceFunction or a callable ``(value1, value2) -> value``.
    """

    state_kind = "reducing"

    def __init__(self, name: str, reduce_function, type_info: Any):
        super().__init__(name, type_info)
        if not callable(getattr(reduce_function, "reduce", None)):
            if not callable(reduce_function):
                raise TypeError("The input must be a ReduceFunction or a callable function!")
            reduce_function = _CallableReduceFunction(reduce_function)
        self._reduce_function = reduce_function

    def get_reduce_function(self):
        """Returns the ReduceFunction combining added values."""
        return self._reduce_function


_AGGREGATE_FUNCTION_METHODS = ("create_accumulator", "add", "get_result")


class AggregatingStateDescriptor(StateDescriptor):
    """StateDescriptor for AggregatingState (``RuntimeContext.get_aggregating_state``).

    The state stores the accumulator of ``agg_function`` (an AggregateFunction).
    """

    state_kind = "aggregating"

    def __init__(self, name: str, agg_function, state_type_info: Any):
        super().__init__(name, state_type_info)
        if not all(callable(getattr(agg_function, m, None)) for m in _AGGREGATE_FUNCTION_METHODS):
            raise TypeError("The input must be a api.datastream.functions.AggregateFunction!")
        self._agg_function = agg_function

    def get_agg_function(self):
        """Returns the AggregateFunction of this state."""
        return self._agg_function
