"""Keyed state of one operator instance in a local RocksDB (Flink's EmbeddedRocksDBStateBackend).

A drop-in alternative to ``HashMapKeyedStateBackend``: same constructor, same
state objects (the heap state classes, run over dict-like ``RocksDBTable``
views instead of dicts), and the same ``StateStore`` changelog/snapshot files,
so a job can switch between the two backends and rescale across them.

Every state name is one ``RocksDBTable``: a column of one ``rocksdict.Rdict``
in a temporary working directory owned by the backend (removed by ``close()``
or when the backend is garbage-collected). A RocksDB key is the table's
4-byte prefix followed by a memo-free pickle of the ``(key, namespace)`` slot;
a value is the pickled state value. Only the working directory holds state
values; Python memory holds the registrations, the dirty slots of the current
batch, and at most one recently read value per state name (see below).

Values read from RocksDB are fresh copies. The heap states change lists, maps
and accumulators in place after reading them and then record the slot in the
``dirty`` set; the set of a ``RocksDBTable`` is a ``DirtySlots`` that writes the
value last read for that slot back to RocksDB when the slot is recorded. So the
``value_table`` contract is the hashmap one: change ``table[slot]`` (or an object
just read from it) and add the slot to ``dirty``.

Slots are compared by their pickles, not by ``==``: ``1``, ``1.0`` and ``True``
are different keys here (the hashmap backend conflates them), and so are sets
or frozensets whose pickles differ in element order.
"""
from __future__ import annotations

import io
import pickle
import shutil
import struct
import tempfile
import weakref
from typing import Any, Hashable, Iterator, MutableMapping, Optional, Set, Tuple

from rocksdict import DbClosedError, Options, Rdict

from statebackends.hashmap import (
    DEFAULT_SNAPSHOT_INTERVAL, HashMapKeyedStateBackend, KeyGroupMismatchError,
    VOID_NAMESPACE,
)

__all__ = ["RocksDBKeyedStateBackend", "RocksDBTable", "DirtySlots", "VOID_NAMESPACE",
           "KeyGroupMismatchError"]

Slot = Tuple[Hashable, Any]

_PROTOCOL = 4
_MISSING = object()


def _encode_slot(slot: Slot) -> bytes:
    """A pickle without memo references, so equal slots give equal bytes whether or
    not they share sub-objects (pickle.dumps of ("a", "a") depends on identity)."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=_PROTOCOL)
    pickler.fast = True
    pickler.dump(slot)
    return buffer.getvalue()


class DirtySlots(set):
    """The changed slots of one table; ``add`` also writes back the table's value
    last read for that slot (which the caller may have changed in place)."""

    __slots__ = ("_table",)

    def __init__(self, table: "RocksDBTable"):
        super().__init__()
        self._table = table

    def add(self, slot) -> None:
        self._table.write_back(slot)
        set.add(self, slot)


class RocksDBTable(MutableMapping):
    """The entries ``(key, namespace) -> value`` of one state name, stored in RocksDB."""

    def __init__(self, db: Rdict, table_id: int):
        self._db = db
        self._prefix = struct.pack(">I", table_id)
        self._prefix_length = len(self._prefix)
        self._end = struct.pack(">I", table_id + 1)
        self._read_slot: Any = _MISSING  # the slot and value last returned by a read
        self._read_value: Any = None
        self.dirty = DirtySlots(self)

    def _db_key(self, slot: Slot) -> bytes:
        return self._prefix + _encode_slot(slot)

    def _remember(self, slot, value) -> None:
        self._read_slot, self._read_value = slot, value

    def _forget(self, slot) -> None:
        if self._read_slot == slot:
            self._read_slot, self._read_value = _MISSING, None

    def forget_read_value(self) -> None:
        self._read_slot, self._read_value = _MISSING, None

    def write_back(self, slot) -> None:
        """Stores the value last read for ``slot``, if it was the last slot read."""
        if self._read_slot is not _MISSING and self._read_slot == slot:
            self._db[self._db_key(slot)] = pickle.dumps(self._read_value, _PROTOCOL)
            self._read_slot, self._read_value = _MISSING, None

    # -- mapping ---------------------------------------------------------------

    def get(self, slot, default=None):
        data = self._db.get(self._db_key(slot))
        if data is None:
            return default
        value = pickle.loads(data)
        self._remember(slot, value)
        return value

    def __getitem__(self, slot):
        value = self.get(slot, _MISSING)
        if value is _MISSING:
            raise KeyError(slot)
        return value

    def __setitem__(self, slot, value) -> None:
        self._db[self._db_key(slot)] = pickle.dumps(value, _PROTOCOL)
        self._forget(slot)

    def __delitem__(self, slot) -> None:
        db_key = self._db_key(slot)
        if self._db.get(db_key) is None:
            raise KeyError(slot)
        del self._db[db_key]
        self._forget(slot)

    def pop(self, slot, default=_MISSING):
        db_key = self._db_key(slot)
        data = self._db.get(db_key)
        if data is None:
            if default is _MISSING:
                raise KeyError(slot)
            return default
        del self._db[db_key]
        self._forget(slot)
        return pickle.loads(data)

    def __contains__(self, slot) -> bool:
        return self._db.get(self._db_key(slot)) is not None

    def _raw_items(self) -> Iterator[Tuple[bytes, bytes]]:
        end = self._end
        for db_key, data in self._db.items(from_key=self._prefix):
            if db_key >= end:
                return
            yield db_key, data

    def __iter__(self) -> Iterator[Slot]:
        n = self._prefix_length
        for db_key, _ in self._raw_items():
            yield pickle.loads(db_key[n:])

    def items(self) -> Iterator[Tuple[Slot, Any]]:  # type: ignore[override]
        n = self._prefix_length
        for db_key, data in self._raw_items():
            yield pickle.loads(db_key[n:]), pickle.loads(data)

    def __len__(self) -> int:
        return sum(1 for _ in self._raw_items())

    def update(self, entries=(), **kwargs) -> None:  # type: ignore[override]
        pairs = entries.items() if hasattr(entries, "items") else entries
        for slot, value in pairs:
            self[slot] = value
        for slot, value in kwargs.items():
            self[slot] = value

    def __repr__(self) -> str:
        return f"RocksDBTable(prefix={self._prefix.hex()})"


def _close_db(db: Rdict, directory: str) -> None:
    try:
        db.close()
    except DbClosedError:
        pass
    finally:
        shutil.rmtree(directory, ignore_errors=True)


class RocksDBKeyedStateBackend(HashMapKeyedStateBackend):
    """Keyed state of one operator instance over key groups ``start..end`` (inclusive),
    stored in a RocksDB under a fresh temporary directory (in ``local_dir`` if given).

    Same API and file format as ``HashMapKeyedStateBackend``; ``value_table`` returns
    ``(RocksDBTable, DirtySlots)``. Call ``close()`` when done (or let it be collected).
    """

    def __init__(self, operator_id: str, key_group_range: Tuple[int, int],
                 max_parallelism: int, snapshot_interval: int = DEFAULT_SNAPSHOT_INTERVAL,
                 local_dir: Optional[str] = None):
        super().__init__(operator_id, key_group_range, max_parallelism, snapshot_interval)
        self.working_dir = tempfile.mkdtemp(prefix="rocksdb-state-", dir=local_dir)
        options = Options(raw_mode=True)
        options.create_if_missing(True)
        self._db = Rdict(self.working_dir, options)
        self._finalizer = weakref.finalize(self, _close_db, self._db, self.working_dir)

    def _table_of(self, name: str) -> Tuple[RocksDBTable, Set[Slot]]:
        table = self._tables.get(name)
        if table is None:
            if self._finalizer is not None and not self._finalizer.alive:
                raise RuntimeError(f"state backend of operator {self.operator_id!r} is closed")
            table = self._tables[name] = RocksDBTable(self._db, len(self._tables))
            self._dirty[name] = table.dirty
        return table, self._dirty[name]

    def close(self) -> None:
        """Closes the RocksDB and deletes its working directory; the backend is unusable after."""
        self._finalizer()

    def write_version(self, store, version: int) -> None:
        super().write_version(store, version)
        for table in self._tables.values():
            table.forget_read_value()

    @classmethod
    def restore(cls, store, operator_id: str, key_group_range: Tuple[int, int],
                max_parallelism: int, version: int,
                snapshot_interval: int = DEFAULT_SNAPSHOT_INTERVAL) -> "RocksDBKeyedStateBackend":
        """A backend holding ``key_group_range`` at ``version`` (empty at -1), loaded into
        a fresh RocksDB from the files of either backend, of any key-group ranges."""
        return super().restore(store, operator_id, key_group_range, max_parallelism,
                               version, snapshot_interval)
