"""RocksDB state bytes: msgpack where it is exact, pickle otherwise; types come back
exactly, and key bytes are canonical."""
import pickle
from collections import OrderedDict, namedtuple

from hypothesis import given, strategies as st

from statebackends.serialization import deserialize, serialize_key, serialize_value

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
