"""The five kinds of keyed state over dict-like tables: the state objects of every
backend (plain dicts in the hashmap backend, ``RocksDBTable`` views in the RocksDB one).

Each state object reads its entry ``table[backend.current_slot]``, where the
slot is the (current key's identity, current namespace) pair the backend keeps, and
records every changed slot in ``dirty`` for the next changelog. A stored value
of None (or an empty list or map) never stays in a table: absent means empty.

They implement the interfaces of ``api.datastream.state`` by duck typing, since
state backends do not import the API.
"""
from __future__ import annotations

from typing import Any, Dict, Hashable, Iterable, Set, Tuple

__all__ = ["MapAccess", "HeapValueState", "HeapListState", "HeapMapState", "HeapReducingState",
           "HeapAggregatingState"]

Slot = Tuple[Hashable, Any]


class _HeapState:
    __slots__ = ("name", "_backend", "_table", "_dirty")

    def __init__(self, name: str, backend, table: Dict[Slot, Any], dirty: Set[Slot]):
        self.name = name
        self._backend = backend
        self._table = table
        self._dirty = dirty

    def clear(self) -> None:
        """Removes the entry of the current key."""
        slot = self._backend.current_slot
        if slot in self._table:
            del self._table[slot]
            self._dirty.add(slot)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class _MergingHeapState(_HeapState):
    """State whose entries of several namespaces can be merged (merging windows)."""

    __slots__ = ()

    def _combine(self, a, b):
        raise NotImplementedError

    def merge_namespaces(self, target, sources) -> None:
        """Folds the current key's entries of the ``sources`` namespaces into ``target``
        (Flink's InternalMergingState.mergeNamespaces); the sources become empty."""
        key = self._backend.current_slot[0]
        table, dirty = self._table, self._dirty
        merged = None
        for namespace in sources:
            slot = (key, namespace)
            value = table.pop(slot, None)
            if value is not None:
                dirty.add(slot)
                merged = value if merged is None else self._combine(merged, value)
        if merged is None:
            return
        slot = (key, target)
        current = table.get(slot)
        table[slot] = merged if current is None else self._combine(current, merged)
        dirty.add(slot)


class HeapValueState(_HeapState):
    """ValueState: one value per key, None when unset."""

    __slots__ = ()

    def value(self):
        return self._table.get(self._backend.current_slot)

    def update(self, value) -> None:
        if value is None:
            self.clear()
            return
        slot = self._backend.current_slot
        self._table[slot] = value
        self._dirty.add(slot)


class HeapListState(_MergingHeapState):
    """ListState: get() returns a copy of the list, [] when empty."""

    __slots__ = ()

    def _combine(self, a, b):
        return a + b

    def get(self) -> list:
        values = self._table.get(self._backend.current_slot)
        return [] if values is None else list(values)

    def __iter__(self):
        return iter(self.get())

    def add(self, value) -> None:
        slot = self._backend.current_slot
        values = self._table.get(slot)
        if values is None:
            self._table[slot] = [value]
        else:
            values.append(value)
        self._dirty.add(slot)

    def add_all(self, values: Iterable) -> None:
        values = list(values)
        if not values:
            return
        slot = self._backend.current_slot
        current = self._table.get(slot)
        if current is None:
            self._table[slot] = values
        else:
            current.extend(values)
        self._dirty.add(slot)

    def update(self, values: Iterable) -> None:
        values = list(values)
        if not values:
            self.clear()
            return
        slot = self._backend.current_slot
        self._table[slot] = values
        self._dirty.add(slot)


class MapAccess:
    """The dict-style access of PyFlink's MapState (``state[k]``, ``k in state``,
    iteration over keys), through get/put/remove/contains/keys."""

    __slots__ = ()

    def __getitem__(self, key):
        return self.get(key)

    def __setitem__(self, key, value) -> None:
        self.put(key, value)

    def __delitem__(self, key) -> None:
        self.remove(key)

    def __contains__(self, key) -> bool:
        return self.contains(key)

    def __iter__(self):
        return iter(self.keys())


class HeapMapState(_HeapState, MapAccess):
    """MapState: get() of a missing key is None; contains() is False for None values."""

    __slots__ = ()

    def _map(self) -> dict:
        return self._table.get(self._backend.current_slot) or {}

    def get(self, key):
        entries = self._table.get(self._backend.current_slot)
        return None if entries is None else entries.get(key)

    def put(self, key, value) -> None:
        slot = self._backend.current_slot
        entries = self._table.get(slot)
        if entries is None:
            self._table[slot] = {key: value}
        else:
            entries[key] = value
        self._dirty.add(slot)

    def put_all(self, dict_value) -> None:
        pairs = dict_value.items() if hasattr(dict_value, "items") else dict_value
        for key, value in pairs:
            self.put(key, value)

    def remove(self, key) -> None:
        slot = self._backend.current_slot
        entries = self._table.get(slot)
        if entries is None or key not in entries:
            return
        del entries[key]
        if not entries:
            del self._table[slot]
        self._dirty.add(slot)

    def contains(self, key) -> bool:
        return self.get(key) is not None

    def items(self) -> list:
        return list(self._map().items())

    def keys(self) -> list:
        return list(self._map())

    def values(self) -> list:
        return list(self._map().values())

    def is_empty(self) -> bool:
        return self._backend.current_slot not in self._table


class HeapReducingState(_MergingHeapState):
    """ReducingState: keeps ``reduce(reduce(v1, v2), v3)...``; get() is None when empty."""

    __slots__ = ("_reduce",)

    def __init__(self, name, backend, table, dirty, reduce_function):
        super().__init__(name, backend, table, dirty)
        self._reduce = getattr(reduce_function, "reduce", reduce_function)

    def _combine(self, a, b):
        return self._reduce(a, b)

    def get(self):
        return self._table.get(self._backend.current_slot)

    def add(self, value) -> None:
        slot = self._backend.current_slot
        current = self._table.get(slot)
        reduced = value if current is None else self._reduce(current, value)
        if reduced is None:
            self.clear()
            return
        self._table[slot] = reduced
        self._dirty.add(slot)


class HeapAggregatingState(_MergingHeapState):
    """AggregatingState: stores the accumulator; get() is ``get_result(acc)`` or None."""

    __slots__ = ("_create_accumulator", "_add", "_get_result", "_merge")

    def __init__(self, name, backend, table, dirty, agg_function):
        super().__init__(name, backend, table, dirty)
        self._create_accumulator = agg_function.create_accumulator
        self._add = agg_function.add
        self._get_result = agg_function.get_result
        self._merge = agg_function.merge

    def _combine(self, a, b):
        return self._merge(a, b)

    def get(self):
        accumulator = self._table.get(self._backend.current_slot)
        return None if accumulator is None else self._get_result(accumulator)

    def add(self, value) -> None:
        if value is None:  # as in PyFlink: adding None clears the state
            self.clear()
            return
        slot = self._backend.current_slot
        accumulator = self._table.get(slot)
        if accumulator is None:
            accumulator = self._create_accumulator()
        accumulator = self._add(value, accumulator)
        if accumulator is None:
            self.clear()
            return
        self._table[slot] = accumulator
        self._dirty.add(slot)
