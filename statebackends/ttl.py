"""State time-to-live (TTL) over any keyed state backend (Flink's TtlStateFactory).

A TTL state wraps the backend's own state of the same name and kind, and stores
every user value as ``(value, last_access_timestamp)``: the whole value of value,
reducing and aggregating state, each element of a list, each entry of a map. It
uses only the public methods of the wrapped state objects, so it works unchanged
on any backend (hashmap, RocksDB). States without TTL are never wrapped.

The timestamps are the task's processing time (``clock.processing_time``, which
is what ``ctx.timer_service().current_processing_time()`` returns; it is fixed for
one micro-batch). A value has expired when ``last_access + ttl <= now``, as in Flink.
An expired value found by a read is removed; the read treats it as absent
(``NeverReturnExpired``) or still returns it this once
(``ReturnExpiredIfNotCleanedUp``). Every cleanup strategy (full snapshot,
incremental, RocksDB compaction filter, and the default background cleanup) is
implemented as this cleanup on access plus ``cleanup_expired_state`` before a
snapshot of the state is written.

    state = ttl_state(backend, StateSpec("last-seen", StateKind.VALUE), ttl_config, clock)
"""
from __future__ import annotations

import weakref
from typing import Any, Hashable, List, NamedTuple, Optional, Tuple

from statebackends.base import KeyedStateBackend
from statebackends.heap_states import MapAccess
from core.state_spec import StateKind, StateSpec

__all__ = ["TtlPolicy", "ttl_state", "cleanup_expired_state", "without_timestamps"]


class _Touch:
    """Added to a reducing or aggregating state to refresh its timestamp on read: those
    states can only be changed through ``add``. (A class, so it pickles by reference.)"""


class TtlPolicy(NamedTuple):
    """What a StateTtlConfig asks for, in plain values."""
    ttl: int                  # milliseconds
    update_on_read: bool      # UpdateType.OnReadAndWrite
    return_expired: bool      # StateVisibility.ReturnExpiredIfNotCleanedUp
    cleanup_at_snapshot: bool  # any cleanup strategy beyond cleanup on access

    @classmethod
    def of(cls, ttl_config) -> "TtlPolicy":
        """The policy of an (enabled) ``api.datastream.state.StateTtlConfig``."""
        strategies = ttl_config.get_cleanup_strategies()
        return cls(
            ttl=ttl_config.get_ttl().to_milliseconds(),
            update_on_read=ttl_config.get_update_type().name == "OnReadAndWrite",
            return_expired=(ttl_config.get_state_visibility().name
                            == "ReturnExpiredIfNotCleanedUp"),
            cleanup_at_snapshot=(strategies.in_full_snapshot()
                                 or strategies.get_incremental_cleanup_strategy() is not None
                                 or strategies.get_rocksdb_compact_filter_cleanup_strategy()
                                 is not None))


# backend -> {state name: TTL state}, what cleanup_expired_state visits. Both weak:
# a TTL state references its backend, and whoever asked for it keeps it alive.
_registry: "weakref.WeakKeyDictionary[Any, weakref.WeakValueDictionary]" = \
    weakref.WeakKeyDictionary()


def ttl_state(backend: KeyedStateBackend, spec: StateSpec, ttl_config, clock):
    """The TTL state for ``spec`` on ``backend``, as ``backend.state(spec)`` would
    return it without TTL; ``clock.processing_time`` is the current time (ms).

    A state name gets one TTL state per backend while the caller keeps it; asking
    again with the same TTL settings returns it, with other settings fails.
    """
    name, kind = spec.name, spec.kind
    policy = TtlPolicy.of(ttl_config)
    states = _registry.get(backend)
    if states is None:
        states = _registry[backend] = weakref.WeakValueDictionary()
    state = states.get(name)
    if state is not None:
        if state.policy != policy:
            raise ValueError(f"state {name!r} is already in use with TTL settings "
                             f"{state.policy}; it cannot also be used with {policy}")
        return state
    # The wrapped state: the user's name and kind, with the reduce or aggregate
    # function working on (value, timestamp) pairs, in the backend's TTL layout.
    function = None
    if kind is StateKind.REDUCING:
        function = _TtlReduceFunction(spec.function, policy, clock)
    elif kind is StateKind.AGGREGATING:
        function = _TtlAggregateFunction(spec.function, policy, clock)
    inner = backend.state(spec._replace(function=function, with_ttl=True))
    if kind is StateKind.AGGREGATING:
        state = TtlAggregatingState(inner, policy, clock, spec.function.get_result)
    else:
        state = _TTL_STATES[kind](inner, policy, clock)
    states[name] = state
    return state


def without_timestamps(kind: StateKind, stored):
    """A stored entry of a TTL state of ``kind`` without its last-access timestamps,
    as the state would hold it without TTL (offline reading)."""
    if kind is StateKind.LIST:
        return [value for value, _ in stored]
    if kind is StateKind.MAP:
        return {key: value for key, (value, _) in stored.items()}
    return stored[0]


def cleanup_expired_state(backend: KeyedStateBackend, version: int) -> None:
    """Before ``backend.write_version(store, version)``: if that version is a snapshot,
    removes every expired value of the backend's TTL states (those with a cleanup
    strategy beyond cleanup on access), so the snapshot does not hold them."""
    states = _registry.get(backend)
    # Both backends write a snapshot (the RocksDB one maybe incremental) every
    # ``snapshot_interval`` versions; this costs a scan of the state there only.
    if not states or version % backend.snapshot_interval != 0:
        return
    cleaned = {name: state for name, state in states.items() if state.policy.cleanup_at_snapshot}
    if not cleaned:
        return
    expired: List[Tuple[_TtlState, Hashable, Hashable]] = []
    for name, key, namespace, stored in backend.entries():
        state = cleaned.get(name)
        if state is not None and state.has_expired(stored, state.clock.processing_time):
            expired.append((state, key, namespace))
    if not expired:
        return
    key, namespace = backend.get_current_key(), backend.get_current_namespace()
    try:
        for state, entry_key, entry_namespace in expired:
            backend.set_current_key(entry_key)
            backend.set_current_namespace(entry_namespace)
            state.remove_expired()
    finally:
        backend.set_current_key(key)
        backend.set_current_namespace(namespace)


class _TtlState:
    """Base of the TTL states: ``state`` is the wrapped state of ``(value, ts)`` pairs."""

    __slots__ = ("state", "policy", "clock", "_ttl", "_update_on_read", "_return_expired",
                 "__weakref__")

    def __init__(self, state, policy: TtlPolicy, clock):
        self.state = state
        self.policy = policy
        self.clock = clock
        self._ttl = policy.ttl
        self._update_on_read = policy.update_on_read
        self._return_expired = policy.return_expired

    def clear(self) -> None:
        self.state.clear()

    def merge_namespaces(self, target, sources) -> None:
        """Merging windows: folds the sources' entries into ``target``'s through the
        wrapped list, reducing or aggregating state; expired parts are left out."""
        self.state.merge_namespaces(target, sources)

    def has_expired(self, stored, now: int) -> bool:
        """Whether a stored entry (as the backend holds it) has an expired part."""
        return stored[1] + self._ttl <= now

    def remove_expired(self) -> None:
        """Removes the expired parts of the current key's entry."""
        self.state.clear()

    def _read(self, stored: Optional[Tuple[Any, int]], refresh):
        """The visible value of a stored single value: cleans it up if expired, and
        calls ``refresh(value, now)`` to move its timestamp when reads update it."""
        if stored is None:
            return None
        value, timestamp = stored
        now = self.clock.processing_time
        if timestamp + self._ttl <= now:
            self.state.clear()
            return value if self._return_expired else None
        if self._update_on_read and timestamp != now:
            refresh(value, now)
        return value

    def __repr__(self) -> str:
        return f"Ttl{type(self.state).__name__}({self.policy})"


class TtlValueState(_TtlState):
    """ValueState with TTL."""

    __slots__ = ()

    def value(self):
        return self._read(self.state.value(), self._refresh)

    def _refresh(self, value, now: int) -> None:
        self.state.update((value, now))

    def update(self, value) -> None:
        if value is None:
            self.state.clear()
        else:
            self.state.update((value, self.clock.processing_time))


class TtlListState(_TtlState):
    """ListState with TTL: each element expires on its own.

    As in Flink's TtlListState, a read removes expired elements when it rewrites the
    list anyway (OnReadAndWrite) or once every element has expired; with
    ReturnExpiredIfNotCleanedUp and OnCreateAndWrite, expired elements are therefore
    returned until then. (Where they are invisible, a read removes them at once.)
    """

    __slots__ = ()

    def get(self) -> list:
        stored = self.state.get()
        if not stored:
            return []
        now = self.clock.processing_time
        ttl = self._ttl
        live = [entry for entry in stored if entry[1] + ttl > now]
        if not live:
            self.state.clear()
        elif self._update_on_read:
            if len(live) != len(stored) or any(entry[1] != now for entry in live):
                self.state.update([(value, now) for value, _ in live])
        elif len(live) != len(stored) and not self._return_expired:
            self.state.update(live)
        return [value for value, _ in (stored if self._return_expired else live)]

    def _replace(self, entries: list) -> None:
        if entries:
            self.state.update(entries)
        else:
            self.state.clear()

    def __iter__(self):
        return iter(self.get())

    def add(self, value) -> None:
        self.state.add((value, self.clock.processing_time))

    def add_all(self, values) -> None:
        now = self.clock.processing_time
        self.state.add_all([(value, now) for value in values])

    def update(self, values) -> None:
        now = self.clock.processing_time
        self._replace([(value, now) for value in values])

    def has_expired(self, stored, now: int) -> bool:
        ttl = self._ttl
        return any(entry[1] + ttl <= now for entry in stored)

    def remove_expired(self) -> None:
        now = self.clock.processing_time
        ttl = self._ttl
        self._replace([entry for entry in self.state.get() if entry[1] + ttl > now])


class TtlMapState(_TtlState, MapAccess):
    """MapState with TTL: each entry expires on its own; reading an entry (get,
    contains, or iterating) removes it if expired."""

    __slots__ = ()

    def _visible(self, key, stored, now: int) -> Tuple[bool, Any]:
        """(whether the entry is visible, its value); cleans up or refreshes it."""
        value, timestamp = stored
        if timestamp + self._ttl <= now:
            self.state.remove(key)
            return self._return_expired, value
        if self._update_on_read and timestamp != now:
            self.state.put(key, (value, now))
        return True, value

    def get(self, key):
        stored = self.state.get(key)
        if stored is None:
            return None
        visible, value = self._visible(key, stored, self.clock.processing_time)
        return value if visible else None

    def put(self, key, value) -> None:
        self.state.put(key, (value, self.clock.processing_time))

    def put_all(self, dict_value) -> None:
        pairs = dict_value.items() if hasattr(dict_value, "items") else dict_value
        now = self.clock.processing_time
        self.state.put_all({key: (value, now) for key, value in pairs})

    def remove(self, key) -> None:
        self.state.remove(key)

    def contains(self, key) -> bool:
        return self.get(key) is not None

    def items(self) -> list:
        now = self.clock.processing_time
        entries = []
        # Read everything first: the cleanup below changes the map.
        for key, stored in list(self.state.items()):
            visible, value = self._visible(key, stored, now)
            if visible:
                entries.append((key, value))
        return entries

    def keys(self) -> list:
        return [key for key, _ in self.items()]

    def values(self) -> list:
        return [value for _, value in self.items()]

    def is_empty(self) -> bool:
        return not self.items()

    def has_expired(self, stored, now: int) -> bool:
        ttl = self._ttl
        return any(entry[1] + ttl <= now for entry in stored.values())

    def remove_expired(self) -> None:
        now = self.clock.processing_time
        ttl = self._ttl
        for key, stored in list(self.state.items()):
            if stored[1] + ttl <= now:
                self.state.remove(key)


class _TtlReduceFunction:
    """Reduces ``(value, ts)`` pairs; an expired current value is dropped first
    (unless ReturnExpiredIfNotCleanedUp), as Flink's TtlReduceFunction does."""

    __slots__ = ("_reduce", "_ttl", "_return_expired", "_clock")

    def __init__(self, reduce_function, policy: TtlPolicy, clock):
        self._reduce = getattr(reduce_function, "reduce", reduce_function)
        self._ttl = policy.ttl
        self._return_expired = policy.return_expired
        self._clock = clock

    def reduce(self, current, added):
        now = self._clock.processing_time
        value, timestamp = current
        if added is _Touch:
            return value, now
        if timestamp + self._ttl <= now and not self._return_expired:
            return added
        reduced = self._reduce(value, added[0])
        return None if reduced is None else (reduced, now)


class TtlReducingState(_TtlState):
    """ReducingState with TTL."""

    __slots__ = ()

    def get(self):
        return self._read(self.state.get(), self._refresh)

    def _refresh(self, value, now: int) -> None:
        self.state.add(_Touch)

    def add(self, value) -> None:
        self.state.add((value, self.clock.processing_time))


class _TtlAggregateFunction:
    """An AggregateFunction over ``(accumulator, ts)`` pairs; ``get_result`` hands the
    pair back, so the TTL state sees the timestamp (it applies the user's get_result).
    An expired accumulator restarts from ``create_accumulator()`` (unless
    ReturnExpiredIfNotCleanedUp), as in Flink's TtlAggregateFunction."""

    __slots__ = ("_function", "_ttl", "_return_expired", "_clock")

    def __init__(self, agg_function, policy: TtlPolicy, clock):
        self._function = agg_function
        self._ttl = policy.ttl
        self._return_expired = policy.return_expired
        self._clock = clock

    def _unexpired(self, stored, now: int):
        accumulator, timestamp = stored
        if timestamp + self._ttl <= now and not self._return_expired:
            return None
        return accumulator

    def create_accumulator(self):
        return self._function.create_accumulator(), self._clock.processing_time

    def add(self, value, stored):
        now = self._clock.processing_time
        if value is _Touch:
            return stored[0], now
        accumulator = self._unexpired(stored, now)
        if accumulator is None:
            accumulator = self._function.create_accumulator()
        accumulator = self._function.add(value, accumulator)
        return None if accumulator is None else (accumulator, now)

    def get_result(self, stored):
        return stored

    def merge(self, a, b):
        now = self._clock.processing_time
        a, b = self._unexpired(a, now), self._unexpired(b, now)
        if a is None or b is None:
            merged = b if a is None else a
        else:
            merged = self._function.merge(a, b)
        return None if merged is None else (merged, now)


class TtlAggregatingState(_TtlState):
    """AggregatingState with TTL: the accumulator expires as a whole."""

    __slots__ = ("_get_result",)

    def __init__(self, state, policy: TtlPolicy, clock, get_result):
        super().__init__(state, policy, clock)
        self._get_result = get_result

    def get(self):
        accumulator = self._read(self.state.get(), self._refresh)
        return None if accumulator is None else self._get_result(accumulator)

    def _refresh(self, value, now: int) -> None:
        self.state.add(_Touch)

    def add(self, value) -> None:
        self.state.add(value)


_TTL_STATES = {StateKind.VALUE: TtlValueState, StateKind.LIST: TtlListState,
               StateKind.MAP: TtlMapState, StateKind.REDUCING: TtlReducingState}
