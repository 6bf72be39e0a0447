"""The RocksDB backend: the hashmap backend's contract tests rerun against it (with full
and with incremental snapshots), plus RocksDB-specific checks (values live in RocksDB,
key-group prefixed keys, files interchangeable with hashmap, incremental snapshots
share SST files)."""
import copy
import inspect
import os
import tempfile
from collections import namedtuple

import pytest

import test_hashmap
import test_heap_states
from checkpoint.files import CorruptFileError
from checkpoint.state_store import StateStore
from statebackends.hashmap import HashMapKeyedStateBackend
from core.keygroups import assign_key_group, key_group_range_for_operator
from statebackends import rocksdb
from statebackends.rocksdb import RocksDBKeyedStateBackend, RocksDBTable
from core.state_spec import StateKind, StateSpec

FAST_TMP = test_hashmap.FAST_TMP
MAX_PARALLELISM = test_hashmap.MAX_PARALLELISM
FULL_RANGE = test_hashmap.FULL_RANGE


def _contract_tests(module):
    return [name for name, function in vars(module).items()
            if name.startswith("test_") and callable(function)]


@pytest.fixture(params=[False, True], ids=["full", "incremental"])
def rocksdb_modules(request, monkeypatch):
    """Makes the hashmap contract test modules build RocksDB backends (working directories
    on tmpfs, where creating a database takes 1 ms instead of 50)."""
    class Backend(RocksDBKeyedStateBackend):
        incremental = request.param

        def __init__(self, *args, **kwargs):
            kwargs.setdefault("local_dir", FAST_TMP)
            super().__init__(*args, **kwargs)

    for module in (test_hashmap, test_heap_states):
        monkeypatch.setattr(module, "HashMapKeyedStateBackend", Backend)
    return Backend


@pytest.fixture
def store():
    with tempfile.TemporaryDirectory(dir=FAST_TMP) as root:
        yield StateStore(root)


def _run(function, store, backend_class):
    parameters = inspect.signature(function).parameters
    kwargs = {}
    if "backend" in parameters:
        backend = backend_class("op", (0, 127), 128)
        backend.set_current_key("k")
        kwargs["backend"] = backend
    if "store" in parameters:
        kwargs["store"] = store
    function(**kwargs)


@pytest.mark.parametrize("name", _contract_tests(test_heap_states))
def test_heap_state_contract(name, rocksdb_modules, store):
    _run(getattr(test_heap_states, name), store, rocksdb_modules)


@pytest.mark.parametrize("name", _contract_tests(test_hashmap))
def test_persistence_contract(name, rocksdb_modules, store):
    if rocksdb_modules.incremental and name == "test_snapshot_cadence_and_pruning":
        pytest.skip("file names differ: see test_incremental_snapshot_cadence_and_pruning")
    _run(getattr(test_hashmap, name), store, rocksdb_modules)


# -- RocksDB specifics ---------------------------------------------------------------


Average = test_heap_states.Average


def _fill(backend):
    value = backend.state(StateSpec("v", StateKind.VALUE))
    lists = backend.state(StateSpec("l", StateKind.LIST))
    maps = backend.state(StateSpec("m", StateKind.MAP))
    sums = backend.state(StateSpec("r", StateKind.REDUCING, lambda a, b: a + b))
    averages = backend.state(StateSpec("a", StateKind.AGGREGATING, Average()))
    for key in range(30):
        backend.set_current_key(key)
        for namespace in (None, ("w", key % 3)):
            backend.set_current_namespace(namespace)
            value.update(key * 10)
            lists.add(key)
            lists.add(key + 1)
            maps.put("x", key)
            maps.put("y", [key])
            sums.add(key)
            sums.add(1)
            averages.add(key)
            averages.add(key + 2)
    backend.set_current_namespace(None)


def _contents(backend):
    return {(name, key, namespace): value for name, key, namespace, value in backend.entries()}


def test_values_are_stored_in_rocksdb_not_in_python_dicts(store):
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    _fill(backend)
    assert all(isinstance(table, RocksDBTable) for table in backend._tables.values())
    # After the batch, nothing value-bearing lives in Python besides the tables' db
    # handle: reading the raw RocksDB gives every entry.
    backend.write_version(store, 0)
    raw = list(backend.db.items())
    assert len(raw) == len(_contents(backend)) == 5 * 30 * 2
    backend.set_current_key(7)
    backend.set_current_namespace(("w", 1))
    assert backend.state(StateSpec("l", StateKind.LIST)).get() == [7, 8]
    assert backend.state(StateSpec("m", StateKind.MAP)).items() == [("x", 7), ("y", [7])]
    assert backend.state(StateSpec("r", StateKind.REDUCING, None)).get() == 8
    assert backend.state(StateSpec("a", StateKind.AGGREGATING, Average())).get() == 8
    backend.close()


def test_batch_writes_are_buffered_in_bounded_memory_and_read_back(monkeypatch):
    monkeypatch.setattr(rocksdb, "_WRITE_BUFFER_BYTES", 2000)
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    counts = backend.state(StateSpec("count", StateKind.VALUE))
    for i in range(2000):
        backend.set_current_key(f"k{i % 100}")
        counts.update((counts.value() or 0) + 1)
        if i == 1000:
            backend.set_current_key("k0")
            counts.clear()
        assert backend.writes._size <= 2000
    assert len(list(backend.db.keys())) >= 90  # most reached RocksDB before the batch ended
    expected = {("count", f"k{i}", None): 20 - (i <= 0) * 11 for i in range(100)}
    assert _contents(backend) == expected
    assert len(list(backend.db.keys())) == 100
    backend.close()


def test_values_survive_reopening_the_database():
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    _fill(backend)
    expected = _contents(backend)  # (reading every entry writes the buffered ones)
    backend.db.close()  # without a write-ahead log: close() flushes the memtable
    from rocksdict import Options, Rdict
    reopened = Rdict(backend._db_dir, Options(raw_mode=True))
    assert len(list(reopened.keys())) == len(expected) == 5 * 30 * 2
    reopened.close()
    backend.close()


def test_read_values_are_copies_and_in_place_changes_need_the_state_api():
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    backend.set_current_key("k")
    state = backend.state(StateSpec("v", StateKind.VALUE))
    state.update([1])
    state.value().append(2)
    assert state.value() == [1]
    lists = backend.state(StateSpec("l", StateKind.LIST))
    lists.add(1)
    lists.get().append(99)
    lists.add(2)
    assert lists.get() == [1, 2]
    backend.close()


def test_value_table_view_follows_the_dirty_contract(store):
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    spec = StateSpec("count", StateKind.VALUE)
    table, dirty = backend.value_table(spec)
    assert table.get(("a", None)) is None and ("a", None) not in table
    table[("a", None)] = 1
    dirty.add(("a", None))
    table[("b", None)] = [1]
    dirty.add(("b", None))
    table.get(("b", None)).append(2)  # in-place change + dirty.add writes it back
    dirty.add(("b", None))
    assert table.get(("b", None)) == [1, 2]
    backend.write_version(store, 0)
    assert not dirty
    assert table.pop(("a", None)) == 1 and table.pop(("a", None), None) is None
    dirty.add(("a", None))
    backend.write_version(store, 1)
    restored = RocksDBKeyedStateBackend.restore(store, "op", FULL_RANGE, MAX_PARALLELISM, 1)
    assert _contents(restored) == {("count", "b", None): [1, 2]}
    backend.set_current_key("b")
    assert backend.state(spec).value() == [1, 2]
    backend.close()
    restored.close()


def test_equal_slots_map_to_the_same_entry_regardless_of_identity():
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    state = backend.state(StateSpec("v", StateKind.VALUE))
    shared = "ab" * 3
    backend.set_current_key((shared, shared))
    state.update(1)
    backend.set_current_key(("ab" * 3, "".join(["abab", "ab"])))
    assert state.value() == 1
    backend.close()


@pytest.mark.parametrize("writer,reader", [
    (RocksDBKeyedStateBackend, RocksDBKeyedStateBackend),
    (RocksDBKeyedStateBackend, HashMapKeyedStateBackend),
    (HashMapKeyedStateBackend, RocksDBKeyedStateBackend),
])
@pytest.mark.parametrize("snapshot_interval", [1, 3])
def test_round_trip_and_backend_switch(writer, reader, snapshot_interval, store):
    backend = writer("op", FULL_RANGE, MAX_PARALLELISM, snapshot_interval)
    _fill(backend)
    backend.write_version(store, 0)
    at_0 = copy.deepcopy(_contents(backend))  # hashmap values are changed in place
    backend.set_current_key(3)
    backend.state(StateSpec("v", StateKind.VALUE)).clear()
    backend.state(StateSpec("m", StateKind.MAP)).remove("x")
    backend.set_current_key(4)
    backend.state(StateSpec("l", StateKind.LIST)).add("new")
    backend.write_version(store, 1)
    at_1 = _contents(backend)
    assert at_0 != at_1
    for version, expected in ((0, at_0), (1, at_1)):
        restored = reader.restore(store, "op", FULL_RANGE, MAX_PARALLELISM, version,
                                  snapshot_interval)
        assert _contents(restored) == expected
        assert restored.state_kinds() == {"v": "value", "l": "list", "m": "map",
                                          "r": "reducing", "a": "aggregating"}


def _write_lists_at_parallelism(store, parallelism, keys, versions, **backend_options):
    """Each subtask's backend adds ``[key]`` to list state "l" for its keys and writes
    ``versions``; returns the expected entries of all subtasks."""
    expected = {}
    for index in range(parallelism):
        key_group_range = key_group_range_for_operator(MAX_PARALLELISM, parallelism, index)
        backend = RocksDBKeyedStateBackend("op", key_group_range, MAX_PARALLELISM,
                                           **backend_options)
        state = backend.state(StateSpec("l", StateKind.LIST))
        for key in range(keys):
            if key_group_range[0] <= assign_key_group(key, MAX_PARALLELISM) <= key_group_range[1]:
                backend.set_current_key(key)
                state.add(key)
                expected[("l", key, None)] = [key]
        for version in versions:
            backend.write_version(store, version)
        backend.close()
    return expected


def _read_at_parallelism(store, parallelism, version, **restore_options):
    """Restores every subtask of ``parallelism``, checks each holds only its own key groups,
    and returns their merged entries."""
    merged = {}
    for index in range(parallelism):
        key_group_range = key_group_range_for_operator(MAX_PARALLELISM, parallelism, index)
        restored = RocksDBKeyedStateBackend.restore(store, "op", key_group_range,
                                                    MAX_PARALLELISM, version, **restore_options)
        part = _contents(restored)
        assert all(key_group_range[0] <= assign_key_group(key, MAX_PARALLELISM)
                   <= key_group_range[1] for _, key, _ in part)
        merged.update(part)
        restored.close()
    return merged


def test_rescale_restore(store):
    expected = _write_lists_at_parallelism(store, 2, 50, range(3), snapshot_interval=2)
    assert _read_at_parallelism(store, 3, 2, snapshot_interval=2) == expected


def test_close_removes_the_working_directory():
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    backend.set_current_key(1)
    backend.state(StateSpec("v", StateKind.VALUE)).update(1)
    directory = backend.working_dir
    assert os.path.isdir(directory)
    backend.close()
    assert not os.path.exists(directory)
    backend.close()  # idempotent


# -- layout and serialization ------------------------------------------------------------


def test_keys_are_prefixed_by_their_key_group_and_serialized_compactly():
    from core.codec import deserialize
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    _fill(backend)
    backend.writes.flush()
    assert len(list(backend.db.items())) == 5 * 30 * 2
    for db_key, data in backend.db.items():
        key, namespace = deserialize(db_key[4:])
        assert int.from_bytes(db_key[:2], "big") == assign_key_group(key, MAX_PARALLELISM)
    backend.set_current_key("word")
    backend.state(StateSpec("v", StateKind.VALUE)).update(("word", 5))
    backend.writes.flush()
    table, _ = backend.value_table(StateSpec("v", StateKind.VALUE))
    data = backend.db.get(table.db_key(("word", None)))
    assert len(data) < len(__import__("pickle").dumps(("word", 5), 5)) // 2
    backend.close()


Point = namedtuple("Point", "x y")


@pytest.mark.parametrize("key", ["w", "\udc80", 7, True, 1.0, 2 ** 70, -2 ** 63, ("w", 1),
                                 [[1]], frozenset({1}), Point(1, 2), None])
@pytest.mark.parametrize("namespace", [None, "n", ("w", 3), (None, 10), [1, [2]], 2.5,
                                       "\udc80", Point(3, 4)])
def test_db_keys_are_group_state_id_and_the_serialized_pair(key, namespace):
    from core.codec import serialize_key
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    table, _ = backend.value_table(StateSpec("v", StateKind.VALUE))
    expected = (assign_key_group(key, MAX_PARALLELISM).to_bytes(2, "big") + table.state_id
                + serialize_key([key, namespace]))
    for _ in range(2):  # computed, then remembered
        assert table.db_key((key, namespace)) == expected
    backend.close()


def test_unserializable_keys_namespaces_and_values_are_named_in_the_error():
    import threading
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    state = backend.state(StateSpec("v", StateKind.VALUE))
    backend.set_current_key("k")
    backend.set_current_namespace(threading.Lock())
    with pytest.raises(TypeError, match="operator 'op': the key 'k' / namespace <unlocked"):
        state.update(1)
    backend.set_current_namespace(None)
    with pytest.raises(TypeError, match="value of state 'v' for key 'k' cannot be serialized"):
        state.update(threading.Lock())
    backend.close()


def test_equal_keys_of_different_types_stay_apart():
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    state = backend.state(StateSpec("v", StateKind.VALUE))
    for round_ in range(2):
        for key in (1, True, 1.0, "1"):
            backend.set_current_key(key)
            if round_:
                assert state.value() == repr(key)
            else:
                state.update(repr(key))
    assert sorted(repr(key) for _, key, _, _ in backend.entries()) == ["'1'", "1", "1.0", "True"]
    backend.close()


def test_types_stay_exact_through_rocksdb_and_restore(store):
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    state = backend.state(StateSpec("v", StateKind.VALUE))
    pairs = [(1, (1, [2, (3,)])), (False, {"a": {1, 2}}), (1.5, Point(1, 2)),
             ((1, "a"), 2 ** 80), ("s", [b"x", None, frozenset({"y"})]), (Point(0, 0), "\udc80")]
    for key, value in pairs:
        backend.set_current_key(key)
        state.update(value)
    backend.write_version(store, 0)
    restored = RocksDBKeyedStateBackend.restore(store, "op", FULL_RANGE, MAX_PARALLELISM, 0)
    restored.state(StateSpec("v", StateKind.VALUE))  # (untyped: its pickled values are read)
    got = sorted(((repr(key), type(key), value, type(value))
                  for _, key, _, value in restored.entries()), key=repr)
    assert got == sorted(((repr(k), type(k), v, type(v)) for k, v in pairs), key=repr)
    backend.close()
    restored.close()


# -- incremental snapshots ---------------------------------------------------------------


def _incremental(root, **kwargs):
    return RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM, local_dir=root,
                                    incremental=True, **kwargs)


def _shared(store, key_group_range=FULL_RANGE):
    """{name: inode} of the range's shared directory."""
    directory = store.shared_dir("op", key_group_range)
    return {name: os.stat(os.path.join(directory, name)).st_ino
            for name in os.listdir(directory)}


def _referenced(store):
    return {name for f in store.list_files("op") if f.kind == "incremental"
            for name in map(os.path.basename, store.read_incremental(f).shared_files.values())}


@pytest.fixture
def disk_store():
    """A store on the file system of the backends' working directories (hard links)."""
    with tempfile.TemporaryDirectory() as root:
        yield StateStore(root), root


def _put_many(backend, keys, value):
    state = backend.state(StateSpec("v", StateKind.VALUE))
    for key in keys:
        backend.set_current_key(key)
        state.update(f"{value}-{key}" * 5)


def test_incremental_snapshots_share_unchanged_sst_files(disk_store):
    store, root = disk_store
    backend = _incremental(root, snapshot_interval=1)
    _put_many(backend, range(20_000), "a")
    backend.write_version(store, 0)
    first = _shared(store)
    first_bytes = sum(os.path.getsize(os.path.join(store.shared_dir("op", FULL_RANGE), n))
                      for n in first)
    assert first and first_bytes > 100_000  # the state itself (compressed), in SST files
    _put_many(backend, range(10), "b")
    backend.write_version(store, 1)
    second = _shared(store)
    # Version 0's files are still shared, the same inodes (not copies); one small new file.
    assert {n: second[n] for n in first} == first
    new = set(second) - set(first)
    assert len(new) == 1
    assert os.path.getsize(os.path.join(store.shared_dir("op", FULL_RANGE), *new)) < 5_000
    # The shared files are hard links of the working database's SST files.
    working = {os.stat(os.path.join(backend._db_dir, n)).st_ino
               for n in os.listdir(backend._db_dir) if n.endswith(".sst")}
    assert set(second.values()) == working
    assert _referenced(store) == set(second)
    backend.close()


def test_shared_files_are_deleted_when_no_manifest_names_them(disk_store):
    store, root = disk_store
    backend = _incremental(root, snapshot_interval=1)
    for version in range(3):
        _put_many(backend, range(version * 100, version * 100 + 100), "x")
        backend.write_version(store, version)
    before = set(_shared(store))
    backend.db.compact_range(None, None)  # rewrites every SST file into a new one
    _put_many(backend, [1], "y")
    backend.write_version(store, 3)
    _put_many(backend, [2], "y")
    backend.write_version(store, 4)
    # Versions 3 and 4 remain (a restore of 3 needs the snapshot at 3); the files only
    # versions 0-2 used are gone, the ones still named are kept.
    assert [f.version for f in store.list_files("op")] == [3, 4]
    assert set(_shared(store)) == _referenced(store)
    assert not before & _referenced(store)
    assert not before & set(_shared(store))
    expected = _contents(backend)
    restored = RocksDBKeyedStateBackend.restore(store, "op", FULL_RANGE, MAX_PARALLELISM, 4,
                                                1, local_dir=root)
    assert _contents(restored) == expected
    store.discard_after("op", 3)
    assert set(_shared(store)) == _referenced(store)
    assert [f.version for f in store.list_files("op")] == [3]
    backend.close()
    restored.close()


def test_restoring_an_incremental_snapshot_links_its_files_and_keeps_sharing(disk_store):
    store, root = disk_store
    backend = _incremental(root, snapshot_interval=2)
    _put_many(backend, range(5000), "a")
    backend.write_version(store, 0)
    _put_many(backend, range(10), "b")
    backend.write_version(store, 1)  # a changelog on top of the snapshot
    expected = _contents(backend)
    backend.close()
    restored = RocksDBKeyedStateBackend.restore(store, "op", FULL_RANGE, MAX_PARALLELISM, 1,
                                                2, local_dir=root, incremental=True)
    assert _contents(restored) == expected
    shared = _shared(store)
    working = {os.stat(os.path.join(restored._db_dir, n)).st_ino
               for n in os.listdir(restored._db_dir) if n.endswith(".sst")}
    assert working == set(shared.values())  # opened in place: hard links, no copies
    restored.write_version(store, 2)
    assert set(shared) <= set(_shared(store))  # the next snapshot names the same files
    restored.close()


def test_incremental_snapshot_cadence_and_pruning(store):
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM, snapshot_interval=3,
                                       incremental=True, local_dir=FAST_TMP)
    state = backend.state(StateSpec("v", StateKind.VALUE))
    for version in range(8):
        backend.set_current_key(version)
        state.update(version)
        backend.write_version(store, version)
    names = [f"{f.version}.{f.kind}" for f in store.list_files("op")]
    assert names == ["3.incremental", "4.changelog", "5.changelog", "6.incremental",
                     "7.changelog"]
    backend.close()


def test_hashmap_refuses_incremental_snapshots_and_reads_full_ones_again(store):
    from checkpoint.state_store import IncrementalSnapshotError
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM, snapshot_interval=2,
                                       incremental=True, local_dir=FAST_TMP)
    _fill(backend)
    backend.write_version(store, 0)
    with pytest.raises(IncrementalSnapshotError, match="only the RocksDB state backend"):
        HashMapKeyedStateBackend.restore(store, "op", FULL_RANGE, MAX_PARALLELISM, 0, 2)
    # Switching back: a non-incremental RocksDB run writes a full snapshot at version 2.
    switched = RocksDBKeyedStateBackend.restore(store, "op", FULL_RANGE, MAX_PARALLELISM, 0, 2,
                                                local_dir=FAST_TMP)
    switched.write_version(store, 1)
    switched.write_version(store, 2)
    hashmap = HashMapKeyedStateBackend.restore(store, "op", FULL_RANGE, MAX_PARALLELISM, 2, 2)
    assert _contents(hashmap) == _contents(backend)
    backend.close()
    switched.close()


def test_rescale_from_incremental_snapshots_reads_only_own_key_groups(disk_store):
    store, root = disk_store
    expected = _write_lists_at_parallelism(store, 2, 300, [0], snapshot_interval=1,
                                           local_dir=root, incremental=True)
    for parallelism in (1, 3):
        assert _read_at_parallelism(store, parallelism, 0, snapshot_interval=1,
                                    local_dir=root) == expected


@pytest.mark.parametrize("written", [[FULL_RANGE], [(0, 3), (4, MAX_PARALLELISM - 1)]],
                         ids=["adopted", "copied"])
def test_a_damaged_incremental_snapshot_is_named_by_its_stored_file(disk_store, written):
    # Restored whole, one snapshot is adopted as the database; two halves are copied in.
    store, root = disk_store
    damaged = []
    for key_group_range in written:
        backend = RocksDBKeyedStateBackend("op", key_group_range, MAX_PARALLELISM,
                                           local_dir=root, incremental=True)
        keys = [f"k{i}" for i in range(3000)]
        _put_many(backend, [k for k in keys if key_group_range[0] <= assign_key_group(
            k, MAX_PARALLELISM) <= key_group_range[1]], "x" * 50)
        backend.write_version(store, 0)
        backend.close()
        directory = store.shared_dir("op", key_group_range)
        damaged += [os.path.join(directory, name) for name in os.listdir(directory)
                    if name.endswith(".sst")]
    for path in damaged:
        data = bytearray(open(path, "rb").read())
        for i in range(100, len(data) - 100, 97):
            data[i] ^= 0xFF
        os.remove(path)
        with open(path, "wb") as f:
            f.write(bytes(data))
    with pytest.raises(CorruptFileError) as failure:
        RocksDBKeyedStateBackend.restore(store, "op", FULL_RANGE, MAX_PARALLELISM, 0,
                                         local_dir=root)
    message = str(failure.value)
    assert any(path in message for path in damaged), message
    assert "rocksdb-state-" not in message  # not the working copy


def test_damage_met_on_a_later_read_is_named_by_the_stored_file(disk_store):
    # A data block damaged at the start of a stored SST: RocksDB opens the adopted
    # snapshot (it reads the index at the end) and meets the damage only when a read
    # reaches that block. The error names the stored file, not the working copy.
    store, root = disk_store
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM, local_dir=root,
                                       incremental=True)
    _put_many(backend, [f"k{i}" for i in range(3000)], "x" * 50)
    backend.write_version(store, 0)
    backend.close()
    directory = store.shared_dir("op", FULL_RANGE)
    damaged = [os.path.join(directory, name) for name in os.listdir(directory)
               if name.endswith(".sst")]
    for path in damaged:
        data = bytearray(open(path, "rb").read())
        for i in range(100, 2000, 7):
            data[i] ^= 0xFF
        os.remove(path)
        with open(path, "wb") as f:
            f.write(bytes(data))
    # (A cache of its own: the shared cache still holds the blocks as they were written.)
    restored = RocksDBKeyedStateBackend.restore(store, "op", FULL_RANGE, MAX_PARALLELISM, 0,
                                                local_dir=root, block_cache_size=1 << 20)
    try:
        table = restored.value_table(StateSpec("v", StateKind.VALUE))[0]
        with pytest.raises(CorruptFileError) as scanning:  # (not a silently shorter scan)
            list(table.items())
        state = restored.state(StateSpec("v", StateKind.VALUE))
        with pytest.raises(CorruptFileError) as looking_up:
            for i in range(3000):
                restored.set_current_key(f"k{i}")
                state.value()
    finally:
        restored.close()
    for failure in (scanning, looking_up):
        message = str(failure.value)
        assert any(path in message for path in damaged), message
        assert "rocksdb-state-" not in message  # not the working copy
