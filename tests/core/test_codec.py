"""RocksDB state bytes: msgpack where it is exact, pickle otherwise; types come back
exactly, and key bytes are canonical."""
import io
import pickle
from collections import OrderedDict, namedtuple

import msgpack
import pytest
from hypothesis import given, strategies as st

from core.codec import deserialize, serialize_key, serialize_value

Point = namedtuple("Point", "x y")

SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-2 ** 70, 2 ** 70),
                    st.floats(allow_nan=False), st.text(), st.binary())
KEYS = st.recursive(SCALARS | st.builds(Point, st.integers(), st.text()),
                    lambda inner: st.tuples(inner, inner) | st.frozensets(st.integers()),
                    max_leaves=8)
VALUES = st.recursive(
    SCALARS | st.builds(Point, st.integers(), st.text()) | st.sets(st.integers()),
    lambda inner: (st.lists(inner, max_size=3) | st.tuples(inner, inner)
                   | st.dictionaries(st.text(max_size=3) | st.integers(), inner, max_size=3)),
    max_leaves=12)


def same(a, b) -> bool:
    """Equal, and of the same types all the way down."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return a == b


@given(VALUES)
def test_values_round_trip_with_exact_types(value):
    assert same(deserialize(serialize_value(value)), value)


@given(KEYS)
def test_keys_round_trip_and_equal_keys_give_equal_bytes(key):
    data = serialize_key(key)
    assert same(deserialize(data), key)
    assert serialize_key(pickle.loads(pickle.dumps(key))) == data


def test_tuples_lists_and_equal_numbers_stay_apart():
    assert serialize_key((1, 2)) != serialize_key([1, 2])
    assert len({serialize_key(k) for k in (1, 1.0, True)}) == 3
    assert type(deserialize(serialize_value(OrderedDict(a=1)))) is OrderedDict


def test_common_values_are_smaller_than_pickles():
    for value in [("word", 5), ["k1", None], {"count": 3, "sum": 1.5}, 12345]:
        assert len(serialize_value(value)) <= len(pickle.dumps(value, 5)) * 0.6


def test_values_msgpack_cannot_say_are_pickled_whole():
    recursive = []
    recursive.append(recursive)
    restored = deserialize(serialize_value(recursive))
    assert restored[0] is restored
    assert deserialize(serialize_value(["\udc80", 1])) == ["\udc80", 1]


def _big_int(item):
    return msgpack.ExtType(4, item.to_bytes((item.bit_length() + 8) // 8, "little", signed=True))


def _format_of_values(obj):
    """The stored format, spelled out: msgpack, a tuple as extension 1 holding the
    msgpack of its items, an int beyond 64 bits as extension 4 holding its bytes,
    anything else msgpack cannot say exactly as extension 2 holding its pickle."""
    def default(item):
        if type(item) is tuple:
            return msgpack.ExtType(1, msgpack.packb(list(item), default=default,
                                                    strict_types=True, use_bin_type=True))
        if type(item) is int:
            return _big_int(item)
        return msgpack.ExtType(2, pickle.dumps(item, 5))
    return msgpack.packb(obj, default=default, strict_types=True, use_bin_type=True)


@given(VALUES | st.tuples(SCALARS, SCALARS) | st.tuples(SCALARS, st.tuples(SCALARS)))
def test_value_bytes_follow_the_stored_format(value):
    assert serialize_value(value) == _format_of_values(value)


def _format_of_keys(obj):
    """The stored key format: as values, but a frozenset is extension 3 holding the msgpack
    of its members' sorted bytes, and pickles are memo-free."""
    def default(item):
        if type(item) is tuple:
            return msgpack.ExtType(1, msgpack.packb(list(item), default=default,
                                                    strict_types=True, use_bin_type=True))
        if type(item) is frozenset:
            return msgpack.ExtType(3, msgpack.packb(sorted(map(_format_of_keys, item))))
        if type(item) is int:
            return _big_int(item)
        buffer = io.BytesIO()
        pickler = pickle.Pickler(buffer, protocol=5)
        pickler.fast = True
        pickler.dump(item)
        return msgpack.ExtType(2, buffer.getvalue())
    return msgpack.packb(obj, default=default, strict_types=True, use_bin_type=True)


@given(KEYS, KEYS | st.tuples(st.none(), st.integers(-2 ** 63, 2 ** 63 - 1)))
def test_key_bytes_follow_the_stored_format(key, namespace):
    assert serialize_key(key) == _format_of_keys(key)
    assert serialize_key([key, namespace]) == _format_of_keys([key, namespace])


@pytest.mark.parametrize("value", [(0,) * n for n in range(16)] + [
    (b"x" * size,) for size in (0, 1, 13, 250, 251, 252, 253, 254, 255, 65529, 65530, 65531,
                                 65532, 70000)])
def test_tuples_of_every_size_keep_the_stored_format(value):
    # Items of 1-16 bytes, then around the 256 and 65536 bytes of msgpack's ext headers.
    assert serialize_value(value) == _format_of_values(value)
    assert deserialize(serialize_value(value)) == value
    assert serialize_key(value) == _format_of_keys(value)


def test_a_frozenset_anywhere_in_a_key_keeps_its_members_bytes():
    members = frozenset({2, 3})
    for key in (["abc", members], [members, "x"], ("k", ("j", members)), [("k", members), None]):
        data = serialize_key(key)
        assert same(deserialize(data), key)
        assert serialize_key(pickle.loads(pickle.dumps(key))) == data
    assert serialize_key(["abc", members]).endswith(serialize_key(members))


def test_registered_value_classes_keep_their_stored_codes_and_resolve_inside():
    # Row, Instant and the windows register themselves when their modules are imported;
    # the stored bytes carry the codes the format gives them, read back exact.
    from api.common.time import Instant
    from api.common.types import Row
    from core.codec import Pickled, deserialize_deferred, resolve_pickled
    from engine.time.windows import CountWindow, GlobalWindow, TimeWindow
    for value, code in [(Row(a=1, b="x"), 9), (Instant(5, 7), 10), (TimeWindow(0, 5), 11),
                        (CountWindow(3), 12), (GlobalWindow.get(), 13)]:
        stored = serialize_value(value)
        assert msgpack.unpackb(stored, ext_hook=lambda c, d: c) == code
        restored = deserialize(stored)
        assert type(restored) is type(value) and repr(restored) == repr(value)
    row = deserialize_deferred(serialize_value(Row(1, {2})))
    assert isinstance(row[1], Pickled)
    assert resolve_pickled(row, lambda p: pickle.loads(p.data)) == Row(1, {2})


def test_a_code_is_taken_by_one_class_and_only_codes_for_value_classes_are_given():
    from core import codec

    class Other:
        pass
    with pytest.raises(ValueError, match="already taken"):
        codec.register_data_class(Other, codec.ROW, lambda o: [], lambda f: Other())
    with pytest.raises(ValueError, match="not one a value class may take"):
        codec.register_data_class(Other, 2, lambda o: [], lambda f: Other())
