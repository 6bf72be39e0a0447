"""Compact, type-exact bytes for keyed state stored in RocksDB: msgpack where it can
say a value exactly, pickle for the rest.

msgpack writes None, bool, int (64-bit), float, str, bytes, and lists and dicts of
exactly those types. A tuple becomes an extension holding its items, so it comes
back as a tuple (plain msgpack would turn it into a list); any other object (a set,
a Row, a big int, a subclass of a builtin, a user class) is pickled inside an
extension, so a list of user objects stays mostly msgpack and every type comes back
exact, except that a bytearray or memoryview comes back as bytes. What msgpack refuses
as a whole (a str with lone surrogates, nesting deeper than 511 levels) is pickled whole.

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
from typing import Any, Optional

import msgpack

__all__ = ["serialize_key", "serialize_value", "deserialize", "key_item_bytes", "PAIR_HEADER"]

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


def _key_bytes(obj: Any, packer: msgpack.Packer) -> bytes:
    try:
        return packer.pack(obj)
    except (UnicodeEncodeError, ValueError):
        return msgpack.packb(msgpack.ExtType(_PICKLE, _canonical_pickle(obj)))


def _key_default(obj: Any) -> msgpack.ExtType:
    if type(obj) is tuple:
        return msgpack.ExtType(_TUPLE, _tuple_items(obj, _key_default))
    if type(obj) is frozenset:  # iteration order varies: sort the members' bytes
        # Each member through a fresh packer: _KEY_PACKER is mid-pack here.
        members = sorted(_key_bytes(member, _fresh_packer(_key_default)) for member in obj)
        return msgpack.ExtType(_FROZENSET, msgpack.packb(members))
    return msgpack.ExtType(_PICKLE, _canonical_pickle(obj))


def _value_default(obj: Any) -> msgpack.ExtType:
    if type(obj) is tuple:
        return msgpack.ExtType(_TUPLE, _tuple_items(obj, _value_default))
    return msgpack.ExtType(_PICKLE, _value_pickle(obj))


def _tuple_items(obj: tuple, default) -> bytes:
    try:  # the common case first: a tuple of scalars
        return _SCALAR_PACKER.pack(list(obj))
    except _NOT_SCALAR:
        return _packb(list(obj), default)


def _fresh_packer(default) -> msgpack.Packer:
    return msgpack.Packer(default=default, strict_types=True, use_bin_type=True)


def _packb(obj: Any, default) -> bytes:
    # A fresh packer: the hooks above run inside a packer, which must not be re-entered.
    return _fresh_packer(default).pack(obj)


# The top-level packers are reused (4x faster than packb); the backend is single-threaded.
_KEY_PACKER = _fresh_packer(_key_default)
_VALUE_PACKER = _fresh_packer(_value_default)
# Without a hook, so never re-entered (the hooks above may use it): packs None, bool,
# int, float, str, bytes and lists and dicts of those exactly as the packers above do,
# and raises one of _NOT_SCALAR for anything else.
_SCALAR_PACKER = msgpack.Packer(strict_types=True, use_bin_type=True)
_NOT_SCALAR = (TypeError, OverflowError, ValueError, UnicodeEncodeError)


def _ext_head(code: int, size: int) -> bytes:
    """The msgpack header of an extension of type ``code`` holding ``size`` bytes."""
    fixed = {1: 0xd4, 2: 0xd5, 4: 0xd6, 8: 0xd7, 16: 0xd8}.get(size)
    if fixed is not None:
        return bytes((fixed, code))
    if size < 1 << 8:
        return bytes((0xc7, size, code))
    if size < 1 << 16:
        return b"\xc8" + size.to_bytes(2, "big") + bytes((code,))
    return b"\xc9" + size.to_bytes(4, "big") + bytes((code,))


_TUPLE_HEADS = [_ext_head(_TUPLE, size) for size in range(256)]


def serialize_key(obj: Any) -> bytes:
    """Canonical bytes of a state key, namespace or (key, namespace) pair."""
    return _key_bytes(obj, _KEY_PACKER)


PAIR_HEADER = b"\x92"
"""The msgpack header of a two-item list: see ``key_item_bytes``."""


def key_item_bytes(obj: Any) -> Optional[bytes]:
    """The bytes of ``obj`` as an item of a serialized key list, so that
    ``serialize_key([a, b]) == PAIR_HEADER + key_item_bytes(a) + key_item_bytes(b)``
    (to serialize a pair from its parts' bytes computed once); None where they depend on
    the list: for a list or dict (its nesting depth counts towards msgpack's limit), for
    what msgpack refuses (the whole list is pickled instead) and for what fails (so that
    ``serialize_key`` of the pair reports it)."""
    if type(obj) is list or type(obj) is dict:
        return None
    try:
        return _KEY_PACKER.pack(obj)
    except Exception:
        return None


def serialize_value(obj: Any) -> bytes:
    """Bytes of a state value."""
    if type(obj) is tuple:  # fast path of the common tuple of scalars, same bytes
        try:
            items = _SCALAR_PACKER.pack(list(obj))
        except _NOT_SCALAR:
            pass
        else:
            size = len(items)
            return (_TUPLE_HEADS[size] if size < 256 else _ext_head(_TUPLE, size)) + items
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
