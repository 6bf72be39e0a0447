"""Keys to key groups to operator instances, the same in every process and run.

``stable_hash`` hashes a canonical serialization of a key: Python's built-in
``hash()`` is salted per process and must never decide where a key lives.
Values that compare equal hash equal (``1 == 1.0 == True``, a tuple and a
namedtuple/Row with the same fields), so they fall in the same key group; state
still keeps them apart as separate entries, since a key is its canonical bytes
(``core.codec.key_identity``).
"""
from __future__ import annotations

import pickle
import struct
from typing import Any, Tuple
from zlib import crc32

__all__ = [
    "stable_hash", "assign_key_group", "compute_operator_index_for_key_group",
    "key_group_range_for_operator", "assign_operator_index",
]

_MASK32 = 0xFFFFFFFF
_pack_length = struct.Struct("<I").pack
_pack_double = struct.Struct("<d").pack

_TAG_NONE = b"N"
_TAG_INT = b"i"
_TAG_BIG_INT = b"I"
_TAG_FLOAT = b"f"
_TAG_STR = b"s"
_TAG_BYTES = b"b"
_TAG_SEQUENCE = b"t"
_TAG_SET = b"S"
_TAG_PICKLE = b"p"

# UTF-8 never contains 0xFF, so it ends a string without a length prefix.
_STR_END = b"\xff"
# crc32 of the tag alone: the running value a top-level key of that type starts from.
_STR_SEED = crc32(_TAG_STR)
_INT_SEED = crc32(_TAG_INT)
_INT64_MIN = -(1 << 63)
_INT64_MAX = (1 << 63) - 1


def _feed(value: Any, crc: int) -> int:
    """Folds the canonical serialization of ``value`` into a running crc32.

    Variable-length parts carry their length or an end marker, so that
    ("ab", "c") and ("a", "bc") differ.
    """
    t = type(value)
    if t is str:
        return crc32(_STR_END, crc32(value.encode("utf-8", "surrogatepass"), crc32(_TAG_STR, crc)))
    if t is int or t is bool:
        if _INT64_MIN <= value <= _INT64_MAX:
            return crc32(value.to_bytes(8, "little", signed=True), crc32(_TAG_INT, crc))
        data = value.to_bytes((value.bit_length() + 8) // 8, "little", signed=True)
        return crc32(data, crc32(_TAG_BIG_INT + _pack_length(len(data)), crc))
    if value is None:
        return crc32(_TAG_NONE, crc)
    if t is float:
        if value.is_integer():
            return _feed(int(value), crc)
        return crc32(_TAG_FLOAT + _pack_double(value), crc)
    if isinstance(value, (tuple, list)):
        return _feed_sequence(value, crc)
    if isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        return crc32(data, crc32(_TAG_BYTES + _pack_length(len(data)), crc))
    if isinstance(value, int):
        return _feed(int(value), crc)
    if isinstance(value, str):
        return _feed(str(value), crc)
    row_values = getattr(value, "_values", None)
    if isinstance(row_values, (tuple, list)):
        # A Row hashes like the tuple of its field values (Row equality compares them).
        return _feed_sequence(row_values, crc)
    if isinstance(value, (set, frozenset)):
        # Set iteration order depends on the salted hash(): combine order-free.
        member_hashes = sorted(_feed(member, 0) for member in value)
        crc = crc32(_TAG_SET + _pack_length(len(member_hashes)), crc)
        return crc32(b"".join(h.to_bytes(4, "little") for h in member_hashes), crc)
    data = pickle.dumps(value, protocol=5)
    return crc32(data, crc32(_TAG_PICKLE + _pack_length(len(data)), crc))


def _feed_sequence(values, crc: int) -> int:
    crc = crc32(_TAG_SEQUENCE + _pack_length(len(values)), crc)
    for value in values:
        crc = _feed(value, crc)
    return crc


def stable_hash(key: Any) -> int:
    """A non-negative 32-bit hash of ``key``, identical in every process and run.

    >>> stable_hash("user-1") == stable_hash("user-1")
    True
    """
    # Fast paths for the commonest keys; each equals _feed(key, 0).
    t = type(key)
    if t is str:
        h = crc32(_STR_END, crc32(key.encode("utf-8", "surrogatepass"), _STR_SEED))
    elif t is int and _INT64_MIN <= key <= _INT64_MAX:
        h = crc32(key.to_bytes(8, "little", signed=True), _INT_SEED)
    else:
        h = _feed(key, 0)
    # MurmurHash3's finalizer (inlined: this runs per record) spreads crc32's
    # bits so that the low bits make good buckets.
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK32
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK32
    return h ^ (h >> 16)


def assign_key_group(key: Any, max_parallelism: int) -> int:
    """The key group of ``key``: ``stable_hash(key) % max_parallelism``."""
    return stable_hash(key) % max_parallelism


def compute_operator_index_for_key_group(max_parallelism: int, parallelism: int,
                                         key_group: int) -> int:
    """The operator instance (0-based) owning ``key_group`` at ``parallelism``."""
    return key_group * parallelism // max_parallelism


def assign_operator_index(key: Any, max_parallelism: int, parallelism: int) -> int:
    """The operator instance owning ``key``."""
    return assign_key_group(key, max_parallelism) * parallelism // max_parallelism


def key_group_range_for_operator(max_parallelism: int, parallelism: int,
                                 operator_index: int) -> Tuple[int, int]:
    """The key groups ``(start, end)``, both inclusive, of one operator instance.

    The ranges of indexes ``0..parallelism-1`` partition ``[0, max_parallelism)``
    and agree with ``compute_operator_index_for_key_group``.
    """
    start = (operator_index * max_parallelism + parallelism - 1) // parallelism
    end = ((operator_index + 1) * max_parallelism - 1) // parallelism
    return start, end
