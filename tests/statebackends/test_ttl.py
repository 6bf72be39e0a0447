"""State TTL (statebackends/ttl.py) over both keyed backends, on a manual clock.

Flink's rule: a value has expired when ``last_access + ttl <= now``.
"""
import tempfile

import pytest

from api.common.time import Time
from api.datastream.state import StateTtlConfig
from checkpoint.state_store import StateStore
from statebackends.hashmap import HashMapKeyedStateBackend
from statebackends.rocksdb import RocksDBKeyedStateBackend
from core.state_spec import StateKind, StateSpec
from statebackends.ttl import cleanup_expired_state, ttl_state
from tests.statebackends.test_heap_states import Average

FAST_TMP = "/dev/shm"
TTL = 10


class Clock:
    """The task's processing time, moved by the test."""

    def __init__(self):
        self.processing_time = 0


@pytest.fixture(params=[HashMapKeyedStateBackend, RocksDBKeyedStateBackend])
def backend_class(request):
    return request.param


@pytest.fixture
def backend(backend_class):
    backend = backend_class("op", (0, 127), 128, snapshot_interval=2)
    backend.set_current_key("k")
    yield backend
    backend.close()


@pytest.fixture
def clock():
    return Clock()


def config(read=False, return_expired=False, ttl=TTL, cleanup=None):
    builder = StateTtlConfig.new_builder(Time.milliseconds(ttl))
    builder = builder.update_ttl_on_read_and_write() if read else \
        builder.update_ttl_on_create_and_write()
    builder = builder.return_expired_if_not_cleaned_up() if return_expired else \
        builder.never_return_expired()
    if cleanup is not None:
        builder = cleanup(builder)
    return builder.build()


def make(backend, clock, kind, ttl_config, name=None):
    function = {"reducing": lambda a, b: a + b, "aggregating": Average()}.get(kind)
    spec = StateSpec(name or kind, StateKind(kind), function)
    return ttl_state(backend, spec, ttl_config, clock)


def stored(backend, name="value", key="k"):
    """The raw stored entry of ``name`` for ``key`` (None if absent)."""
    return next((v for n, k, _, v in backend.entries() if n == name and k == key), None)


# --- value state ------------------------------------------------------------------

def test_value_expires_exactly_at_last_write_plus_ttl(backend, clock):
    state = make(backend, clock, "value", config())
    clock.processing_time = 100
    state.update("x")
    clock.processing_time = 100 + TTL - 1
    assert state.value() == "x"
    clock.processing_time = 100 + TTL
    assert state.value() is None
    assert stored(backend) is None  # the read cleaned it up


def test_value_write_refreshes_and_on_create_and_write_reads_do_not(backend, clock):
    state = make(backend, clock, "value", config())
    state.update("a")
    clock.processing_time = 6
    state.update("b")
    clock.processing_time = 12
    assert state.value() == "b"  # 0 + 10 passed, but the write at 6 counts
    clock.processing_time = 15
    assert state.value() == "b"  # the read at 12 did not refresh
    clock.processing_time = 16
    assert state.value() is None


def test_value_on_read_and_write_reads_refresh(backend, clock):
    state = make(backend, clock, "value", config(read=True))
    state.update("a")
    clock.processing_time = 9
    assert state.value() == "a"
    clock.processing_time = 18
    assert state.value() == "a"
    clock.processing_time = 28
    assert state.value() is None


def test_value_return_expired_if_not_cleaned_up_returns_it_once(backend, clock):
    state = make(backend, clock, "value", config(return_expired=True))
    state.update(7)
    clock.processing_time = TTL
    assert state.value() == 7
    assert state.value() is None


def test_value_update_none_and_clear_remove_the_value(backend, clock):
    state = make(backend, clock, "value", config())
    state.update(1)
    state.update(None)
    assert stored(backend) is None and state.value() is None
    state.update(2)
    state.clear()
    assert state.value() is None


def test_keys_expire_independently(backend, clock):
    state = make(backend, clock, "value", config())
    state.update("a-value")
    clock.processing_time = 5
    backend.set_current_key("b")
    state.update("b-value")
    clock.processing_time = TTL
    assert state.value() == "b-value"
    backend.set_current_key("k")
    assert state.value() is None


# --- list state -------------------------------------------------------------------

def test_list_elements_expire_one_by_one(backend, clock):
    state = make(backend, clock, "list", config())
    state.add(1)
    clock.processing_time = 5
    state.add_all([2, 3])
    clock.processing_time = TTL - 1
    assert state.get() == [1, 2, 3]
    clock.processing_time = TTL
    assert state.get() == [2, 3] and list(state) == [2, 3]
    assert [value for value, _ in stored(backend, "list")] == [2, 3]
    clock.processing_time = 5 + TTL
    assert state.get() == []
    assert stored(backend, "list") is None


def test_list_return_expired_keeps_expired_elements_until_all_expired(backend, clock):
    # Flink's TtlListState: reads clean up only once every element has expired
    state = make(backend, clock, "list", config(return_expired=True))
    state.add("old")
    clock.processing_time = 5
    state.add("new")
    clock.processing_time = TTL
    assert state.get() == ["old", "new"]
    assert state.get() == ["old", "new"]
    clock.processing_time = 5 + TTL
    assert state.get() == ["old", "new"]
    assert state.get() == []


def test_list_return_expired_on_read_and_write_drops_expired_when_refreshing(backend, clock):
    state = make(backend, clock, "list", config(read=True, return_expired=True))
    state.add("old")
    clock.processing_time = 5
    state.add("new")
    clock.processing_time = TTL
    assert state.get() == ["old", "new"]
    assert state.get() == ["new"]


def test_list_on_read_and_write_refreshes_every_element(backend, clock):
    state = make(backend, clock, "list", config(read=True))
    state.add("a")
    clock.processing_time = 3
    state.add("b")
    clock.processing_time = 9
    assert state.get() == ["a", "b"]
    clock.processing_time = 18
    assert state.get() == ["a", "b"]
    clock.processing_time = 28
    assert state.get() == []


def test_list_update_replaces_with_fresh_elements_and_empty_update_clears(backend, clock):
    state = make(backend, clock, "list", config())
    state.add("a")
    clock.processing_time = 8
    state.update(["x", "y"])
    clock.processing_time = 17
    assert state.get() == ["x", "y"]
    state.update([])
    assert stored(backend, "list") is None and state.get() == []


# --- map state --------------------------------------------------------------------

def test_map_entries_expire_one_by_one(backend, clock):
    state = make(backend, clock, "map", config())
    state.put("a", 1)
    clock.processing_time = 5
    state.put_all({"b": 2, "c": None})
    clock.processing_time = TTL
    assert state.get("a") is None and not state.contains("a") and "a" not in state
    assert state.get("b") == 2 and state.contains("b") and state["b"] == 2
    assert not state.contains("c")  # mapped to None, as without TTL
    assert sorted(state.items(), key=str) == [("b", 2), ("c", None)]
    assert sorted(state.keys()) == ["b", "c"] and sorted(state, key=str) == ["b", "c"]
    assert not state.is_empty()
    assert sorted(stored(backend, "map")) == ["b", "c"]
    clock.processing_time = 5 + TTL
    assert state.is_empty() and state.values() == []
    assert stored(backend, "map") is None


def test_map_iteration_cleans_up_expired_entries(backend, clock):
    state = make(backend, clock, "map", config())
    state["a"] = 1
    clock.processing_time = 5
    state["b"] = 2
    clock.processing_time = TTL
    assert state.values() == [2]
    assert list(stored(backend, "map")) == ["b"]


def test_map_on_read_and_write_refreshes_only_the_entries_read(backend, clock):
    state = make(backend, clock, "map", config(read=True))
    state.put_all([("a", 1), ("b", 2)])
    clock.processing_time = 9
    assert state.get("a") == 1
    clock.processing_time = TTL
    assert state.items() == [("a", 1)]


def test_map_return_expired_and_remove(backend, clock):
    state = make(backend, clock, "map", config(return_expired=True))
    state.put("a", 1)
    state.put("b", 2)
    del state["b"]
    clock.processing_time = TTL
    assert state.items() == [("a", 1)]
    assert state.items() == []


# --- reducing and aggregating state -------------------------------------------------

def test_reducing_state_expires_as_a_whole_after_its_last_add(backend, clock):
    state = make(backend, clock, "reducing", config())
    state.add(1)
    clock.processing_time = 5
    state.add(2)
    clock.processing_time = 5 + TTL - 1
    assert state.get() == 3
    clock.processing_time = 5 + TTL
    assert state.get() is None
    assert stored(backend, "reducing") is None


def test_reducing_add_after_expiry_starts_afresh_unless_expired_is_returned(
        backend, clock):
    never = make(backend, clock, "reducing", config(), name="never")
    returned = make(backend, clock, "reducing", config(return_expired=True), name="returned")
    never.add(1)
    returned.add(1)
    clock.processing_time = TTL
    never.add(2)
    returned.add(2)
    # Flink's TtlReduceFunction keeps an expired value that is not cleaned up yet
    assert (never.get(), returned.get()) == (2, 3)


def test_reducing_on_read_and_write_refreshes(backend, clock):
    state = make(backend, clock, "reducing", config(read=True))
    state.add(4)
    clock.processing_time = 9
    assert state.get() == 4
    clock.processing_time = 18
    assert state.get() == 4
    assert stored(backend, "reducing") == (4, 18)


def test_aggregating_state_expires_and_restarts_from_a_new_accumulator(backend, clock):
    state = make(backend, clock, "aggregating", config())
    state.add(1)
    state.add(3)
    clock.processing_time = TTL - 1
    assert state.get() == 2
    clock.processing_time = TTL
    assert state.get() is None
    state.add(10)
    assert state.get() == 10


def test_aggregating_on_read_and_write_and_return_expired(backend, clock):
    state = make(backend, clock, "aggregating", config(read=True, return_expired=True))
    state.add(2)
    clock.processing_time = 9
    assert state.get() == 2
    clock.processing_time = 19
    assert state.get() == 2  # expired at 19 (9 + 10), returned once
    assert state.get() is None


def test_aggregating_add_none_clears(backend, clock):
    state = make(backend, clock, "aggregating", config())
    state.add(2)
    state.add(None)
    assert state.get() is None and stored(backend, "aggregating") is None


# --- registration -------------------------------------------------------------------

def test_a_name_keeps_one_ttl_state_and_one_configuration(backend, clock):
    state = make(backend, clock, "value", config())
    assert make(backend, clock, "value", config()) is state
    with pytest.raises(ValueError, match="state 'value' is already in use with TTL"):
        make(backend, clock, "value", config(read=True))


# --- persistence and cleanup at snapshots ---------------------------------------------

@pytest.fixture
def store():
    with tempfile.TemporaryDirectory(dir=FAST_TMP) as root:
        yield StateStore(root)


def test_timestamps_survive_a_restore(backend_class, backend, clock, store):
    state = make(backend, clock, "value", config())
    clock.processing_time = 3
    state.update("x")
    backend.write_version(store, 1)
    restored = backend_class.restore(store, "op", (0, 127), 128, 1)
    restored.set_current_key("k")
    state = make(restored, clock, "value", config())
    clock.processing_time = 12
    assert state.value() == "x"
    clock.processing_time = 13
    assert state.value() is None


def _write(backend, store, version):
    cleanup_expired_state(backend, version)
    backend.write_version(store, version)


@pytest.mark.parametrize("cleanup", [
    None,  # background cleanup is on by default
    lambda b: b.disable_cleanup_in_background().cleanup_full_snapshot(),
    lambda b: b.disable_cleanup_in_background().cleanup_incrementally(5, False),
    lambda b: b.disable_cleanup_in_background().cleanup_in_rocksdb_compact_filter(1000),
])
def test_full_snapshots_drop_expired_values(backend_class, backend, clock, store, cleanup):
    ttl_config = config(return_expired=True, cleanup=cleanup)
    states = {kind: make(backend, clock, kind, ttl_config)
              for kind in ("value", "list", "map", "reducing", "aggregating")}
    states["value"].update("v")
    states["list"].add("old")
    states["map"].put("old", 1)
    states["reducing"].add(1)
    states["aggregating"].add(1)
    clock.processing_time = 5
    states["list"].add("new")
    states["map"].put("new", 2)
    backend.set_current_key("other")
    states["value"].update("w")
    clock.processing_time = TTL
    _write(backend, store, 1)  # a changelog: nothing is dropped
    assert stored(backend, "value") == ("v", 0)
    _write(backend, store, 2)  # a full snapshot (snapshot_interval=2)
    assert backend.get_current_key() == "other"
    restored = backend_class.restore(store, "op", (0, 127), 128, 2)
    for b in (backend, restored):
        assert sorted((n, k) for n, k, _, _ in b.entries()) == [
            ("list", "k"), ("map", "k"), ("value", "other")]
        assert [v for v, _ in stored(b, "list")] == ["new"]
        assert list(stored(b, "map")) == ["new"]
    backend.set_current_key("k")
    assert states["value"].value() is None  # gone, although expired values are returned


def test_without_background_cleanup_only_access_cleans_up(backend, clock, store):
    state = make(backend, clock, "value",
                 config(cleanup=lambda b: b.disable_cleanup_in_background()))
    state.update("v")
    clock.processing_time = TTL
    _write(backend, store, 2)
    assert stored(backend) == ("v", 0)
    assert state.value() is None


@pytest.mark.parametrize("kind,expected", [("list", [2]), ("reducing", 2), ("aggregating", 2)])
def test_merging_namespaces_leaves_expired_parts_out(backend, clock, kind, expected):
    """Merging windows (session windows) fold TTL state as they fold plain state."""
    state = make(backend, clock, kind, config())
    backend.set_current_namespace("w1")
    state.add(1)
    clock.processing_time = TTL // 2
    backend.set_current_namespace("w2")
    state.add(2)
    clock.processing_time = TTL  # w1's entry expires now, w2's at TTL + TTL // 2
    state.merge_namespaces("merged", ["w1", "w2"])
    backend.set_current_namespace("merged")
    assert state.get() == expected
