"""The RocksDB backend: the hashmap backend's contract tests rerun against it, plus
RocksDB-specific checks (values live in RocksDB, files interchangeable with hashmap)."""
import copy
import inspect
import os
import tempfile

import pytest

import test_hashmap
import test_heap_states
from descriptors import (
    AggregatingStateDescriptor, ListStateDescriptor, MapStateDescriptor,
    ReducingStateDescriptor, ValueStateDescriptor,
)
from checkpoint.state_store import StateStore
from statebackends.hashmap import HashMapKeyedStateBackend
from statebackends.keygroups import assign_key_group, key_group_range_for_operator
from statebackends.rocksdb import RocksDBKeyedStateBackend, RocksDBTable

FAST_TMP = test_hashmap.FAST_TMP
MAX_PARALLELISM = test_hashmap.MAX_PARALLELISM
FULL_RANGE = test_hashmap.FULL_RANGE


def _contract_tests(module):
    return [name for name, function in vars(module).items()
            if name.startswith("test_") and callable(function)]


@pytest.fixture
def rocksdb_modules(monkeypatch):
    """Makes the hashmap contract test modules build RocksDB backends."""
    for module in (test_hashmap, test_heap_states):
        monkeypatch.setattr(module, "HashMapKeyedStateBackend", RocksDBKeyedStateBackend)


@pytest.fixture
def store():
    with tempfile.TemporaryDirectory(dir=FAST_TMP) as root:
        yield StateStore(root)


def _run(function, store):
    parameters = inspect.signature(function).parameters
    kwargs = {}
    if "backend" in parameters:
        backend = RocksDBKeyedStateBackend("op", (0, 127), 128)
        backend.set_current_key("k")
        kwargs["backend"] = backend
    if "store" in parameters:
        kwargs["store"] = store
    function(**kwargs)


@pytest.mark.parametrize("name", _contract_tests(test_heap_states))
def test_heap_state_contract(name, rocksdb_modules, store):
    _run(getattr(test_heap_states, name), store)


@pytest.mark.parametrize("name", _contract_tests(test_hashmap))
def test_persistence_contract(name, rocksdb_modules, store):
    _run(getattr(test_hashmap, name), store)


# -- RocksDB specifics ---------------------------------------------------------------


Average = test_heap_states.Average


def _fill(backend):
    value = backend.get_state(ValueStateDescriptor("v"))
    lists = backend.get_list_state(ListStateDescriptor("l"))
    maps = backend.get_map_state(MapStateDescriptor("m"))
    sums = backend.get_reducing_state(ReducingStateDescriptor("r", lambda a, b: a + b))
    averages = backend.get_aggregating_state(AggregatingStateDescriptor("a", Average()))
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


def test_values_are_stored_in_rocksdb_not_in_python_dicts():
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    _fill(backend)
    assert all(isinstance(table, RocksDBTable) for table in backend._tables.values())
    # Nothing value-bearing lives in Python besides the tables' db handle: reading the
    # raw RocksDB gives every entry.
    raw = list(backend._db.items())
    assert len(raw) == len(_contents(backend)) == 5 * 30 * 2
    backend.set_current_key(7)
    backend.set_current_namespace(("w", 1))
    assert backend.get_list_state(ListStateDescriptor("l")).get() == [7, 8]
    assert backend.get_map_state(MapStateDescriptor("m")).items() == [("x", 7), ("y", [7])]
    assert backend.get_reducing_state(ReducingStateDescriptor("r", None)).get() == 8
    assert backend.get_aggregating_state(AggregatingStateDescriptor("a", Average())).get() == 8
    backend.close()


def test_values_survive_reopening_the_database():
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    _fill(backend)
    expected = _contents(backend)
    backend._db.close()
    from rocksdict import Options, Rdict
    options = Options(raw_mode=True)
    reopened = Rdict(backend.working_dir, options)
    backend._db = reopened
    for table in backend._tables.values():
        table._db = reopened
    assert _contents(backend) == expected
    reopened.close()
    backend.close()


def test_read_values_are_copies_and_in_place_changes_need_the_state_api():
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    backend.set_current_key("k")
    state = backend.get_state(ValueStateDescriptor("v"))
    state.update([1])
    state.value().append(2)
    assert state.value() == [1]
    lists = backend.get_list_state(ListStateDescriptor("l"))
    lists.add(1)
    lists.get().append(99)
    lists.add(2)
    assert lists.get() == [1, 2]
    backend.close()


def test_value_table_view_follows_the_dirty_contract(store):
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    descriptor = ValueStateDescriptor("count")
    table, dirty = backend.value_table(descriptor)
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
    assert backend.get_state(descriptor).value() == [1, 2]
    backend.close()
    restored.close()


def test_equal_slots_map_to_the_same_entry_regardless_of_identity():
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    state = backend.get_state(ValueStateDescriptor("v"))
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
    backend.get_state(ValueStateDescriptor("v")).clear()
    backend.get_map_state(MapStateDescriptor("m")).remove("x")
    backend.set_current_key(4)
    backend.get_list_state(ListStateDescriptor("l")).add("new")
    backend.write_version(store, 1)
    at_1 = _contents(backend)
    assert at_0 != at_1
    for version, expected in ((0, at_0), (1, at_1)):
        restored = reader.restore(store, "op", FULL_RANGE, MAX_PARALLELISM, version,
                                  snapshot_interval)
        assert _contents(restored) == expected
        assert restored.state_kinds() == {"v": "value", "l": "list", "m": "map",
                                          "r": "reducing", "a": "aggregating"}


def test_rescale_restore(store):
    before = [key_group_range_for_operator(MAX_PARALLELISM, 2, i) for i in range(2)]
    after = [key_group_range_for_operator(MAX_PARALLELISM, 3, i) for i in range(3)]
    expected = {}
    for key_group_range in before:
        backend = RocksDBKeyedStateBackend("op", key_group_range, MAX_PARALLELISM, 2)
        state = backend.get_list_state(ListStateDescriptor("l"))
        for key in range(50):
            if key_group_range[0] <= assign_key_group(key, MAX_PARALLELISM) <= key_group_range[1]:
                backend.set_current_key(key)
                state.add(key)
                expected[("l", key, None)] = [key]
        for version in range(3):
            backend.write_version(store, version)
        backend.close()
    merged = {}
    for key_group_range in after:
        restored = RocksDBKeyedStateBackend.restore(store, "op", key_group_range,
                                                    MAX_PARALLELISM, 2, 2)
        part = _contents(restored)
        assert all(key_group_range[0] <= assign_key_group(key, MAX_PARALLELISM)
                   <= key_group_range[1] for _, key, _ in part)
        merged.update(part)
        restored.close()
    assert merged == expected


def test_close_removes_the_working_directory():
    backend = RocksDBKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    backend.set_current_key(1)
    backend.get_state(ValueStateDescriptor("v")).update(1)
    directory = backend.working_dir
    assert os.path.isdir(directory)
    backend.close()
    assert not os.path.exists(directory)
    backend.close()  # idempotent
