"""The registry of keyed state backends: names, checks and restores."""
import pytest

from checkpoint.state_store import StateStore
from engine.runtime.state_backends import STATE_BACKENDS, check_state_backend, restore_backend
from statebackends.hashmap import HashMapKeyedStateBackend
from statebackends.rocksdb import RocksDBKeyedStateBackend
from core.state_spec import StateKind, StateSpec

COUNT = StateSpec("count", StateKind.VALUE)


def test_an_unknown_backend_name_is_rejected():
    assert set(STATE_BACKENDS) == {"hashmap", "rocksdb"}
    check_state_backend("rocksdb")
    with pytest.raises(ValueError, match="unknown state backend 'memory': "
                                         "use 'hashmap' or 'rocksdb'"):
        check_state_backend("memory")
    with pytest.raises(ValueError, match="unknown state backend 'memory'"):
        restore_backend("memory", StateStore("unused"), "op", (0, 7), 8, -1)


def test_either_backend_restores_what_the_other_wrote(tmp_path):
    store = StateStore(str(tmp_path))
    written = HashMapKeyedStateBackend("op", (0, 7), 8)
    written.set_current_key("a")
    written.state(COUNT).update(3)
    written.write_version(store, 0)
    restored = restore_backend("rocksdb", store, "op", (0, 7), 8, 0, incremental=True)
    try:
        assert isinstance(restored, RocksDBKeyedStateBackend) and restored.incremental
        assert list(restored.entries()) == [("count", "a", None, 3)]
        restored.set_current_key("a")
        restored.state(COUNT).update(4)
        restored.write_version(store, 1)
    finally:
        restored.close()
    again = restore_backend("hashmap", store, "op", (0, 7), 8, 1)
    assert type(again) is HashMapKeyedStateBackend
    assert list(again.entries()) == [("count", "a", None, 4)]
    assert restore_backend("hashmap", store, "op", (0, 7), 8, -1).state_kinds() == {}
