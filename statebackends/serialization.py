"""Compact, type-exact bytes for keyed state stored in RocksDB: msgpack where it can
say a value exactly, pickle for the rest.

msgpack writes None, bool, int (64-bit), float, str, bytes, and lists and dicts of
exactly those types. A tuple becomes an extension holding its items, so it comes
back as a tuple (plain msgpack would turn it into a list); any other object (a set,
a Row, a big int, a subclass of a builtin, a user class) is pickled inside an
extension, so a list of user objects stays mostly msgpack and every type comes back
exact, except that a bytearray or memoryview comes back as bytes. What msgpack refuses as a whole (a str with lone surrogates, nesting deeper
than 511 levels) is pickled whole.

``serialize_key`` is canonical: equal keys built of the same types give equal bytes
(a frozenset's members are sorted by their bytes; pickles are memo-free, so sharing
sub-objects does not change them; other pickled objects whose pickle depends on more
than their value, e.g. a frozenset inside a user class, are not canonical). Keys that
are equal in Python but of different types (``1``, ``1.0`` and ``True``) get
different bytes, so they are different state entries here.
"""
from __future__ import annotations

import io
import pickle
from typing import Any

import msgpack

__all__ = ["serialize_key", "serialize_value", "deserialize"]

_TUPLE = 1
_PICKLE = 2
_FROZENSET = 3  # keys only: the members' bytes, sorted
_PROTOCOL = 5


def _canonical_pickle(obj: Any) -> bytes:
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=_PROTOCOL)
    pickler.fast = True  # no memo: equal objects give equal bytes whatever they share
    pickler.dump(obj)
    return buffer.getvalue()


def _value_pickle(obj: Any) -> bytes:
    return pickle.dumps(obj, _PROTOCOL)


def _key_default(obj: Any) -> msgpack.ExtType:
    if type(obj) is tuple:
        return msgpack.ExtType(_TUPLE, _packb(list(obj), _key_default))
    if type(obj) is frozenset:  # iteration order varies: sort the members' bytes
        return msgpack.ExtType(_FROZENSET, msgpack.packb(sorted(map(serialize_key, obj))))
    return msgpack.ExtType(_PICKLE, _canonical_pickle(obj))


def _value_default(obj: Any) -> msgpack.ExtType:
    if type(obj) is tuple:
        return msgpack.ExtType(_TUPLE, _packb(list(obj), _value_default))
    return msgpack.ExtType(_PICKLE, _value_pickle(obj))


def _packb(obj: Any, default) -> bytes:
    # A fresh packer: the hooks above run inside a packer, which must not be re-entered.
    return msgpack.packb(obj, default=default, strict_types=True, use_bin_type=True)


# The top-level packers are reused (4x faster than packb); the backend is single-threaded.
_KEY_PACKER = msgpack.Packer(default=_key_default, strict_types=True, use_bin_type=True)
_VALUE_PACKER = msgpack.Packer(default=_value_default, strict_types=True, use_bin_type=True)


def serialize_key(obj: Any) -> bytes:
    """Canonical bytes of a state key, namespace or (key, namespace) pair."""
    try:
        return _KEY_PACKER.pack(obj)
    except (UnicodeEncodeError, ValueError):
        return msgpack.packb(msgpack.ExtType(_PICKLE, _canonical_pickle(obj)))


def serialize_value(obj: Any) -> bytes:
    """Bytes of a state value."""
    try:
        return _VALUE_PACKER.pack(obj)
    except (UnicodeEncodeError, ValueError):
        return msgpack.packb(msgpack.ExtType(_PICKLE, _value_pickle(obj)))


def _ext_hook(code: int, data: bytes) -> Any:
    if code == _TUPLE:
        return tuple(deserialize(data))
    if code == _PICKLE:
        return pickle.loads(data)
    if code == _FROZENSET:
        return frozenset(map(deserialize, msgpack.unpackb(data)))
    raise ValueError(f"unknown msgpack extension type {code} in stored state")


def deserialize(data: bytes) -> Any:
    """The object of bytes made by ``serialize_key`` or ``serialize_value``."""
    return msgpack.unpackb(data, ext_hook=_ext_hook, strict_map_key=False, raw=False)
