"""Keyed state of one operator instance in an embedded RocksDB (Flink's
EmbeddedRocksDBStateBackend): state may be far larger than memory.

A drop-in alternative to ``HashMapKeyedStateBackend``, its sibling under
``statebackends.base.KeyedStateBackend``: the same state objects (the heap state
classes, run over dict-like ``RocksDBTable`` views instead of dicts), the same
registration (the base's), and the same ``StateStore`` files, so a job can switch
between the two backends and rescale across them.

Layout of one RocksDB key (all states of the instance share one database)::

    key group (2 bytes, big-endian) | state id (2 bytes) | serialize_key([key, namespace])

so one key group, or a range of them, is one contiguous run of keys: a restore at
another parallelism copies exactly its groups, and a full snapshot reads group by
group. Keys and values are msgpack where the type allows, pickle otherwise, where the
job allows pickled state (``core.codec``, ``statebackends.base``): a
table reads pickled values only once its state is registered as pickled (before, it
reads them as ``Pickled`` placeholders, written back unchanged). Keys compare by these
bytes, as on the hashmap backend (its slots hold a key's ``key_identity``, and so do the
slots a table reads back): ``1``, ``1.0`` and ``True`` are three entries.

Python memory holds the registrations, the slots changed in the current batch, the
value last read per state, and the batch's writes not yet in RocksDB (at most
``_WRITE_BUFFER_BYTES``; reads look there first, and a key written many times in a
batch reaches RocksDB once, in a WriteBatch). RocksDB's memory is bounded by its block
cache (shared by the process's backends unless ``block_cache_size`` is given; index and
filter blocks are charged to it) and two write buffers of ``write_buffer_size`` per
backend. The write-ahead log is off: the ``StateStore`` files are the durable copy.

Persistence, per ``write_version``: a changelog of the batch's changed slots, and
every ``snapshot_interval`` versions a snapshot. Without incremental checkpointing
the snapshot is the hashmap backend's full-snapshot file, read from RocksDB and
written key group by key group (memory holds one group, and its encoded copy). With
``incremental=True`` it is a RocksDB checkpoint: the memtable is flushed, the SST
files are hard-linked into the store's shared directory of the range (only files the
previous snapshot did not already share), and a small manifest lists them, with the
database's few small metadata files inline. Restoring such a snapshot at the same
key-group range (or a sub-range of it) hard-links the files into a fresh working
directory and opens them, without reading any entry; other ranges read only their
key groups from it. The hashmap backend cannot read incremental snapshots: to switch
back, restore on a version whose base snapshot is a full one.

Values read from RocksDB are fresh copies. The heap states change lists, maps and
accumulators in place after reading them and then record the slot in ``dirty``;
``dirty.add(slot)`` writes the value last read for that slot back to RocksDB. So the
``value_table`` contract is the hashmap one: change ``table[slot]`` (or an object
just read from it) and add the slot to ``dirty``.
"""
from __future__ import annotations

import os
import shutil
import struct
import tempfile
import uuid
import weakref
from collections.abc import MutableMapping
from typing import Any, Callable, Dict, Hashable, Iterator, Optional, Tuple

from rocksdict import (
    AccessType, BlockBasedOptions, Cache, Checkpoint, DbClosedError, Options, Rdict,
    WriteBatch, WriteOptions,
)

from checkpoint import storage
from checkpoint.files import CorruptFileError
from checkpoint.state_store import (
    CHANGELOG, INCREMENTAL, SNAPSHOT, StateFile, StateFileContent, StateStore, check_file_name,
)
from statebackends.base import (
    DEFAULT_SNAPSHOT_INTERVAL, KeyedStateBackend, KeyGroupMismatchError, Slot,
)
from core.keygroups import KeyType
from core.private_paths import open_private
from core.codec import (
    PAIR_HEADER, PickledDataError, data_key_item_bytes, deserialize, deserialize_data,
    deserialize_deferred, key_identity, key_item_bytes, serialize_data, serialize_data_key,
    serialize_key, serialize_value, user_key,
)

__all__ = ["RocksDBKeyedStateBackend", "RocksDBTable", "DirtySlots",
           "DEFAULT_BLOCK_CACHE_SIZE", "DEFAULT_WRITE_BUFFER_SIZE"]

DEFAULT_BLOCK_CACHE_SIZE = 64 << 20
"""Bytes of the block cache shared by the process's backends that set no size of their own."""
DEFAULT_WRITE_BUFFER_SIZE = 4 << 20
"""Bytes of one memtable; a backend has at most two."""
MAX_KEY_GROUPS = 1 << 15  # Flink's upper bound of max parallelism; fits the 2-byte prefix

_U16 = struct.Struct(">H")
_END = b"\xff\xff\xff"  # after every key
_BATCH_ENTRIES = 10_000  # entries per WriteBatch while restoring
_MISSING = object()
_KEY_MEMO_SIZE = 1 << 14  # keys whose group and bytes a backend remembers
_WRITE_BUFFER_BYTES = 4 << 20  # a backend's writes held in Python before a WriteBatch
_ENTRY_OVERHEAD = 150  # Python's bytes per buffered write, besides the key and value
_NONE_ITEM = key_item_bytes(None)
_shared_cache: Optional[Cache] = None


def _group_prefix(group: int) -> bytes:
    return _U16.pack(group)


def _upper(group: int) -> bytes:
    """The first key after key group ``group``."""
    return _U16.pack(group + 1) if group + 1 < 1 << 16 else _END


def _scan(db: Rdict, lower: bytes, upper: bytes,
          damaged: Callable[[Exception], Exception] = lambda e: e
          ) -> Iterator[Tuple[bytes, bytes]]:
    """The entries with ``lower <= key < upper``, in key order; an error reading them
    (a damaged block) is raised as ``damaged(error)``."""
    # (Not ReadOptions.set_iterate_upper_bound: with rocksdict 0.3.29 it loses entries
    # still in the memtable.)
    last = None
    try:
        for db_key, data in db.items(from_key=lower):
            if db_key >= upper:
                return
            last = db_key
            yield db_key, data
        # The entries ran out: at the end of the database, or at an error, which items()
        # does not raise. An iterator stepping past the last entry read tells which.
        iterator = db.iter()
        iterator.seek(lower if last is None else last)
        if last is not None and iterator.valid():
            iterator.next()
        if not iterator.valid():
            iterator.status()
    except Exception as e:
        raise damaged(e) from None


class DirtySlots(dict):
    """The changed slots of one table since the last ``write_version`` (by their stored
    key); ``add`` also writes back the table's value
    last read for that slot (which the caller may have changed in place)."""

    __slots__ = ("_table",)

    def __init__(self, table: "RocksDBTable"):
        super().__init__()
        self._table = table

    def add(self, slot: Slot) -> None:
        self[self._table.write_back(slot)] = slot


class RocksDBTable(MutableMapping):
    """The entries ``(key, namespace) -> value`` of one state name, stored in RocksDB."""

    def __init__(self, backend: "RocksDBKeyedStateBackend", name: str, state_id: int):
        self._backend = backend
        self._writes = backend.writes
        self.name = name
        self.state_id = _U16.pack(state_id)
        self._slot: Any = _MISSING  # the last slot db_key encoded, and its db key
        self._db_key = b""
        self._read_key: Optional[bytes] = None  # db key and value of the last read
        self._read_value: Any = None
        self.dirty = DirtySlots(self)
        # Until the job registers the state: pickled values pass through as placeholders.
        self._serialize = backend._value_writer(name)
        self._deserialize = deserialize_deferred
        self._pickled_in: Optional[str] = None  # a restored file that may hold pickles

    def declare(self, pickled: bool, pickled_in: Optional[str]) -> None:
        """The job registered the state: its values may be pickled if ``pickled``; pickled
        data from ``pickled_in`` (a restored file) is refused when read otherwise."""
        self._serialize = serialize_value if pickled else serialize_data
        self._deserialize = deserialize if pickled else deserialize_data
        self._pickled_in = pickled_in

    def _decoded(self, data: bytes) -> Any:
        try:
            return self._deserialize(data)
        except PickledDataError:
            raise self._backend.refused(self.name, self._pickled_in) from None

    def db_key(self, slot: Slot) -> bytes:
        # (A record's get, put and dirty.add pass the same slot: the hot paths check
        # `slot is self._slot` before calling this.)
        if slot is self._slot:
            return self._db_key
        group, body = self._backend.encode_slot(slot)
        self._slot, self._db_key = slot, group + self.state_id + body
        return self._db_key

    def stored_db_key(self, group: int, slot: Slot) -> bytes:
        """The db key of ``slot`` in the key group a stored file has it in (as an
        incremental snapshot's entries keep theirs: state of another placement is
        consistent until ``restore`` regroups it)."""
        return _group_prefix(group) + self.state_id + self._backend.encode_slot(slot)[1]

    def forget_read_value(self) -> None:
        self._read_key = self._read_value = None

    def write_back(self, slot: Slot) -> bytes:
        """Stores the value last read for ``slot``, if it was the last slot read;
        returns the slot's db key."""
        db_key = self._db_key if slot is self._slot else self.db_key(slot)
        if db_key == self._read_key:
            self._writes.stage(db_key, self._serialize(self._read_value))
            self._read_key = self._read_value = None
        return db_key

    # -- mapping ---------------------------------------------------------------

    def get(self, slot, default=None):
        db_key = self._db_key if slot is self._slot else self.db_key(slot)
        data = self._writes.read(db_key)
        if data is None:
            return default
        value = self._decoded(data)
        self._read_key, self._read_value = db_key, value
        return value

    def __getitem__(self, slot):
        value = self.get(slot, _MISSING)
        if value is _MISSING:
            raise KeyError(slot)
        return value

    def __setitem__(self, slot, value) -> None:
        db_key = self._db_key if slot is self._slot else self.db_key(slot)
        try:
            data = self._serialize(value)
        except Exception as e:
            raise self._backend.unstorable(self.name, slot, e) from e
        self._writes.stage(db_key, data)
        if db_key == self._read_key:
            self._read_key = self._read_value = None

    def __delitem__(self, slot) -> None:
        if self.pop(slot, _MISSING) is _MISSING:
            raise KeyError(slot)

    def pop(self, slot, default=_MISSING):
        db_key = self.db_key(slot)
        writes = self._writes
        data = writes.read(db_key)
        if data is None:
            if default is _MISSING:
                raise KeyError(slot)
            return default
        writes.stage(db_key, None)
        if db_key == self._read_key:
            self._read_key = self._read_value = None
        return self._decoded(data)

    def __contains__(self, slot) -> bool:
        return self._writes.read(self.db_key(slot)) is not None

    def _raw_items(self) -> Iterator[Tuple[bytes, bytes]]:
        self._writes.flush()
        db, state_id = self._backend.db, self.state_id
        start, end = self._backend.key_group_range
        for group in range(start, end + 1):
            prefix = _group_prefix(group) + state_id
            yield from _scan(db, prefix, prefix + b"\xff", self._backend.damaged)

    def _slot_of(self, db_key: bytes) -> Slot:
        try:
            return self._backend.read_slot(db_key)
        except PickledDataError:  # (keys of an adopted snapshot are read only here)
            raise self._backend.refused(None, self._pickled_in) from None

    def __iter__(self) -> Iterator[Slot]:
        for db_key, _ in self._raw_items():
            yield self._slot_of(db_key)

    def items(self) -> Iterator[Tuple[Slot, Any]]:  # type: ignore[override]
        for db_key, data in self._raw_items():
            yield self._slot_of(db_key), self._decoded(data)

    def __len__(self) -> int:
        return sum(1 for _ in self._raw_items())

    def __repr__(self) -> str:
        return f"RocksDBTable({self.name!r})"


def _snapshot_groups(backend: "RocksDBKeyedStateBackend"
                     ) -> Iterator[Tuple[int, Dict[str, Tuple[Dict[Slot, Any], list]]]]:
    """All entries of a backend per key group, in the hashmap snapshot's shape
    ``(group, {name: ({slot: value}, [])})``, read from RocksDB in one scan, one group
    held at a time (pickled values as placeholders: written back as they are)."""
    names = {table.state_id: name for name, table in backend._tables.items()}
    start, end = backend.key_group_range
    group, changes = None, {}
    for db_key, data in _scan(backend.db, _group_prefix(start), _upper(end), backend.damaged):
        key_group = _U16.unpack_from(db_key)[0]
        if key_group != group:
            if changes:
                yield group, changes
            group, changes = key_group, {}
        name = names[db_key[2:4]]
        puts = changes.get(name)
        if puts is None:
            puts = changes[name] = ({}, [])
        puts[0][backend.read_slot(db_key)] = deserialize_deferred(data)
    if changes:
        yield group, changes


def _open(path: str, options: Options, read_only: bool = False) -> Rdict:
    if read_only:
        return Rdict(path, options, access_type=AccessType.read_only())
    db = Rdict(path, options)
    write_options = WriteOptions()
    write_options.disable_wal = True  # the StateStore files are the durable copy
    db.set_write_options(write_options)
    return db


def _close(db: Rdict) -> None:
    try:
        db.close()
    except DbClosedError:
        pass


def _close_and_remove(db: Rdict, directory: str) -> None:
    try:
        _close(db)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _materialize(content: StateFileContent, directory: str) -> None:
    """Lays out the database files of an incremental snapshot in ``directory``."""
    storage.makedirs(directory)
    for local_name, path in content.shared_files.items():
        storage.copy(path, os.path.join(directory, local_name))
    for name, data in content.meta["db_files"].items():
        check_file_name(directory, name)  # (a name read from the snapshot's manifest)
        with open_private(os.path.join(directory, name), "wb") as f:
            f.write(data)


class _StoredNames:
    """Turns RocksDB's errors about the files of a database laid out from an incremental
    snapshot into CorruptFileErrors naming the stored files, not the working copies."""

    def __init__(self, directory: str, state_file: StateFile, content: StateFileContent):
        self.snapshot = state_file.path
        # working copy -> (the stored file, how an error names it)
        self._names = {os.path.join(directory, local_name): (path, path)
                       for local_name, path in content.shared_files.items()}
        for name in content.meta["db_files"]:  # (stored inside the snapshot file)
            self._names[os.path.join(directory, name)] = (
                state_file.path, f"{state_file.path}'s {name}")

    def error(self, error: Exception, doing: str) -> Optional[CorruptFileError]:
        """``error`` of RocksDB ``doing`` something, as a CorruptFileError naming the
        stored files, if it names a working copy of one (else None)."""
        reason = str(error)
        named = [local for local in self._names if local in reason]
        for local in named:
            reason = reason.replace(local, self._names[local][1])
        return named and CorruptFileError(self._names[named[0]][0],
                                          f"RocksDB cannot {doing}: {reason}") or None


def _open_snapshot(directory: str, options: Options, stored: _StoredNames,
                   read_only: bool = False) -> Rdict:
    """The database of an incremental snapshot laid out in ``directory``; if RocksDB
    refuses it (a damaged file), CorruptFileError naming the stored files."""
    try:
        return _open(directory, options, read_only)
    except Exception as e:
        doing = "open the incremental snapshot"
        raise stored.error(e, doing) or CorruptFileError(
            stored.snapshot, f"RocksDB cannot {doing}: {e}") from None


class RocksDBKeyedStateBackend(KeyedStateBackend):
    """Keyed state of one operator instance over key groups ``start..end`` (inclusive),
    stored in a RocksDB under a fresh temporary directory (in ``local_dir`` if given).

    Same API and file format as ``HashMapKeyedStateBackend``; ``value_table`` returns
    ``(RocksDBTable, DirtySlots)``. ``incremental`` makes snapshots incremental RocksDB
    checkpoints (the class attribute is the default). Call ``close()`` when done (or let
    it be collected).
    """

    incremental = False

    def __init__(self, operator_id: str, key_group_range: Tuple[int, int],
                 max_parallelism: int, snapshot_interval: int = DEFAULT_SNAPSHOT_INTERVAL,
                 local_dir: Optional[str] = None, incremental: Optional[bool] = None,
                 block_cache_size: Optional[int] = None,
                 write_buffer_size: int = DEFAULT_WRITE_BUFFER_SIZE,
                 allow_pickled: bool = True, pickled_keys: bool = True,
                 key_type: Optional[KeyType] = None,
                 _initial_files: Optional[Tuple[StateFile, StateFileContent]] = None):
        if max_parallelism > MAX_KEY_GROUPS:
            raise ValueError(f"operator {operator_id!r}: the RocksDB state backend supports "
                             f"a max parallelism of at most {MAX_KEY_GROUPS}, "
                             f"got {max_parallelism}")
        super().__init__(operator_id, key_group_range, max_parallelism, snapshot_interval,
                         allow_pickled, pickled_keys, key_type)
        self._key_item = key_item_bytes if self.pickled_keys else data_key_item_bytes
        self._slot_bytes = serialize_key if self.pickled_keys else serialize_data_key
        if incremental is not None:
            self.incremental = incremental
        self._options = self._make_options(block_cache_size, write_buffer_size)
        self.working_dir = tempfile.mkdtemp(prefix="rocksdb-state-", dir=local_dir)
        self._db_dir = os.path.join(self.working_dir, "db")
        self._stored: Optional[_StoredNames] = None  # of an adopted snapshot's files
        if _initial_files is None:
            self.db = _open(self._db_dir, self._options)
        else:  # restore() adopts an incremental snapshot
            self._stored = _StoredNames(self._db_dir, *_initial_files)
            try:
                _materialize(_initial_files[1], self._db_dir)
                self.db = _open_snapshot(self._db_dir, self._options, self._stored)
            except BaseException:
                shutil.rmtree(self.working_dir, ignore_errors=True)
                raise
        self.writes = _WriteBuffer(self.db, self.damaged)
        self._finalizer = weakref.finalize(self, _close_and_remove, self.db, self.working_dir)
        self._state_ids: Dict[str, int] = {}
        self._encoded_slot: Any = _MISSING  # encode_slot's last slot and its encoding
        self._encoded: Tuple[bytes, bytes] = (b"", b"")
        self._key_codes: Dict[Hashable, Tuple[bytes, Optional[bytes]]] = {}
        self._instance = uuid.uuid4().hex[:12]
        # Local SST name -> its name in self._shared_dir, for files a snapshot shared.
        self._shared_names: Dict[str, str] = {}
        self._shared_dir: Optional[str] = None

    @staticmethod
    def _make_options(block_cache_size: Optional[int], write_buffer_size: int) -> Options:
        global _shared_cache
        if block_cache_size is None:
            if _shared_cache is None:
                _shared_cache = Cache(DEFAULT_BLOCK_CACHE_SIZE)
            cache = _shared_cache
        else:
            cache = Cache(block_cache_size)
        table_options = BlockBasedOptions()
        table_options.set_block_cache(cache)
        table_options.set_bloom_filter(10, False)
        table_options.set_cache_index_and_filter_blocks(True)
        table_options.set_pin_l0_filter_and_index_blocks_in_cache(True)
        options = Options(raw_mode=True)
        options.create_if_missing(True)
        options.set_block_based_table_factory(table_options)
        options.set_write_buffer_size(write_buffer_size)
        options.set_max_write_buffer_number(2)
        options.set_keep_log_file_num(1)
        return options

    # -- tables ----------------------------------------------------------------

    def _table_of(self, name: str) -> Tuple[RocksDBTable, DirtySlots]:
        table = self._tables.get(name)
        if table is None:
            if not self._finalizer.alive:
                raise RuntimeError(f"state backend of operator {self.operator_id!r} is closed")
            state_id = self._state_ids.get(name)
            if state_id is None:
                state_id = self._state_ids[name] = max(self._state_ids.values(), default=-1) + 1
                if state_id >= 1 << 16:
                    raise ValueError(f"operator {self.operator_id!r} has more than 65536 "
                                     "state names")
            table = self._tables[name] = RocksDBTable(self, name, state_id)
            self._dirty[name] = table.dirty
        return table, self._dirty[name]

    def encode_slot(self, slot: Slot) -> Tuple[bytes, bytes]:
        """(key-group prefix, serialized slot). The current slot's is computed once, and
        a str or int key's group and bytes once while it stays in a bounded memo (equal
        keys of these exact types have equal bytes; ``1`` and ``True`` do not)."""
        if slot is self._encoded_slot:
            return self._encoded
        key, namespace = slot
        body = None
        if type(key) is str or type(key) is int:
            codes = self._key_codes.get(key)
            if codes is None:
                if len(self._key_codes) >= _KEY_MEMO_SIZE:
                    self._key_codes.clear()
                codes = self._key_codes[key] = (self._group_of(key), self._key_item(key))
            group, key_bytes = codes
            if key_bytes is not None:
                namespace_bytes = _NONE_ITEM if namespace is None else self._key_item(namespace)
                if namespace_bytes is not None:
                    body = PAIR_HEADER + key_bytes + namespace_bytes
        else:
            key = user_key(key)
            group = self._group_of(key)
        if body is None:
            try:
                body = self._slot_bytes([key, namespace])
            except Exception as e:
                raise self.unstorable(None, slot, e, in_key=True) from e
        encoded = (group, body)
        self._encoded_slot, self._encoded = slot, encoded
        return encoded

    def damaged(self, error: Exception) -> Exception:
        """``error`` of a read from the database; a CorruptFileError naming the stored
        file if it names a working copy of an adopted snapshot's file."""
        return self._stored and self._stored.error(error, "read it") or error

    def read_slot(self, db_key: bytes) -> Slot:
        """The slot of a db key: its key's ``key_identity`` and its namespace."""
        key, namespace = self._key_reader(db_key[4:])
        return key_identity(key), namespace

    def _group_of(self, key) -> bytes:
        return _group_prefix(self.key_grouping.key_group(key))

    def _declare(self, name: str, pickled: bool) -> None:
        self._values_pickled[name] = pickled
        self._table_of(name)[0].declare(pickled, self._pickled_in.pop(name, None))

    def close(self) -> None:
        """Closes the RocksDB and deletes its working directory; the backend is unusable after."""
        self._finalizer()

    # -- persistence -------------------------------------------------------------

    def write_version(self, store: StateStore, version: int) -> None:
        """Persists this version: the changes since the last write, or a snapshot (full, or
        incremental if enabled). If writing fails, discard this backend."""
        is_snapshot = self._is_snapshot(version)
        self.writes.flush()
        changes = self._changed_groups(read_values=not is_snapshot)
        meta = self._file_meta()
        if not is_snapshot:
            store.write(self.operator_id, self.key_group_range, version, CHANGELOG, changes,
                        meta=meta, encode=self._encode_group)
        elif self.incremental:
            self._write_incremental(store, version, meta)
        else:
            store.write(self.operator_id, self.key_group_range, version, SNAPSHOT,
                        _snapshot_groups(self), meta=meta, encode=self._encode_group)
        if is_snapshot:
            store.prune(self.operator_id, self.key_group_range, version)
        for table in self._tables.values():
            table.dirty.clear()
            table.forget_read_value()
        self.version = version

    def _changed_groups(self, read_values: bool) -> Dict[int, Dict[str, tuple]]:
        """The changelog of the dirty slots (or, without ``read_values``, only the check
        that every dirty slot's key belongs to this backend's key groups)."""
        start, end = self.key_group_range
        groups: Dict[int, Dict[str, tuple]] = {}
        for name, table in self._tables.items():
            for db_key, slot in table.dirty.items():
                group = _U16.unpack_from(db_key)[0]
                if not start <= group <= end:
                    raise KeyGroupMismatchError(
                        f"operator {self.operator_id!r} holds state for key {slot[0]!r} of "
                        f"key group {group}, outside its key groups {start}-{end}")
            if not read_values:
                continue
            dirty = list(table.dirty.items())
            for first in range(0, len(dirty), _BATCH_ENTRIES):  # one multi-get per 10,000
                chunk = dirty[first:first + _BATCH_ENTRIES]
                for (db_key, slot), data in zip(chunk, self.db.get([k for k, _ in chunk])):
                    group = _U16.unpack_from(db_key)[0]
                    puts, deletes = groups.setdefault(group, {}).setdefault(name, ({}, []))
                    if data is None:
                        deletes.append(slot)
                    else:
                        puts[slot] = deserialize_deferred(data)  # written back as it is
        return groups

    def _write_incremental(self, store: StateStore, version: int, meta: dict) -> None:
        shared_dir = store.shared_dir(self.operator_id, self.key_group_range)
        if shared_dir != self._shared_dir:
            self._shared_names, self._shared_dir = {}, shared_dir
        checkpoint_dir = os.path.join(self.working_dir, f"checkpoint-{version}")
        shutil.rmtree(checkpoint_dir, ignore_errors=True)
        Checkpoint(self.db).create_checkpoint(checkpoint_dir)  # flushes; hard links SSTs
        try:
            shared, db_files = {}, {}
            for local_name in os.listdir(checkpoint_dir):
                path = os.path.join(checkpoint_dir, local_name)
                if not local_name.endswith(".sst"):
                    with open(path, "rb") as f:
                        db_files[local_name] = f.read()
                    continue
                shared_name = self._shared_names.get(local_name)
                if shared_name is None or not os.path.exists(
                        os.path.join(shared_dir, shared_name)):
                    shared_name = f"{self._instance}-{local_name}"
                    store.share_file(self.operator_id, self.key_group_range, path, shared_name)
                shared[local_name] = shared_name
            meta = dict(meta, state_ids=dict(self._state_ids), db_files=db_files)
            store.write_incremental(self.operator_id, self.key_group_range, version, shared,
                                    meta=meta)
            self._shared_names = shared  # SSTs compacted away since are no longer shared
        finally:
            shutil.rmtree(checkpoint_dir, ignore_errors=True)

    @classmethod
    def _restore(cls, store: StateStore, operator_id: str, key_group_range: Tuple[int, int],
                 max_parallelism: int, version: int,
                 snapshot_interval: int = DEFAULT_SNAPSHOT_INTERVAL,
                 **options) -> "RocksDBKeyedStateBackend":
        """A backend holding ``key_group_range`` at ``version`` (empty at -1), streamed into
        a fresh RocksDB from the files of either backend, of any key-group ranges.

        An incremental snapshot covering the whole range is adopted by hard-linking its
        files; everything else is written entry by entry in batches, file by file and key
        group by key group, so memory holds about one key group of a (non-incremental)
        file. ``options`` go to the constructor.
        """
        files = store.files_to_restore(operator_id, key_group_range, version)
        first = files[0] if files else None
        adopted = None
        if (first is not None and first.kind == INCREMENTAL
                and first.key_group_range[0] <= key_group_range[0]
                and key_group_range[1] <= first.key_group_range[1]):
            adopted = store.read_incremental(first)
            files = files[1:]
        backend = cls(operator_id, key_group_range, max_parallelism, snapshot_interval,
                      _initial_files=None if adopted is None else (first, adopted), **options)
        try:
            if adopted is not None:
                backend._adopted(store, first, adopted)
            for state_file in files:
                backend._apply(store, state_file)
        except BaseException:
            backend.close()
            raise
        backend.version = version
        return backend

    def _overlap(self, state_file: StateFile) -> Tuple[int, int]:
        return (max(self.key_group_range[0], state_file.key_group_range[0]),
                min(self.key_group_range[1], state_file.key_group_range[1]))

    def _adopted(self, store: StateStore, state_file: StateFile,
                 content: StateFileContent) -> None:
        """Takes over the registrations of the incremental snapshot the database was
        opened from (of a range containing ours) and drops other ranges' key groups."""
        self._kinds.update(content.meta["state_kinds"])
        self._state_ids = dict(content.meta["state_ids"])
        for name in self._state_ids:
            self._table_of(name)
            self._pickled_in.setdefault(name, state_file.path)
        start, end = self.key_group_range
        if state_file.key_group_range == self.key_group_range:
            self._shared_dir = store.shared_dir(self.operator_id, self.key_group_range)
            self._shared_names = {local: os.path.basename(path)
                                  for local, path in content.shared_files.items()}
        else:  # drop the other instances' key groups
            self.db.delete_range(_group_prefix(0), _group_prefix(start))
            self.db.delete_range(_upper(end), _END)

    def _apply(self, store: StateStore, state_file: StateFile) -> None:
        """Applies one file on top of the database: a snapshot replaces its key groups."""
        lo, hi = self._overlap(state_file)
        writer = _BatchWriter(self.db)
        if state_file.kind != CHANGELOG:
            writer.delete_range(_group_prefix(lo), _upper(hi))
        if state_file.kind == INCREMENTAL:
            self._copy_incremental(store, state_file, lo, hi, writer)
        else:
            self._kinds.update(store.read_meta(state_file)["state_kinds"])
            for group, changes in self._read_groups(store, state_file, (lo, hi)):
                for name, (puts, deletes) in changes.items():
                    table = self._table_of(name)[0]
                    for slot in deletes:
                        writer.delete(table.stored_db_key(group, slot))
                    for slot, value in puts.items():  # (pickled values: as they were)
                        try:
                            data = table._serialize(value)
                        except Exception as e:
                            raise self.unstorable(name, slot, e) from e
                        writer.put(table.stored_db_key(group, slot), data)
        writer.flush()

    def _copy_incremental(self, store: StateStore, state_file: StateFile, lo: int, hi: int,
                          writer: "_BatchWriter") -> None:
        """Copies key groups ``lo..hi`` of an incremental snapshot, renumbering states."""
        content = store.read_incremental(state_file)
        self._kinds.update(content.meta["state_kinds"])
        our_ids = {_U16.pack(their_id): self._table_of(name)[0].state_id
                   for name, their_id in content.meta["state_ids"].items()}
        for name in content.meta["state_ids"]:
            self._pickled_in.setdefault(name, state_file.path)
        directory = os.path.join(self.working_dir, f"restore-{uuid.uuid4().hex}")
        try:
            _materialize(content, directory)
            stored = _StoredNames(directory, state_file, content)
            source = _open_snapshot(directory, self._options, stored, read_only=True)
            try:
                for db_key, data in _scan(source, _group_prefix(lo), _upper(hi),
                                          lambda e: stored.error(e, "read it") or e):
                    writer.put(db_key[:2] + our_ids[db_key[2:4]] + db_key[4:], data)
            finally:
                _close(source)
        finally:
            shutil.rmtree(directory, ignore_errors=True)


class _WriteBuffer:
    """The writes of the current batch not yet in RocksDB: db key -> bytes, or None for
    a delete. Reads look here first. ``flush`` writes them in one WriteBatch; staging
    flushes too once they hold ``_WRITE_BUFFER_BYTES``, so memory stays bounded however
    many keys a batch changes. (A key changed many times in a batch is written once.)"""

    __slots__ = ("_db", "_damaged", "_entries", "_size")

    def __init__(self, db: Rdict, damaged: Callable[[Exception], Exception]):
        self._db = db
        self._damaged = damaged  # what a failed read raises (RocksDBKeyedStateBackend.damaged)
        self._entries: Dict[bytes, Optional[bytes]] = {}
        self._size = 0  # about the bytes the entries take in memory

    def read(self, db_key: bytes) -> Optional[bytes]:
        data = self._entries.get(db_key, _MISSING)
        if data is not _MISSING:
            return data
        try:
            return self._db.get(db_key)
        except Exception as e:
            raise self._damaged(e) from None

    def stage(self, db_key: bytes, data: Optional[bytes]) -> None:
        entries = self._entries
        old = entries.get(db_key, _MISSING)
        if old is _MISSING:
            self._size += len(db_key) + _ENTRY_OVERHEAD
        elif old is not None:
            self._size -= len(old)
        if data is not None:
            self._size += len(data)
        entries[db_key] = data
        if self._size > _WRITE_BUFFER_BYTES:
            self.flush()

    def flush(self) -> None:
        if not self._entries:
            return
        batch = WriteBatch(raw_mode=True)
        for db_key, data in self._entries.items():
            if data is None:
                batch.delete(db_key)
            else:
                batch.put(db_key, data)
        self._db.write(batch)
        self._entries.clear()
        self._size = 0


class _BatchWriter:
    """Writes to a database through WriteBatches of bounded size."""

    def __init__(self, db: Rdict):
        self._db = db
        self._batch = WriteBatch(raw_mode=True)
        self._count = 0

    def put(self, key: bytes, value: bytes) -> None:
        self._batch.put(key, value)
        self._count += 1
        if self._count >= _BATCH_ENTRIES:
            self.flush()

    def delete(self, key: bytes) -> None:
        self._batch.delete(key)
        self._count += 1
        if self._count >= _BATCH_ENTRIES:
            self.flush()

    def delete_range(self, begin: bytes, end: bytes) -> None:
        self._batch.delete_range(begin, end)
        self._count += 1

    def flush(self) -> None:
        if self._count:
            self._db.write(self._batch)
            self._batch = WriteBatch(raw_mode=True)
            self._count = 0
