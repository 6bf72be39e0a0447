"""One key identity on every backend: keys are the same key exactly when their canonical
bytes (``core.codec.serialize_key``) are, so 1, 1.0 and True are three keys and every
NaN is one, on the hashmap backend as on RocksDB, before and after a restore."""
import tempfile

import pytest

from checkpoint.state_store import StateStore
from core.codec import KeyIdentity, key_identity, serialize_key, user_key
from core.keygroups import key_group_range_for_operator
from core.state_spec import StateKind, StateSpec
from statebackends.hashmap import HashMapKeyedStateBackend
from statebackends.rocksdb import RocksDBKeyedStateBackend
from test_hashmap import FAST_TMP

MAX_PARALLELISM = 16
FULL_RANGE = (0, MAX_PARALLELISM - 1)
VALUE = StateSpec("v", StateKind.VALUE)
# Keys equal (or, NaN, unequal) in Python that are distinct (or one) key by their bytes.
KEYS = [1, 1.0, True, 0.0, -0.0, (1, 2), (1.0, 2), None, float("nan"), "1", b"1",
        frozenset({1, 2})]


def _rocksdb(*args, **kwargs):
    kwargs.setdefault("local_dir", FAST_TMP)
    return RocksDBKeyedStateBackend(*args, **kwargs)


def _restore_rocksdb(*args, **kwargs):
    kwargs.setdefault("local_dir", FAST_TMP)
    return RocksDBKeyedStateBackend.restore(*args, **kwargs)


BACKENDS = {"hashmap": (HashMapKeyedStateBackend, HashMapKeyedStateBackend.restore),
            "rocksdb": (_rocksdb, _restore_rocksdb)}


@pytest.fixture
def store():
    with tempfile.TemporaryDirectory(dir=FAST_TMP) as root:
        yield StateStore(root)


def _identity(key) -> bytes:
    return serialize_key(key)


def _fill(backend, keys):
    """Counts each key's occurrences in value state 'v'."""
    state = backend.state(VALUE)
    for key in keys:
        backend.set_current_key(key)
        state.update((state.value() or 0) + 1)


def _counts(backend):
    """{key bytes: (the key, its count)} of value state 'v'."""
    found = {}
    for name, key, namespace, value in backend.entries():
        assert name == "v" and namespace is None
        assert _identity(key) not in found
        found[_identity(key)] = (key, value)
    return found


def _model(keys):
    model = {}
    for key in keys:
        first, count = model.get(_identity(key), (key, 0))
        model[_identity(key)] = (first, count + 1)
    return model


def _same(found, model):
    """Counts equal, and each key handed back is of its original type and bytes."""
    assert {data: count for data, (_, count) in found.items()} == \
        {data: count for data, (_, count) in model.items()}
    for data, (key, _) in found.items():
        assert type(key) is type(model[data][0])


def test_key_identity_is_the_canonical_bytes():
    assert key_identity("a") == "a" and key_identity(7) == 7 and key_identity(b"x") == b"x"
    identities = [key_identity(key) for key in (1, 1.0, True)]
    assert identities[0] == 1 and identities[1] != 1 and identities[2] != 1
    assert identities[1] != identities[2]
    assert key_identity(float("nan")) == key_identity(float("nan"))
    assert key_identity(0.0) != key_identity(-0.0)
    assert key_identity((1, 2)) != key_identity((1.0, 2))
    identity = key_identity(True)
    assert key_identity(identity) is identity and user_key(identity) is True
    assert user_key("a") == "a" and repr(identity) == "True"
    with pytest.raises(TypeError, match="cannot be a key of keyed state"):
        KeyIdentity(lambda: None)


@pytest.mark.parametrize("backend_name", BACKENDS)
def test_equal_keys_of_other_types_are_other_entries(backend_name):
    make, _ = BACKENDS[backend_name]
    backend = make("op", FULL_RANGE, MAX_PARALLELISM)
    keys = KEYS + [float("nan") for _ in range(50)] + [1, True, 1.0, (1, 2)]
    _fill(backend, keys)
    found = _counts(backend)
    _same(found, _model(keys))
    assert found[_identity(float("nan"))][1] == 51
    assert len(found) == len(KEYS)
    for key, count in ((True, 2), (1.0, 2), (1, 2), (None, 1), (-0.0, 1)):
        backend.set_current_key(key)
        current = backend.get_current_key()
        assert type(current) is type(key) and repr(current) == repr(key)
        assert backend.state(VALUE).value() == count
    backend.set_current_key(True)
    backend.set_current_namespace("w")
    assert backend.get_current_key() is True
    backend.close()


@pytest.mark.parametrize("source", BACKENDS)
@pytest.mark.parametrize("target", BACKENDS)
@pytest.mark.parametrize("snapshot_interval", [1, 10])
def test_keys_stay_apart_through_restore_and_rescaling(store, source, target,
                                                      snapshot_interval):
    """A snapshot (interval 1) or changelogs (10), with deletes, restored on either
    backend at parallelism 1 and 2."""
    make, _ = BACKENDS[source]
    backend = make("op", FULL_RANGE, MAX_PARALLELISM, snapshot_interval)
    _fill(backend, KEYS)
    backend.write_version(store, 1)
    _fill(backend, [1.0, True, float("nan"), -0.0])
    backend.set_current_key(1)
    backend.state(VALUE).clear()
    backend.write_version(store, 2)
    expected = _counts(backend)
    backend.close()
    assert len(expected) == len(KEYS) - 1
    _, restore = BACKENDS[target]
    for parallelism in (1, 2):
        found = {}
        for index in range(parallelism):
            key_groups = key_group_range_for_operator(MAX_PARALLELISM, parallelism, index)
            restored = restore(store, "op", key_groups, MAX_PARALLELISM, 2)
            counts = _counts(restored)
            found.update(counts)
            _fill(restored, [key for key, _ in counts.values()])  # each finds its entry
            assert _counts(restored).keys() == counts.keys()
            restored.close()
        _same(found, expected)
