"""Keys to key groups to operator instances, where PyFlink puts them.

Flink puts a key in key group ``murmurHash(key.hashCode()) % maxParallelism`` and key
group ``g`` on operator instance ``g * parallelism // maxParallelism``. In PyFlink the
Java key of ``key_by(selector, key_type)`` is a one-field ``Row`` holding the selector's
result: for a declared key type, the Java value of that type (a String, an Integer, a
Tuple2, a Row...); without one (or with ``PICKLED_BYTE_ARRAY``), the bytes of the key
pickled with protocol 5 (as PyFlink's coder does, see ``_pickled_key``). So a key's group
depends on the declared key type (``KeyType``), and ``assign_key_group`` computes Java's
hash code of that Row here. Declared types this module does not model are placed by
their pickled bytes, as untyped keys are.

``KeyGrouping`` is the one object routing and the state backends ask, with the key
group of each distinct key cached.
"""
from __future__ import annotations

import io
import math
import pickle
import struct
import sys
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from core.codec import serialize_key

__all__ = [
    "PLACEMENT", "KeyType", "KeyGrouping", "assign_key_group", "key_hash_code", "murmur_hash",
    "compute_operator_index_for_key_group", "key_group_range_for_operator",
    "assign_operator_index",
]

_M32 = 0xFFFFFFFF
_UTF16 = "utf-16-le" if sys.byteorder == "little" else "utf-16-be"  # code units, native
_ROW_KIND_INSERT = 0
_BOOLEAN_HASHES = (1237, 1231)  # Boolean.hashCode of false, true
_CACHE_LIMIT = 100_000  # distinct keys a KeyGrouping remembers
_SCALARS = frozenset((str, int, float, bool, bytes, type(None)))
_EXACT_SCALARS = frozenset((str, int, bytes, type(None)))  # equal only to their own type
PLACEMENT = "pyflink"
"""The key placement of this module; ``KeyGrouping.placement`` adds the key type."""


@dataclass(frozen=True)
class KeyType:
    """A declared key type, as far as it decides where keys go: ``kind`` is a basic
    type's name (``"STRING"``, ``"INT"``, ``"LONG"``, ``"SHORT"``, ``"BYTE"``,
    ``"BOOLEAN"``, ``"FLOAT"``, ``"DOUBLE"``), ``"TUPLE"`` or ``"ROW"`` with ``fields``;
    None stands for untyped (pickled) keys, in fields too."""

    kind: str
    fields: Tuple[Optional["KeyType"], ...] = ()

    def __post_init__(self):
        if self.kind not in _HASHES:
            raise ValueError(f"no key placement for key type {self.kind!r}")

    def __str__(self) -> str:
        if not self.fields:
            return self.kind
        return f"{self.kind}({', '.join(map(_type_name, self.fields))})"

    @property
    def exact_by_value(self) -> bool:
        """Whether keys equal in Python always have the same hash code (not so for 0.0
        and -0.0, nor for pickled fields, whose bytes depend on their types)."""
        return self.kind not in ("FLOAT", "DOUBLE") and all(
            field is not None and field.exact_by_value for field in self.fields)


def _type_name(key_type: Optional[KeyType]) -> str:
    return "PICKLED_BYTE_ARRAY" if key_type is None else str(key_type)


def murmur_hash(code: int) -> int:
    """Flink's ``MathUtils.murmurHash`` of a 32-bit int: non-negative."""
    code = (code * 0xCC9E2D51) & _M32
    code = ((code << 15) | (code >> 17)) & _M32
    code = (code * 0x1B873593) & _M32
    code = ((code << 13) | (code >> 19)) & _M32
    code = (code * 5 + 0xE6546B64) & _M32
    code ^= 4
    code ^= code >> 16
    code = (code * 0x85EBCA6B) & _M32
    code ^= code >> 13
    code = (code * 0xC2B2AE35) & _M32
    code ^= code >> 16
    if code & 0x80000000:  # negative as a Java int: its absolute value (MIN_VALUE: 0)
        return 0 if code == 0x80000000 else (1 << 32) - code
    return code


# Java's polynomial hashes of bytes, h = 31 * h + b from h = start, are sum(b_i * 31**k)
# plus start * 31**n. Split into base-31 digits (b = 31 * q + r), each byte string reads
# as two base-31 numbers, parsed in C by int(); a byte from 128 up, signed in Java, takes
# 256 * 31**k off.
_DIGITS = b"0123456789abcdefghijklmnopqrstu"
_LOW_DIGIT = bytes(_DIGITS[b % 31] for b in range(256))
_HIGH_DIGIT = bytes(_DIGITS[b // 31] for b in range(256))
_NEGATIVE = bytes(_DIGITS[b >= 128] for b in range(256))


def _polynomial_hash(data: bytes, start: int, signed: bool) -> int:
    """Java's ``h = 31 * h + b`` over the bytes of ``data`` (as signed bytes if
    ``signed``) from ``h = start``."""
    if not data:
        return start
    h = int(data.translate(_LOW_DIGIT), 31) + 31 * int(data.translate(_HIGH_DIGIT), 31)
    if signed:
        h -= 256 * int(data.translate(_NEGATIVE), 31)
    if start:
        h += start * pow(31, len(data), 1 << 32)
    return h & _M32


def _string_hash(value: str) -> int:
    """Java's ``String.hashCode``: over UTF-16 code units (an ASCII string's are its bytes)."""
    if value.isascii():
        return _polynomial_hash(value.encode("ascii"), 0, False)
    h = 0
    for unit in memoryview(value.encode(_UTF16, "surrogatepass")).cast("H"):
        h = (31 * h + unit) & _M32
    return h


def _bytes_hash(data: bytes) -> int:
    """Java's ``Arrays.hashCode(byte[])``: over signed bytes."""
    return _polynomial_hash(data, 1, True)


def _int_hash(value: int, bits: int) -> int:
    """``Integer``/``Short``/``Byte.hashCode``: the value, checked against its range."""
    if not -(1 << (bits - 1)) <= value < 1 << (bits - 1):
        raise ValueError(f"{value} does not fit a {bits}-bit key")
    return value & _M32


def _long_hash(value: int) -> int:
    if not -(1 << 63) <= value < 1 << 63:
        raise ValueError(f"{value} does not fit a 64-bit key")
    value &= 0xFFFFFFFFFFFFFFFF
    return (value ^ (value >> 32)) & _M32


def _double_hash(value: float) -> int:
    """``Double.hashCode``: of the IEEE bits, every NaN as Java's canonical NaN."""
    bits = 0x7FF8000000000000 if math.isnan(value) else \
        struct.unpack("<Q", struct.pack("<d", value))[0]
    return (bits ^ (bits >> 32)) & _M32


def _float_hash(value: float) -> int:
    """``Float.hashCode``: of the 32-bit IEEE bits the value is rounded to."""
    if math.isnan(value):
        return 0x7FC00000
    return struct.unpack("<I", struct.pack("<f", value))[0]


def _is_plain(value: Any) -> bool:
    """Whether ``value`` is made of Python's built-in data types only."""
    t = type(value)
    if t in _SCALARS:
        return True
    if t is tuple or t is list:
        return all(map(_is_plain, value))
    if t is dict:
        return all(map(_is_plain, value)) and all(map(_is_plain, value.values()))
    return False


def _unshared_pickle(value: Any) -> bytes:
    """``value`` pickled with no memo: the same bytes for equal values, whatever objects
    they share."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=5)
    pickler.fast = True
    pickler.dump(value)
    return buffer.getvalue()


def _pickled_key(value: Any) -> bytes:
    """The bytes that place an untyped key. For keys of Python's built-in data types,
    those of PyFlink's coder (``cloudpickle.dumps``, protocol 5) for the key as a record
    decoded from a pickle holds it: pickle memoizes a string, bytes or tuple that occurs
    twice, so the same key may pickle two ways, and here it always pickles the one way.
    Other keys (subclasses, sets, user classes) are placed by their canonical bytes
    (``core.codec.serialize_key``), the same in every process."""
    if type(value) in _SCALARS:
        return pickle.dumps(value, 5)
    if _is_plain(value):
        # Our own bytes, just made: a copy that shares only what unpickling shares.
        return pickle.dumps(pickle.loads(_unshared_pickle(value)), 5)
    return serialize_key(value)


def _pickled_hash(value: Any) -> int:
    """The hash of the ``byte[]`` PyFlink makes of an untyped key."""
    return _bytes_hash(_pickled_key(value))


def _fields(value: Any, key_type: KeyType) -> list:
    """The field values of a tuple or row key (a Row, tuple or list)."""
    values = getattr(value, "_values", value)
    if not isinstance(values, (tuple, list)) or len(values) != len(key_type.fields):
        raise ValueError(f"{value!r} is not a {key_type.kind.lower()} of "
                         f"{len(key_type.fields)} fields")
    return values


def _tuple_hash(value: Any, key_type: KeyType) -> int:
    """A Java ``TupleN.hashCode``: 31 * h + each field's ``hashCode()``, from the first."""
    h = 0
    for field, field_type in zip(_fields(value, key_type), key_type.fields):
        h = (31 * h + (0 if field is None else _object_hash(field, field_type))) & _M32
    return h


def _row_hash(value: Any, key_type: KeyType) -> int:
    """A Java ``Row.hashCode`` (Flink 2): 31 * its kind's byte + the deep hash of its
    fields, as an array."""
    kind = getattr(value, "get_row_kind", None)
    return (31 * (_ROW_KIND_INSERT if kind is None else kind().value)
            + _fields_hash(_fields(value, key_type), key_type.fields)) & _M32


def _fields_hash(values, types) -> int:
    """The deep hash a Row gives its fields: ``h = 31 * h + field``, from 1, where a field
    hashes as ``Arrays.deepHashCode`` of a one-element array holding it (None: 0)."""
    h = 1
    for value, key_type in zip(values, types):
        h = 31 * h + (0 if value is None else 31 + _object_hash(value, key_type))
    return h & _M32


def _object_hash(value: Any, key_type: Optional[KeyType]) -> int:
    """The Java ``hashCode()`` of ``value`` as a Java object of ``key_type`` (a pickled
    key: its bytes' array hash, as ``Arrays.deepHashCode`` takes it)."""
    if key_type is None:
        return _pickled_hash(value)
    return _HASHES[key_type.kind](value, key_type)


def _checked(python_type, hash_of):
    def hash_value(value, key_type):
        if not isinstance(value, python_type):
            raise TypeError(f"{value!r} is a {type(value).__name__}, not a key of type "
                            f"{key_type.kind}")
        return hash_of(value)
    return hash_value


_HASHES = {
    "STRING": _checked(str, _string_hash),
    "INT": _checked(int, lambda v: _int_hash(v, 32)),
    "SHORT": _checked(int, lambda v: _int_hash(v, 16)),
    "BYTE": _checked(int, lambda v: _int_hash(v, 8)),
    "LONG": _checked(int, _long_hash),
    "BOOLEAN": _checked(int, lambda v: _BOOLEAN_HASHES[bool(v)]),
    "DOUBLE": _checked((int, float), lambda v: _double_hash(float(v))),
    "FLOAT": _checked((int, float), lambda v: _float_hash(float(v))),
    "TUPLE": _tuple_hash,
    "ROW": _row_hash,
}


def key_hash_code(key: Any, key_type: Optional[KeyType] = None) -> int:
    """The ``hashCode()`` (as an unsigned 32-bit int) of the Java key PyFlink makes of
    ``key``: a one-field Row (kind INSERT) holding it as ``key_type`` (None: its pickled
    bytes)."""
    return _fields_hash((key,), (key_type,))


def assign_key_group(key: Any, max_parallelism: int, key_type: Optional[KeyType] = None) -> int:
    """The key group of ``key`` (of ``key_type``, None: untyped), as in PyFlink.

    >>> assign_key_group("banana", 128, KeyType("STRING"))
    54
    """
    return murmur_hash(key_hash_code(key, key_type)) % max_parallelism


class KeyGrouping:
    """The key groups of the keys of one keyed stream: its declared key type (None:
    untyped) and max parallelism. The group of each distinct key is computed once (up to
    ``_CACHE_LIMIT`` keys) where equal keys share a group: for a declared type without
    floats, every key; for untyped keys, those made of str, int, bytes, None and tuples
    (``1``, ``1.0`` and ``True`` are equal, but pickle differently)."""

    def __init__(self, key_type: Optional[KeyType], max_parallelism: int):
        self.key_type = key_type
        self.max_parallelism = max_parallelism
        self.placement = f"{PLACEMENT}:{_type_name(key_type)}"
        """Names how keys are grouped (stored with state: state grouped otherwise is
        regrouped on restore)."""
        self._cache: Dict[Any, int] = {}
        self._by_value = key_type is not None and key_type.exact_by_value

    def key_group(self, key: Any) -> int:
        """The key group of ``key``."""
        if self._by_value or type(key) in _EXACT_SCALARS or _is_exact_tuple(key):
            cache = self._cache
            try:
                return cache[key]
            except KeyError:
                group = assign_key_group(key, self.max_parallelism, self.key_type)
                if len(cache) < _CACHE_LIMIT:
                    cache[key] = group
                return group
            except TypeError:  # unhashable, e.g. a list in a row
                pass
        return assign_key_group(key, self.max_parallelism, self.key_type)

    def key_groups(self, keys: list) -> List[int]:
        """The key group of each of ``keys`` (a chunk's: one call, not one per key)."""
        if self._by_value or _EXACT_SCALARS.issuperset(map(type, keys)):
            cache = self._cache
            try:  # the common case: every key seen before
                return [cache[key] for key in keys]
            except (KeyError, TypeError):
                pass
        return list(map(self.key_group, keys))


def _is_exact_tuple(key: Any) -> bool:
    """Whether ``key`` is a tuple that equals only keys that pickle as it does."""
    return type(key) is tuple and all(
        type(item) in _EXACT_SCALARS or _is_exact_tuple(item) for item in key)


def compute_operator_index_for_key_group(max_parallelism: int, parallelism: int,
                                         key_group: int) -> int:
    """The operator instance (0-based) owning ``key_group`` at ``parallelism``."""
    return key_group * parallelism // max_parallelism


def assign_operator_index(key: Any, max_parallelism: int, parallelism: int,
                          key_type: Optional[KeyType] = None) -> int:
    """The operator instance owning ``key``."""
    return assign_key_group(key, max_parallelism, key_type) * parallelism // max_parallelism


def key_group_range_for_operator(max_parallelism: int, parallelism: int,
                                 operator_index: int) -> Tuple[int, int]:
    """The key groups ``(start, end)``, both inclusive, of one operator instance.

    The ranges of indexes ``0..parallelism-1`` partition ``[0, max_parallelism)``
    and agree with ``compute_operator_index_for_key_group``.
    """
    start = (operator_index * max_parallelism + parallelism - 1) // parallelism
    end = ((operator_index + 1) * max_parallelism - 1) // parallelism
    return start, end
