"""Keyed state: descriptors and state interfaces (= ``pyflink.datastream.state``).

A user function asks its ``RuntimeContext`` for state with a descriptor, e.g.
``ctx.get_state(ValueStateDescriptor("count", Types.LONG()))``; the returned
object always reads and writes the entry of the key of the current element.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from enum import Enum
from typing import Any, Dict, Generic, Iterable, Iterator, List, Optional, Tuple, TypeVar

from api.common.time import Duration, Time

__all__ = [
    "State", "ValueState", "AppendingState", "MergingState", "ReducingState",
    "AggregatingState", "ListState", "MapState",
    "StateDescriptor", "ValueStateDescriptor", "ListStateDescriptor",
    "MapStateDescriptor", "ReducingStateDescriptor", "AggregatingStateDescriptor",
    "StateTtlConfig",
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


class _ReadableMap(State, Generic[K, V]):
    """What map-shaped states (MapState, BroadcastState) offer for reading."""

    @abstractmethod
    def get(self, key: K) -> V:
        """Returns the value mapped to ``key``, or None."""

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

    def __contains__(self, key: K) -> bool:
        return self.contains(key)

    def __iter__(self) -> Iterator[K]:
        return iter(self.keys())


class _WritableMap(_ReadableMap[K, V]):
    """What map-shaped states offer for writing."""

    @abstractmethod
    def put(self, key: K, value: V) -> None:
        """Maps ``key`` to ``value``."""

    @abstractmethod
    def put_all(self, dict_value: Dict[K, V]) -> None:
        """Copies all mappings of a dict (or an iterable of pairs)."""

    @abstractmethod
    def remove(self, key: K) -> None:
        """Removes the mapping of ``key``, if any."""

    def __setitem__(self, key: K, value: V) -> None:
        self.put(key, value)

    def __delitem__(self, key: K) -> None:
        self.remove(key)


class MapState(_WritableMap[K, V]):
    """State holding a map per key.

    ``get`` of a missing key returns None, and ``contains`` is False for keys
    mapped to None, as in PyFlink.
    """


class ReadOnlyBroadcastState(_ReadableMap[K, V]):
    """A read-only view of a BroadcastState (the non-broadcast side of a broadcast
    connection sees this)."""


class BroadcastState(ReadOnlyBroadcastState[K, V], _WritableMap[K, V]):
    """The map state of a BroadcastStream: every parallel instance holds the same entries,
    because every instance sees every broadcast element. Written only on the broadcast
    side; restored identically on each instance, at any parallelism."""


class StateDescriptor(ABC):
    """Names a state and its type; used to create partitioned state.

    ``state_kind`` tells the state backend which kind of state to create.
    """

    state_kind: str = ""

    def __init__(self, name: str, type_info: Any):
        self.name = name
        self.type_info = type_info
        self._ttl_config: Optional[StateTtlConfig] = None

    def get_name(self) -> str:
        """Returns the name of the state."""
        return self.name

    def enable_time_to_live(self, ttl_config: "StateTtlConfig") -> None:
        """Configures state time-to-live (TTL): values not written (or, with
        ``OnReadAndWrite``, read) for ``ttl`` expire and are cleaned up.

        Example::

            ttl = StateTtlConfig.new_builder(Time.minutes(10)).build()
            descriptor.enable_time_to_live(ttl)
        """
        if not isinstance(ttl_config, StateTtlConfig):
            raise TypeError(f"enable_time_to_live() of state {self.name!r} needs a "
                            f"StateTtlConfig, got {type(ttl_config).__name__}")
        self._ttl_config = ttl_config

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


class StateTtlConfig:
    """Configuration of state time-to-live (TTL), built with ``StateTtlConfig.new_builder``.

    Every value (list element, map entry) carries the processing time it was last
    written (or read, with ``OnReadAndWrite``); it expires once ``last access + ttl <=
    current processing time``. The clock is the task's processing time, the time
    ``ctx.timer_service().current_processing_time()`` returns.

    Example::

        ttl_config = (StateTtlConfig.new_builder(Time.seconds(1))
                      .set_update_type(StateTtlConfig.UpdateType.OnCreateAndWrite)
                      .set_state_visibility(StateTtlConfig.StateVisibility.NeverReturnExpired)
                      .build())
        descriptor = ValueStateDescriptor("text state", Types.STRING())
        descriptor.enable_time_to_live(ttl_config)
    """

    class UpdateType(Enum):
        """When the last-access timestamp is refreshed, prolonging the state's TTL."""

        Disabled = 0
        """TTL is disabled. State does not expire."""

        OnCreateAndWrite = 1
        """The timestamp is set when state is created and on every write."""

        OnReadAndWrite = 2
        """As OnCreateAndWrite, and also refreshed on every read."""

    class StateVisibility(Enum):
        """Whether an expired value that is not cleaned up yet may be returned."""

        ReturnExpiredIfNotCleanedUp = 0
        """Return an expired value if it is not cleaned up yet (the read cleans it up)."""

        NeverReturnExpired = 1
        """Never return an expired value."""

    class TtlTimeCharacteristic(Enum):
        """The time scale of TTL."""

        ProcessingTime = 0
        """Processing time."""

    def __init__(self, update_type: "StateTtlConfig.UpdateType",
                 state_visibility: "StateTtlConfig.StateVisibility",
                 ttl_time_characteristic: "StateTtlConfig.TtlTimeCharacteristic",
                 ttl: Time, cleanup_strategies: "StateTtlConfig.CleanupStrategies"):
        self._update_type = update_type
        self._state_visibility = state_visibility
        self._ttl_time_characteristic = ttl_time_characteristic
        self._ttl = ttl
        self._cleanup_strategies = cleanup_strategies

    @staticmethod
    def new_builder(ttl: Time) -> "StateTtlConfig.Builder":
        """A builder for a TTL of ``ttl`` (a Time or Duration), with the defaults
        OnCreateAndWrite, NeverReturnExpired, ProcessingTime and background cleanup."""
        return StateTtlConfig.Builder(ttl)

    def get_update_type(self) -> "StateTtlConfig.UpdateType":
        return self._update_type

    def get_state_visibility(self) -> "StateTtlConfig.StateVisibility":
        return self._state_visibility

    def get_ttl(self) -> Time:
        return self._ttl

    def get_ttl_time_characteristic(self) -> "StateTtlConfig.TtlTimeCharacteristic":
        return self._ttl_time_characteristic

    def is_enabled(self) -> bool:
        """Whether TTL is on: the update type is not Disabled."""
        return self._update_type != StateTtlConfig.UpdateType.Disabled

    def get_cleanup_strategies(self) -> "StateTtlConfig.CleanupStrategies":
        return self._cleanup_strategies

    def __repr__(self) -> str:
        return (f"StateTtlConfig<update_type={self._update_type}, "
                f"state_visibility={self._state_visibility}, "
                f"ttl_time_characteristic={self._ttl_time_characteristic}, ttl={self._ttl}>")

    class Builder:
        """Builder of a StateTtlConfig; every setter returns the builder."""

        def __init__(self, ttl: Time):
            self._ttl = ttl
            self._update_type = StateTtlConfig.UpdateType.OnCreateAndWrite
            self._state_visibility = StateTtlConfig.StateVisibility.NeverReturnExpired
            self._ttl_time_characteristic = StateTtlConfig.TtlTimeCharacteristic.ProcessingTime
            self._is_cleanup_in_background = True
            self._strategies: Dict = {}

        def set_update_type(self, update_type: "StateTtlConfig.UpdateType"
                            ) -> "StateTtlConfig.Builder":
            """Sets when the last-access timestamp is refreshed."""
            self._update_type = update_type
            return self

        def update_ttl_on_create_and_write(self) -> "StateTtlConfig.Builder":
            return self.set_update_type(StateTtlConfig.UpdateType.OnCreateAndWrite)

        def update_ttl_on_read_and_write(self) -> "StateTtlConfig.Builder":
            return self.set_update_type(StateTtlConfig.UpdateType.OnReadAndWrite)

        def set_state_visibility(self, state_visibility: "StateTtlConfig.StateVisibility"
                                 ) -> "StateTtlConfig.Builder":
            """Sets whether expired values that are not cleaned up yet are returned."""
            self._state_visibility = state_visibility
            return self

        def return_expired_if_not_cleaned_up(self) -> "StateTtlConfig.Builder":
            return self.set_state_visibility(
                StateTtlConfig.StateVisibility.ReturnExpiredIfNotCleanedUp)

        def never_return_expired(self) -> "StateTtlConfig.Builder":
            return self.set_state_visibility(StateTtlConfig.StateVisibility.NeverReturnExpired)

        def set_ttl_time_characteristic(
                self, ttl_time_characteristic: "StateTtlConfig.TtlTimeCharacteristic"
        ) -> "StateTtlConfig.Builder":
            """Sets the time scale of TTL (only processing time exists)."""
            self._ttl_time_characteristic = ttl_time_characteristic
            return self

        def use_processing_time(self) -> "StateTtlConfig.Builder":
            return self.set_ttl_time_characteristic(
                StateTtlConfig.TtlTimeCharacteristic.ProcessingTime)

        def cleanup_full_snapshot(self) -> "StateTtlConfig.Builder":
            """Drops expired state when a snapshot of the state is written (every
            few micro-batches), as well as on access."""
            self._strategies[StateTtlConfig.CleanupStrategies.Strategies.
                             FULL_STATE_SCAN_SNAPSHOT] = \
                StateTtlConfig.CleanupStrategies.EMPTY_STRATEGY
            return self

        def cleanup_incrementally(self, cleanup_size: int,
                                  run_cleanup_for_every_record: bool) -> "StateTtlConfig.Builder":
            """Cleans up expired state incrementally.

            Here expired values are removed when they are accessed and when a
            snapshot of the state is written (both parameters are recorded only).
            """
            self._strategies[StateTtlConfig.CleanupStrategies.Strategies.INCREMENTAL_CLEANUP] = \
                StateTtlConfig.CleanupStrategies.IncrementalCleanupStrategy(
                    cleanup_size, run_cleanup_for_every_record)
            return self

        def cleanup_in_rocksdb_compact_filter(self, query_time_after_num_entries: int,
                                              periodic_compaction_time: Duration = None
                                              ) -> "StateTtlConfig.Builder":
            """Cleans up expired state "while RocksDB compacts".

            Here expired values are removed when they are accessed and when a
            snapshot of the state is written, on either backend (the parameters are
            recorded only).
            """
            self._strategies[
                StateTtlConfig.CleanupStrategies.Strategies.ROCKSDB_COMPACTION_FILTER] = \
                StateTtlConfig.CleanupStrategies.RocksdbCompactFilterCleanupStrategy(
                    query_time_after_num_entries, periodic_compaction_time)
            return self

        def disable_cleanup_in_background(self) -> "StateTtlConfig.Builder":
            """Disables the default background cleanup (enabled by default); strategies
            configured explicitly stay on. Expired values are still removed on access."""
            self._is_cleanup_in_background = False
            return self

        def set_ttl(self, ttl: Time) -> "StateTtlConfig.Builder":
            """Sets the TTL (a Time or Duration)."""
            self._ttl = ttl
            return self

        def build(self) -> "StateTtlConfig":
            """The StateTtlConfig; the TTL must be positive (at least 1 ms)."""
            to_milliseconds = getattr(self._ttl, "to_milliseconds", None)
            if to_milliseconds is None:
                raise TypeError(f"StateTtlConfig: the TTL must be a Time or Duration, "
                                f"got {self._ttl!r}")
            if to_milliseconds() <= 0:
                raise ValueError(f"StateTtlConfig: TTL is expected to be positive, "
                                 f"got {to_milliseconds()} ms")
            return StateTtlConfig(
                self._update_type, self._state_visibility, self._ttl_time_characteristic,
                self._ttl, StateTtlConfig.CleanupStrategies(dict(self._strategies),
                                                            self._is_cleanup_in_background))

    class CleanupStrategies:
        """When expired state is cleaned up, besides on access (always).

        Here every background strategy (incremental, RocksDB compaction filter, and the
        default background cleanup) and the full-snapshot strategy drop expired state
        when a snapshot of the state is written.
        """

        class Strategies(Enum):
            """Fixed strategy ordinals."""

            FULL_STATE_SCAN_SNAPSHOT = 0
            INCREMENTAL_CLEANUP = 1
            ROCKSDB_COMPACTION_FILTER = 2

        class CleanupStrategy(ABC):
            """Base of cleanup strategy configurations."""

        class EmptyCleanupStrategy(CleanupStrategy):
            """A strategy without parameters."""

        class IncrementalCleanupStrategy(CleanupStrategy):
            """Configuration of incremental cleanup."""

            def __init__(self, cleanup_size: int, run_cleanup_for_every_record: bool):
                self._cleanup_size = cleanup_size
                self._run_cleanup_for_every_record = run_cleanup_for_every_record

            def get_cleanup_size(self) -> int:
                return self._cleanup_size

            def run_cleanup_for_every_record(self) -> bool:
                return self._run_cleanup_for_every_record

        class RocksdbCompactFilterCleanupStrategy(CleanupStrategy):
            """Configuration of cleanup by RocksDB's compaction filter."""

            def __init__(self, query_time_after_num_entries: int,
                         periodic_compaction_time: Duration = None):
                self._query_time_after_num_entries = query_time_after_num_entries
                self._periodic_compaction_time = (periodic_compaction_time
                                                  or Duration.of_days(30))

            def get_query_time_after_num_entries(self) -> int:
                return self._query_time_after_num_entries

            def get_periodic_compaction_time(self) -> Duration:
                return self._periodic_compaction_time

        EMPTY_STRATEGY = EmptyCleanupStrategy()

        def __init__(self, strategies: Dict["StateTtlConfig.CleanupStrategies.Strategies",
                                            "StateTtlConfig.CleanupStrategies.CleanupStrategy"],
                     is_cleanup_in_background: bool):
            self._strategies = strategies
            self._is_cleanup_in_background = is_cleanup_in_background

        def is_cleanup_in_background(self) -> bool:
            return self._is_cleanup_in_background

        def in_full_snapshot(self) -> bool:
            return self.Strategies.FULL_STATE_SCAN_SNAPSHOT in self._strategies

        def get_incremental_cleanup_strategy(
                self) -> Optional["StateTtlConfig.CleanupStrategies.IncrementalCleanupStrategy"]:
            """The incremental strategy; by default (background cleanup on) size 5,
            not per record; None if background cleanup is off and none was set."""
            default = (self.IncrementalCleanupStrategy(5, False)
                       if self._is_cleanup_in_background else None)
            return self._strategies.get(self.Strategies.INCREMENTAL_CLEANUP, default)

        def get_rocksdb_compact_filter_cleanup_strategy(
                self) -> Optional["StateTtlConfig.CleanupStrategies."
                                  "RocksdbCompactFilterCleanupStrategy"]:
            """The compaction filter strategy; by default (background cleanup on) after
            1000 entries; None if background cleanup is off and none was set."""
            default = (self.RocksdbCompactFilterCleanupStrategy(1000)
                       if self._is_cleanup_in_background else None)
            return self._strategies.get(self.Strategies.ROCKSDB_COMPACTION_FILTER, default)


class OperatorStateStore(ABC):
    """Access to operator (non-keyed) state; here, the broadcast state of a broadcast
    process function."""

    @abstractmethod
    def get_broadcast_state(self, state_descriptor):
        """The BroadcastState of ``state_descriptor`` (a MapStateDescriptor)."""
