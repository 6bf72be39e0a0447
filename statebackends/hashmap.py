"""Keyed state of one operator instance in Python dicts (Flink's HashMapStateBackend).

One backend holds every state of one operator over one key-group range. The
engine sets the current key per record; state objects obtained once from the
``get_*_state`` methods keep following it. After a batch, ``write_version``
persists the batch's changes (or, every ``snapshot_interval`` versions, all
state) through a ``checkpoint.state_store.StateStore``; ``restore`` rebuilds
a backend at any committed version, from files of any key-group ranges.

    backend = HashMapKeyedStateBackend("counter", (0, 63), 128)
    count = backend.get_state(ValueStateDescriptor("count", Types.LONG()))
    backend.set_current_key("a")
    count.update((count.value() or 0) + 1)
    backend.write_version(store, 0)
"""
from __future__ import annotations

from typing import Any, Dict, Hashable, Iterator, Set, Tuple

from checkpoint.state_store import CHANGELOG, SNAPSHOT, StateStore
from statebackends.heap_states import (
    HeapAggregatingState, HeapListState, HeapMapState, HeapReducingState, HeapValueState,
)
from statebackends.keygroups import assign_key_group

__all__ = ["HashMapKeyedStateBackend", "VOID_NAMESPACE", "KeyGroupMismatchError"]

VOID_NAMESPACE = None
"""The namespace of state that is not window state."""

DEFAULT_SNAPSHOT_INTERVAL = 10

_DESCRIPTOR_CLASS_NAMES = {
    "value": "ValueStateDescriptor",
    "list": "ListStateDescriptor",
    "map": "MapStateDescriptor",
    "reducing": "ReducingStateDescriptor",
    "aggregating": "AggregatingStateDescriptor",
}

Slot = Tuple[Hashable, Any]
# Per key group, per state name: (puts {slot: value}, deleted slots). A
# snapshot has the same shape with no deletes and replaces its key groups.
GroupChanges = Dict[str, Tuple[Dict[Slot, Any], list]]


class KeyGroupMismatchError(Exception):
    """State was written for a key outside the backend's key-group range."""


class HashMapKeyedStateBackend:
    """Keyed state of one operator instance over key groups ``start..end`` (inclusive).

    ``version`` is the version the contents reflect (-1: nothing written yet).
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
        self._tables: Dict[str, Dict[Slot, Any]] = {}
        self._dirty: Dict[str, Set[Slot]] = {}
        self._kinds: Dict[str, str] = {}
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

    def get_state(self, state_descriptor) -> HeapValueState:
        """The ValueState of a ValueStateDescriptor."""
        return self._state_for(state_descriptor, "value", "get_state")

    def get_list_state(self, state_descriptor) -> HeapListState:
        """The ListState of a ListStateDescriptor."""
        return self._state_for(state_descriptor, "list", "get_list_state")

    def get_map_state(self, state_descriptor) -> HeapMapState:
        """The MapState of a MapStateDescriptor."""
        return self._state_for(state_descriptor, "map", "get_map_state")

    def get_reducing_state(self, state_descriptor) -> HeapReducingState:
        """The ReducingState of a ReducingStateDescriptor."""
        return self._state_for(state_descriptor, "reducing", "get_reducing_state")

    def get_aggregating_state(self, state_descriptor) -> HeapAggregatingState:
        """The AggregatingState of an AggregatingStateDescriptor."""
        return self._state_for(state_descriptor, "aggregating", "get_aggregating_state")

    def _state_for(self, descriptor, kind: str, getter: str):
        name = descriptor.get_name()
        if getattr(descriptor, "state_kind", None) != kind:
            raise TypeError(f"{getter}() needs a {_DESCRIPTOR_CLASS_NAMES[kind]}, "
                            f"got {type(descriptor).__name__} {name!r}")
        # Values of a state with time-to-live carry their timestamps: another layout,
        # which a restore must not mix up with the plain one.
        layout = f"{kind} with TTL" if getattr(descriptor, "with_ttl", False) else kind
        registered = self._kinds.get(name)
        if registered is not None and registered != layout:
            raise TypeError(f"state {name!r} of operator {self.operator_id!r} is {registered} "
                            f"state; it cannot be used as {layout} state")
        state = self._states.get(name)
        if state is None:
            table, dirty = self._table_of(name)
            if kind == "reducing":
                state = HeapReducingState(name, self, table, dirty,
                                          descriptor.get_reduce_function())
            elif kind == "aggregating":
                state = HeapAggregatingState(name, self, table, dirty,
                                             descriptor.get_agg_function())
            else:
                state_class = {"value": HeapValueState, "list": HeapListState,
                               "map": HeapMapState}[kind]
                state = state_class(name, self, table, dirty)
            self._kinds[name] = layout
            self._states[name] = state
        return state

    def value_table(self, state_descriptor) -> Tuple[Dict[Slot, Any], Set[Slot]]:
        """Direct access to a ValueState's entries, for the engine's built-in keyed
        operators on their hot path: ``(table, dirty)`` with ``table`` mapping
        ``(key, namespace)`` to the value and ``dirty`` the set of changed slots. A writer
        adds every slot it changes to ``dirty`` and never stores None (absent = unset)."""
        self.get_state(state_descriptor)  # registers the name as value state, or fails
        return self._table_of(state_descriptor.get_name())

    def _table_of(self, name: str) -> Tuple[Dict[Slot, Any], Set[Slot]]:
        table = self._tables.get(name)
        if table is None:
            table = self._tables[name] = {}
            self._dirty[name] = set()
        return table, self._dirty[name]

    # -- inspection --------------------------------------------------------------

    def entries(self) -> Iterator[Tuple[str, Hashable, Hashable, Any]]:
        """All stored (state name, key, namespace, value) entries, for tests and tools."""
        for name, table in self._tables.items():
            for (key, namespace), value in table.items():
                yield name, key, namespace, value

    def state_kinds(self) -> Dict[str, str]:
        """State name -> kind ("value", "list", ...) of registered and restored states."""
        return dict(self._kinds)

    # -- persistence -------------------------------------------------------------

    def write_version(self, store: StateStore, version: int) -> None:
        """Persists this version: the changes since the last write, or a snapshot.

        A file is always written (even without changes) so that it replaces a
        stale file of a failed attempt at the same version. Versions divisible
        by ``snapshot_interval`` are full snapshots, after which older files of
        this range are pruned. If writing fails, discard this backend.
        """
        if version <= self.version:
            raise ValueError(f"operator {self.operator_id!r}: cannot write version {version}, "
                             f"the state is already at version {self.version}")
        is_snapshot = version % self.snapshot_interval == 0
        groups = self._grouped_entries(everything=is_snapshot)  # store.write pickles one at a time
        store.write(self.operator_id, self.key_group_range, version,
                    SNAPSHOT if is_snapshot else CHANGELOG, groups,
                    meta={"state_kinds": dict(self._kinds)})
        if is_snapshot:
            store.prune(self.operator_id, self.key_group_range, version)
        for dirty in self._dirty.values():
            dirty.clear()
        self.version = version

    def _grouped_entries(self, everything: bool) -> Dict[int, GroupChanges]:
        """Changed (or all) entries per key group; each key's group is computed once."""
        start, end = self.key_group_range
        key_group_of: Dict[Hashable, int] = {}
        groups: Dict[int, GroupChanges] = {}
        for name, table in self._tables.items():
            for slot in (table if everything else self._dirty[name]):
                key = slot[0]
                group = key_group_of.get(key)
                if group is None:
                    group = key_group_of[key] = assign_key_group(key, self.max_parallelism)
                    if not start <= group <= end:
                        raise KeyGroupMismatchError(
                            f"operator {self.operator_id!r} holds state for key {key!r} of key "
                            f"group {group}, outside its key groups {start}-{end}")
                changes = groups.get(group)
                if changes is None:
                    changes = groups[group] = {}
                puts_and_deletes = changes.get(name)
                if puts_and_deletes is None:
                    puts_and_deletes = changes[name] = ({}, [])
                if slot in table:
                    puts_and_deletes[0][slot] = table[slot]
                else:
                    puts_and_deletes[1].append(slot)
        return groups

    @classmethod
    def restore(cls, store: StateStore, operator_id: str, key_group_range: Tuple[int, int],
                max_parallelism: int, version: int,
                snapshot_interval: int = DEFAULT_SNAPSHOT_INTERVAL) -> "HashMapKeyedStateBackend":
        """A backend holding ``key_group_range`` at ``version`` (empty at -1).

        Reads the newest snapshot <= version and the changelogs after it, from
        every stored key-group range that overlaps the requested one, one key group
        at a time.
        """
        backend = cls(operator_id, key_group_range, max_parallelism, snapshot_interval)
        start, end = backend.key_group_range
        by_group: Dict[int, Dict[str, Dict[Slot, Any]]] = {}
        for state_file in store.files_to_restore(operator_id, backend.key_group_range, version):
            backend._kinds.update(store.read_meta(state_file)["state_kinds"])
            if state_file.kind == SNAPSHOT:
                file_start, file_end = state_file.key_group_range
                for group in range(max(start, file_start), min(end, file_end) + 1):
                    by_group.pop(group, None)
            for group, changes in store.iter_groups(state_file, backend.key_group_range):
                group_entries = by_group.setdefault(group, {})
                for name, (puts, deletes) in changes.items():
                    entries = group_entries.setdefault(name, {})
                    for slot in deletes:
                        entries.pop(slot, None)
                    entries.update(puts)
        for group_entries in by_group.values():
            for name, entries in group_entries.items():
                backend._table_of(name)[0].update(entries)
        backend.version = version
        return backend
