"""What every keyed state backend shares (Flink's AbstractKeyedStateBackend).

A backend holds every state of one operator instance over one key-group range.
The engine sets the current key (and namespace) per record; state objects obtained
once from ``state(spec)`` keep following it. A backend implements its tables of
entries (``_table_of``), ``write_version`` (persist a version through a
``checkpoint.state_store.StateStore``) and the class method ``restore`` (rebuild a
backend at any committed version, from files of any key-group ranges); the state
objects themselves are the heap states of ``statebackends.heap_states``, over
whatever tables the backend gives them.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, Dict, Hashable, Iterator, MutableMapping, Set, Tuple

from checkpoint.state_store import StateStore
from statebackends.heap_states import (
    HeapAggregatingState, HeapListState, HeapMapState, HeapReducingState, HeapValueState,
)
from statebackends.spec import StateKind, StateSpec

__all__ = ["KeyedStateBackend", "KeyGroupMismatchError", "VOID_NAMESPACE",
           "DEFAULT_SNAPSHOT_INTERVAL", "Slot"]

VOID_NAMESPACE = None
"""The namespace of state that is not window state."""

_ONE_VALUE_KINDS = (StateKind.VALUE, StateKind.REDUCING, StateKind.AGGREGATING)

DEFAULT_SNAPSHOT_INTERVAL = 10

Slot = Tuple[Hashable, Any]

_HEAP_STATES = {StateKind.VALUE: HeapValueState, StateKind.LIST: HeapListState,
                StateKind.MAP: HeapMapState}


class KeyGroupMismatchError(Exception):
    """State was written for a key outside the backend's key-group range."""


class KeyedStateBackend(ABC):
    """Keyed state of one operator instance over key groups ``start..end`` (inclusive).

    ``version`` is the version the contents reflect (-1: nothing written yet). Every
    ``snapshot_interval`` versions, ``write_version`` writes a snapshot.
    """

    def __init__(self, operator_id: str, key_group_range: Tuple[int, int],
                 max_parallelism: int, snapshot_interval: int = DEFAULT_SNAPSHOT_INTERVAL):
        start, end = key_group_range
        if not 0 <= start <= end < max_parallelism:
            raise ValueError(f"key group range {start}-{end} is not within "
                             f"[0, {max_parallelism}) (max parallelism)")
        if snapshot_interval < 1:
            raise ValueError(f"snapshot_interval must be >= 1, got {snapshot_interval}")
        self.operator_id = operator_id
        self.key_group_range = (start, end)
        self.max_parallelism = max_parallelism
        self.snapshot_interval = snapshot_interval
        self.version = -1
        self._current_key = None
        self._current_namespace = VOID_NAMESPACE
        self.current_slot: Slot = (None, VOID_NAMESPACE)
        """(current key, current namespace): the entry every state object addresses."""
        self._tables: Dict[str, MutableMapping[Slot, Any]] = {}
        self._dirty: Dict[str, Set[Slot]] = {}
        self._kinds: Dict[str, str] = {}  # state name -> its StateKind.stored_names entry
        self._states: Dict[str, Any] = {}

    # -- current key and namespace ---------------------------------------------

    def set_current_key(self, key: Hashable) -> None:
        """Makes every state object address ``key``'s entries."""
        self._current_key = key
        self.current_slot = (key, self._current_namespace)

    def get_current_key(self) -> Hashable:
        return self._current_key

    def set_current_namespace(self, namespace: Hashable) -> None:
        """Makes every state object address ``namespace`` (e.g. a window)."""
        self._current_namespace = namespace
        self.current_slot = (self._current_key, namespace)

    def get_current_namespace(self) -> Hashable:
        return self._current_namespace

    # -- state registration ----------------------------------------------------

    def state(self, spec: StateSpec):
        """The state object of ``spec`` (ValueState, ListState, ... as its kind says),
        created on first use. A name keeps one kind (and layout) for the backend's
        life, restored states included."""
        name = spec.name
        # Values of a state with time-to-live carry their timestamps: another layout,
        # which a restore must not mix up with the plain one.
        layout = spec.kind.stored_names[spec.with_ttl]
        registered = self._kinds.get(name)
        if registered is not None and registered != layout:
            raise TypeError(f"state {name!r} of operator {self.operator_id!r} is {registered} "
                            f"state; it cannot be used as {layout} state")
        state = self._states.get(name)
        if state is None:
            table, dirty = self._table_of(name)
            kind = spec.kind
            if kind is StateKind.REDUCING:
                state = HeapReducingState(name, self, table, dirty, spec.function)
            elif kind is StateKind.AGGREGATING:
                state = HeapAggregatingState(name, self, table, dirty, spec.function)
            else:
                state = _HEAP_STATES[kind](name, self, table, dirty)
            self._kinds[name] = layout
            self._states[name] = state
        return state

    def value_table(self, spec: StateSpec) -> Tuple[MutableMapping[Slot, Any], Set[Slot]]:
        """Direct access to the entries of a state with one value per slot (value,
        reducing or aggregating state: the value, the reduced value, the accumulator), for
        the engine's built-in keyed operators on their hot path: ``(table, dirty)`` with
        ``table`` mapping ``(key, namespace)`` to the value and ``dirty`` the set of changed
        slots. A writer adds every slot it changes to ``dirty`` and never stores None
        (absent = unset)."""
        if spec.kind not in _ONE_VALUE_KINDS or spec.with_ttl:
            raise TypeError(f"value_table() needs value, reducing or aggregating state "
                            f"without time-to-live, got {spec.kind.value} state {spec.name!r}")
        self.state(spec)  # registers the name as value state, or fails
        return self._table_of(spec.name)

    @abstractmethod
    def _table_of(self, name: str) -> Tuple[MutableMapping[Slot, Any], Set[Slot]]:
        """The entries of state ``name`` and its set of changed slots (created if new)."""

    # -- inspection --------------------------------------------------------------

    def entries(self) -> Iterator[Tuple[str, Hashable, Hashable, Any]]:
        """All stored (state name, key, namespace, value) entries, for tests and tools."""
        for name, table in list(self._tables.items()):
            for (key, namespace), value in table.items():
                yield name, key, namespace, value

    def state_kinds(self) -> Dict[str, str]:
        """State name -> stored kind ("value", "list", "value with TTL", ...; decoded by
        ``statebackends.spec.STORED_KINDS``) of registered and restored states."""
        return dict(self._kinds)

    def close(self) -> None:
        """Releases what the backend holds outside Python memory; unusable after."""

    # -- persistence -------------------------------------------------------------

    def _is_snapshot(self, version: int) -> bool:
        """Whether writing ``version`` writes a snapshot; fails if the state is already
        at or past it."""
        if version <= self.version:
            raise ValueError(f"operator {self.operator_id!r}: cannot write version {version}, "
                             f"the state is already at version {self.version}")
        return version % self.snapshot_interval == 0

    @abstractmethod
    def write_version(self, store: StateStore, version: int) -> None:
        """Persists this version: the changes since the last write, or (every
        ``snapshot_interval`` versions) a snapshot, after which older files of this
        range are pruned. If writing fails, discard this backend."""

    @classmethod
    @abstractmethod
    def restore(cls, store: StateStore, operator_id: str, key_group_range: Tuple[int, int],
                max_parallelism: int, version: int,
                snapshot_interval: int = DEFAULT_SNAPSHOT_INTERVAL) -> "KeyedStateBackend":
        """A backend holding ``key_group_range`` at ``version`` (empty at -1), from the
        newest snapshot <= version and the changelogs after it, of every stored
        key-group range that overlaps the requested one. (A backend may take keyword
        options of its own, as its constructor does.)"""
