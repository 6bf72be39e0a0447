"""Persistence of the hashmap backend: write_version/restore against a plain dict model."""
import copy
import os
import tempfile
from unittest import mock

import pytest
from hypothesis import given, settings, strategies as st

from checkpoint.files import CorruptFileError
from checkpoint.state_store import StateStore
from statebackends.base import KeyGroupMismatchError
from statebackends.hashmap import HashMapKeyedStateBackend
from core.codec import KeyIdentity
from core.keygroups import assign_key_group, key_group_range_for_operator
from core.state_spec import StateKind, StateSpec

# tmpfs makes fsync nearly free: hundreds of hypothesis examples stay fast.
FAST_TMP = "/dev/shm" if os.path.isdir("/dev/shm") else None
MAX_PARALLELISM = 16
FULL_RANGE = (0, MAX_PARALLELISM - 1)

SLOTS = st.tuples(st.integers(0, 20), st.sampled_from([None, "w1"]))
OPERATIONS = st.one_of(
    st.tuples(st.just("value_update"), SLOTS, st.integers(0, 9)),
    st.tuples(st.just("value_clear"), SLOTS, st.none()),
    st.tuples(st.just("list_add"), SLOTS, st.integers(0, 9)),
    st.tuples(st.just("list_update"), SLOTS, st.lists(st.integers(0, 9), max_size=2)),
    st.tuples(st.just("map_put"), SLOTS, st.tuples(st.sampled_from("ab"), st.integers(0, 9))),
    st.tuples(st.just("map_remove"), SLOTS, st.sampled_from("ab")),
)
BATCHES = st.lists(st.lists(OPERATIONS, max_size=8), min_size=1, max_size=7)


def apply(backend, model, operation):
    """Runs one operation on the backend and on the model {(name, key, ns): value}."""
    kind, (key, namespace), argument = operation
    backend.set_current_key(key)
    backend.set_current_namespace(namespace)
    value = backend.state(StateSpec("v", StateKind.VALUE))
    lists = backend.state(StateSpec("l", StateKind.LIST))
    maps = backend.state(StateSpec("m", StateKind.MAP))
    if kind == "value_update":
        value.update(argument)
        model[("v", key, namespace)] = argument
    elif kind == "value_clear":
        value.clear()
        model.pop(("v", key, namespace), None)
    elif kind == "list_add":
        lists.add(argument)
        model.setdefault(("l", key, namespace), []).append(argument)
    elif kind == "list_update":
        lists.update(argument)
        model[("l", key, namespace)] = list(argument)
    elif kind == "map_put":
        maps.put(*argument)
        model.setdefault(("m", key, namespace), {})[argument[0]] = argument[1]
    elif kind == "map_remove":
        maps.remove(argument)
        model.get(("m", key, namespace), {}).pop(argument, None)


def contents(backend):
    return {(name, key, namespace): value for name, key, namespace, value in backend.entries()}


def expected(model, key_group_range=FULL_RANGE):
    start, end = key_group_range
    return {slot: value for slot, value in model.items()
            if value not in ([], {}) and start <= assign_key_group(slot[1], MAX_PARALLELISM) <= end}


def run_batches(store, backend, batches, first_version, model, models):
    for version, batch in enumerate(batches, start=first_version):
        for operation in batch:
            apply(backend, model, operation)
        backend.write_version(store, version)
        models[version] = copy.deepcopy(model)


@settings(max_examples=60, deadline=None)
@given(BATCHES, st.integers(1, 4), st.data())
def test_restore_at_any_version_equals_the_model(batches, snapshot_interval, data):
    with tempfile.TemporaryDirectory(dir=FAST_TMP) as root:
        store = StateStore(root)
        backend = HashMapKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM, snapshot_interval)
        models = {-1: {}}
        run_batches(store, backend, batches, 0, {}, models)
        last = len(batches) - 1
        version = data.draw(st.sampled_from(
            [-1] + list(range(oldest_restorable_version(last, snapshot_interval), last + 1))),
            label="version")
        key_group_range = data.draw(st.sampled_from(
            [FULL_RANGE, (0, 7), (8, 15), (3, 3), (5, 12)]), label="range")
        restored = HashMapKeyedStateBackend.restore(
            store, "op", key_group_range, MAX_PARALLELISM, version, snapshot_interval)
        assert restored.version == version
        assert contents(restored) == expected(models[version], key_group_range)


@settings(max_examples=40, deadline=None)
@given(BATCHES, BATCHES, st.sampled_from([1, 2, 4]), st.sampled_from([1, 3, 8]),
       st.integers(1, 4), st.data())
def test_rescaling_restores_from_the_ranges_of_another_parallelism(
        before, after, parallelism_before, parallelism_after, snapshot_interval, data):
    """Run at one parallelism, restart at another, then read back at a third."""
    def ranges(parallelism):
        return [key_group_range_for_operator(MAX_PARALLELISM, parallelism, i)
                for i in range(parallelism)]

    def run_at(parallelism, batches, first_version, restore_version):
        for key_group_range in ranges(parallelism):
            backend = HashMapKeyedStateBackend.restore(
                store, "op", key_group_range, MAX_PARALLELISM, restore_version, snapshot_interval)
            model = copy.deepcopy(models[restore_version])
            own = [[op for op in batch if key_group_range[0] <= assign_key_group(
                op[1][0], MAX_PARALLELISM) <= key_group_range[1]] for batch in batches]
            run_batches(store, backend, own, first_version, model, partial_models[key_group_range])

    with tempfile.TemporaryDirectory(dir=FAST_TMP) as root:
        store = StateStore(root)
        models = {-1: {}}
        # Each task's model only sees its own key groups: merge them per version.
        partial_models = {r: {} for p in (parallelism_before, parallelism_after) for r in ranges(p)}
        run_at(parallelism_before, before, 0, -1)
        for version in range(len(before)):
            models[version] = merge_models(partial_models, ranges(parallelism_before), version)
        last = len(before) - 1
        store.discard_after("op", last)
        run_at(parallelism_after, after, last + 1, last)
        for version in range(last + 1, last + 1 + len(after)):
            models[version] = merge_models(partial_models, ranges(parallelism_after), version)
        final = last + len(after)
        version = data.draw(st.sampled_from(
            [-1] + list(range(oldest_restorable_version(final, snapshot_interval), final + 1))),
            label="version")
        reader_parallelism = data.draw(st.sampled_from([1, 2, 5]), label="reader parallelism")
        for key_group_range in ranges(reader_parallelism):
            restored = HashMapKeyedStateBackend.restore(
                store, "op", key_group_range, MAX_PARALLELISM, version, snapshot_interval)
            assert contents(restored) == expected(models[version], key_group_range)


def merge_models(partial_models, ranges, version):
    merged = {}
    for key_group_range in ranges:
        merged.update(expected(partial_models[key_group_range][version], key_group_range))
    return merged


@pytest.fixture
def store():
    with tempfile.TemporaryDirectory(dir=FAST_TMP) as root:
        yield StateStore(root)


def oldest_restorable_version(last_version, snapshot_interval):
    """Pruning at the latest snapshot keeps what restoring the version before it needs."""
    latest_snapshot = last_version // snapshot_interval * snapshot_interval
    if latest_snapshot < 1:
        return -1
    return (latest_snapshot - 1) // snapshot_interval * snapshot_interval


def test_snapshot_cadence_and_pruning(store):
    backend = HashMapKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM, snapshot_interval=3)
    state = backend.state(StateSpec("v", StateKind.VALUE))
    for version in range(8):
        backend.set_current_key(version)
        state.update(version)
        backend.write_version(store, version)
    names = [f"{f.version}.{f.kind}" for f in store.list_files("op")]
    # The snapshot at 6 pruned what precedes the snapshot at 3 (still needed for version 5).
    assert names == ["3.snapshot", "4.changelog", "5.changelog", "6.snapshot", "7.changelog"]
    restored = HashMapKeyedStateBackend.restore(store, "op", FULL_RANGE, MAX_PARALLELISM, 5)
    assert sorted(value for _, _, _, value in restored.entries()) == [0, 1, 2, 3, 4, 5]


def test_a_file_is_written_even_without_changes(store):
    backend = HashMapKeyedStateBackend("op", (2, 5), MAX_PARALLELISM)
    backend.write_version(store, 1)
    assert [(f.key_group_range, f.version, f.kind) for f in store.list_files("op")] == [
        ((2, 5), 1, "changelog")]
    assert backend.version == 1


def test_a_retried_version_overwrites_the_stale_attempt(store):
    key = 1
    failed = HashMapKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    failed.set_current_key(key)
    failed.state(StateSpec("v", StateKind.VALUE)).update("from the failed attempt")
    failed.write_version(store, 1)
    retry = HashMapKeyedStateBackend.restore(store, "op", FULL_RANGE, MAX_PARALLELISM, 0)
    assert list(retry.entries()) == []
    retry.write_version(store, 1)
    restored = HashMapKeyedStateBackend.restore(store, "op", FULL_RANGE, MAX_PARALLELISM, 1)
    assert list(restored.entries()) == []


def test_writing_an_old_version_is_refused(store):
    backend = HashMapKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    backend.write_version(store, 3)
    with pytest.raises(ValueError, match="already at version 3"):
        backend.write_version(store, 3)


def test_state_of_a_key_outside_the_range_is_refused(store):
    key = next(k for k in range(100) if assign_key_group(k, MAX_PARALLELISM) > 7)
    backend = HashMapKeyedStateBackend("op", (0, 7), MAX_PARALLELISM)
    backend.set_current_key(key)
    backend.state(StateSpec("v", StateKind.VALUE)).update(1)
    with pytest.raises(KeyGroupMismatchError, match=f"key {key}"):
        backend.write_version(store, 0)


def test_restore_detects_a_corrupt_file(store):
    backend = HashMapKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    backend.set_current_key("k")
    backend.state(StateSpec("v", StateKind.VALUE)).update("x")
    backend.write_version(store, 0)
    path = store.list_files("op")[0].path
    with open(path, "r+b") as f:
        f.seek(-3, os.SEEK_END)
        f.write(b"???")
    with pytest.raises(CorruptFileError, match="checksum mismatch") as error:
        HashMapKeyedStateBackend.restore(store, "op", FULL_RANGE, MAX_PARALLELISM, 0)
    assert path in str(error.value)


def test_restored_state_kinds_are_checked_on_registration(store):
    backend = HashMapKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    backend.set_current_key("k")
    backend.state(StateSpec("x", StateKind.LIST)).add(1)
    backend.write_version(store, 0)
    restored = HashMapKeyedStateBackend.restore(store, "op", FULL_RANGE, MAX_PARALLELISM, 0)
    assert restored.state_kinds() == {"x": "list"}
    with pytest.raises(TypeError, match="is list state"):
        restored.state(StateSpec("x", StateKind.VALUE))
    restored.set_current_key("k")
    assert restored.state(StateSpec("x", StateKind.LIST)).get() == [1]


@settings(max_examples=40, deadline=None)
@given(BATCHES)
def test_state_is_the_model_whatever_the_cache_of_slots_holds(batches):
    """Keys beyond the backend's cache of slots (here 2 keys) still address their own
    entries: the cache starts afresh when full."""
    with mock.patch("statebackends.base.SLOT_CACHE_LIMIT", 2):
        backend = HashMapKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
        model = {}
        for batch in batches:
            for operation in batch:
                apply(backend, model, operation)
        assert contents(backend) == expected(model)


def test_a_key_outside_a_namespace_gets_the_same_slot_each_time():
    """The slot of a key is one tuple (its table lookups then match by identity); in a
    namespace, and for a key of another type than str, int and bytes (held as its
    KeyIdentity: even an unhashable key), it is built each time."""
    backend = HashMapKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    backend.set_current_key("a")
    first = backend.current_slot
    backend.set_current_key("b")
    backend.set_current_key("".join("a"))  # an equal key, another object
    assert backend.current_slot is first and first == ("a", None)
    backend.set_current_namespace("w")
    assert backend.current_slot == ("a", "w")
    backend.set_current_key("b")
    assert backend.current_slot == ("b", "w")
    backend.set_current_namespace(None)
    assert backend.current_slot == ("b", None)
    backend.set_current_key([1])
    assert backend.current_slot == (KeyIdentity([1]), None) and backend.get_current_key() == [1]


def test_key_slots_are_those_set_current_key_makes_current_and_only_for_safe_keys():
    """An operator sets ``current_slot`` from ``key_slots`` without a call: each slot in
    it is the one ``set_current_key`` makes current. There is none for keys of another type
    than str, int and bytes (held as their KeyIdentity; a list key cannot be looked up),
    and in a namespace."""
    backend = HashMapKeyedStateBackend("op", FULL_RANGE, MAX_PARALLELISM)
    for key in ("a", 7, b"b"):
        backend.set_current_key(key)
    slots = backend.key_slots(["a", 7, b"b"])
    for key in ("a", 7, b"b"):
        backend.set_current_key(key)
        assert slots[key] is backend.current_slot
    assert backend.key_slots(["a", True]) is None and backend.key_slots([1.0]) is None
    assert backend.key_slots([[1, 2]]) is None
    backend.set_current_namespace("w")
    assert backend.key_slots(["a"]) is None
