"""Key groups as Flink computes them for PyFlink's keys (where PyFlink puts keys is checked
against recorded PyFlink runs in tests/api/datastream/test_key_placement.py)."""
import collections
import pickle
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from core.codec import key_identity, user_key
from core.keygroups import (
    KeyGrouping, KeyType, assign_key_group, assign_operator_index,
    compute_operator_index_for_key_group, key_group_range_for_operator, key_hash_code,
)

STRING, INT, LONG = KeyType("STRING"), KeyType("INT"), KeyType("LONG")

UNTYPED_KEYS = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text() | st.binary(),
    lambda children: st.tuples(children, children) | st.lists(children, max_size=3)
    | st.lists(children, max_size=3).map(tuple),
    max_leaves=6,
)

# Typed keys: (key type, values of it).
INT32 = st.integers(-2 ** 31, 2 ** 31 - 1)
INT64 = st.integers(-2 ** 63, 2 ** 63 - 1)
TYPED_KEYS = st.one_of(
    st.tuples(st.just(STRING), st.text()),
    st.tuples(st.just(INT), INT32),
    st.tuples(st.just(LONG), INT64),
    st.tuples(st.just(KeyType("BOOLEAN")), st.booleans()),
    st.tuples(st.just(KeyType("DOUBLE")), st.floats()),
    st.tuples(st.just(KeyType("TUPLE", (STRING, INT))), st.tuples(st.text(), INT32)),
    st.tuples(st.just(KeyType("ROW", (STRING, None))), st.tuples(st.text(), UNTYPED_KEYS)),
)


def test_a_key_hashes_as_the_one_field_row_pyflink_keys_by():
    # Java: "hello".hashCode() == 99162322, Long.valueOf(-1).hashCode() == 0,
    # Boolean.TRUE.hashCode() == 1231; Flink 2's Row(kind INSERT, [x]).hashCode() is
    # 31 * 0 + (31 * 1 + (31 + x.hashCode())) = 62 + x.hashCode(), and 31 for a null field.
    assert key_hash_code("hello", STRING) == 62 + 99162322
    assert key_hash_code(-1, LONG) == 62
    assert key_hash_code(True, KeyType("BOOLEAN")) == 62 + 1231
    assert key_hash_code(None, STRING) == 31
    # "😀" is two UTF-16 code units, as in Java: 0xD83D * 31 + 0xDE00.
    assert key_hash_code("😀", STRING) == 62 + 0xD83D * 31 + 0xDE00
    # An untyped key is the byte[] of its protocol-5 pickle (PyFlink's coder):
    # Arrays.hashCode over signed bytes, from 1; None is a null field.
    expected = 1
    for byte in pickle.dumps(("a", 1), 5):
        expected = (31 * expected + (byte - 256 if byte > 127 else byte)) & 0xFFFFFFFF
    assert key_hash_code(("a", 1)) == (62 + expected) & 0xFFFFFFFF
    assert key_hash_code(None) == 31


def java_hash(units, start: int) -> int:
    """Java's ``h = 31 * h + unit`` over 32-bit ints."""
    h = start
    for unit in units:
        h = (31 * h + unit) & 0xFFFFFFFF
    return h


@given(st.text(), st.binary(max_size=300))
def test_strings_and_byte_arrays_hash_as_in_java(text, data):
    utf16 = text.encode("utf-16-le", "surrogatepass")
    units = [int.from_bytes(utf16[i:i + 2], "little") for i in range(0, len(utf16), 2)]
    assert key_hash_code(text, STRING) == (62 + java_hash(units, 0)) & 0xFFFFFFFF
    # an untyped key: Arrays.hashCode of its pickle's signed bytes
    signed = [b - 256 if b > 127 else b for b in pickle.dumps(data, 5)]
    assert key_hash_code(data) == (62 + java_hash(signed, 1)) & 0xFFFFFFFF


def test_a_typed_key_of_another_python_type_is_refused_naming_the_type():
    with pytest.raises(TypeError, match="not a key of type STRING"):
        assign_key_group(1.5, 128, STRING)
    with pytest.raises(ValueError, match="does not fit a 32-bit key"):
        assign_key_group(2 ** 31, 128, INT)
    with pytest.raises(ValueError, match="not a tuple of 2 fields"):
        assign_key_group(("a",), 128, KeyType("TUPLE", (STRING, INT)))


def test_untyped_keys_are_placed_alike_in_every_process_whatever_its_hash_seed():
    keys = "[('a', 1, 2.5, None, b'x'), frozenset({'a', 'b', 'c'}), 'user-1', [1, [2]]]"
    code = f"from core.keygroups import assign_key_group as g; print([g(k, 32768) for k in {keys}])"
    outputs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={"PYTHONHASHSEED": seed, "PYTHONPATH": "."}).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1


def test_equal_keys_of_other_types_go_where_their_own_bytes_put_them():
    """Untyped keys are their pickled bytes, as in PyFlink: 1, 1.0 and True are three keys,
    and a grouping that has seen one of them does not take another for it."""
    grouping = KeyGrouping(None, 32768)
    for key in (1, 1.0, True, (1,), (1.0,), (True,), 0.0, -0.0, [1], [True]):
        assert grouping.key_group(key) == assign_key_group(key, 32768), key
    assert len({assign_key_group(k, 32768) for k in (1, 1.0, True)}) == 3


def test_a_key_is_placed_alike_whatever_objects_it_shares():
    """Pickle writes a string that occurs twice once; a key is placed as if decoded from a
    pickle, so equal keys go to one key group however they were built."""
    word = "ab" * 3
    assert assign_key_group((word, word), 32768) == \
        assign_key_group(("ab" * 3, "".join(["abab", "ab"])), 32768)


@settings(deadline=None)
@given(UNTYPED_KEYS, st.integers(1, 32768))
def test_cached_untyped_groups_are_those_of_the_key_and_of_its_stored_copy(key, max_parallelism):
    """Routing and the state backends ask a KeyGrouping; a backend restored from stored
    state asks it for the key read back: all agree with the key's own group."""
    grouping = KeyGrouping(None, max_parallelism)
    expected = assign_key_group(key, max_parallelism)
    assert grouping.key_group(key) == expected == grouping.key_group(key)
    assert grouping.key_group(user_key(key_identity(key))) == expected
    assert 0 <= expected < max_parallelism


@settings(deadline=None)
@given(TYPED_KEYS, st.integers(1, 32768))
def test_cached_typed_groups_are_those_of_the_key(typed_key, max_parallelism):
    key_type, key = typed_key
    grouping = KeyGrouping(key_type, max_parallelism)
    expected = assign_key_group(key, max_parallelism, key_type)
    assert grouping.key_group(key) == expected == grouping.key_group(key)
    assert grouping.key_group(user_key(key_identity(key))) == expected


def test_placements_name_the_key_type():
    assert KeyGrouping(KeyType("TUPLE", (STRING, None)), 128).placement == \
        "pyflink:TUPLE(STRING, PICKLED_BYTE_ARRAY)"
    assert KeyGrouping(None, 128).placement == "pyflink:PICKLED_BYTE_ARRAY"


def test_key_groups_are_spread_evenly():
    counts = collections.Counter(assign_key_group(f"key-{i}", 128, STRING)
                                 for i in range(128 * 100))
    assert len(counts) == 128
    assert max(counts.values()) < 150 and min(counts.values()) > 55


@settings(deadline=None)
@given(max_parallelism=st.integers(1, 4096), data=st.data())
def test_ranges_partition_the_key_groups_and_agree_with_operator_index(max_parallelism, data):
    parallelism = data.draw(st.integers(1, max_parallelism))
    next_start = 0
    for index in range(parallelism):
        start, end = key_group_range_for_operator(max_parallelism, parallelism, index)
        assert start == next_start and start <= end
        for key_group in {start, end, (start + end) // 2}:
            assert compute_operator_index_for_key_group(max_parallelism, parallelism, key_group) == index
        next_start = end + 1
    assert next_start == max_parallelism


@settings(deadline=None)
@given(UNTYPED_KEYS, st.integers(1, 512), st.data())
def test_operator_index_of_key_owns_its_key_group(key, max_parallelism, data):
    parallelism = data.draw(st.integers(1, max_parallelism))
    start, end = key_group_range_for_operator(
        max_parallelism, parallelism, assign_operator_index(key, max_parallelism, parallelism))
    assert start <= assign_key_group(key, max_parallelism) <= end

