"""Compact, type-exact bytes for keyed state and checkpoint files: msgpack for data,
pickle only where the job allows it, and never on read unless the reader asks.

*Data* is what msgpack says exactly -- None, bool, int (64-bit), float, str, bytes, and
lists and dicts of data -- plus these as msgpack extensions: a tuple (its items), a
frozenset (keys: its members' bytes, sorted), an int beyond 64 bits, a Decimal, a date,
a time, a datetime (naive or at a fixed offset), and the value classes that the layers
above register when they are imported (``register_data_class``): Row, Instant,
TimeWindow, CountWindow, GlobalWindow. So values of every declared type (``Types.*``
except PICKLED_BYTE_ARRAY) and the engine's windows are data. This module imports no
project code.

Anything else (a set, a user class, a subclass of a builtin, a namedtuple, a str with
lone surrogates, nesting deeper than 511 levels) is not data. The ``serialize_*``
functions pickle it inside an extension (a value that msgpack refuses as a whole is
pickled whole); the ``serialize_data*`` functions raise ``NotDataError`` instead. Every
type comes back exact, except that a bytearray or memoryview comes back as bytes.

Reading chooses what a pickle extension becomes: ``deserialize`` unpickles it (only for
state the job declares pickled), ``deserialize_deferred`` keeps it as a ``Pickled``
placeholder (its bytes, written back unchanged, unpickled later by ``resolve_pickled``
once the job has declared what may be), ``deserialize_data`` raises ``PickledDataError``.

``serialize_key`` is canonical: equal keys built of the same types give equal bytes
(a frozenset's members are sorted by their bytes; pickles are memo-free, so sharing
sub-objects does not change them; other pickled objects whose pickle depends on more
than their value, e.g. a frozenset inside a user class, are not canonical). These bytes
are a key's identity on every state backend (``key_identity``), as pickled bytes are in
PyFlink: keys equal in Python but of different types (``1``, ``1.0`` and ``True``;
``(1, 2)`` and ``(1.0, 2)``; ``0.0`` and ``-0.0``) are different keys, every NaN with
the same bits is one key, and None is a key.
"""
from __future__ import annotations

import datetime
import io
import pickle
from decimal import Decimal
from typing import Any, Callable, Dict, Optional, Tuple

import msgpack

__all__ = ["serialize_key", "serialize_value", "serialize_data", "serialize_data_key",
           "serialize_value_items", "serialize_data_items",
           "deserialize", "deserialize_deferred", "deserialize_data", "key_item_bytes",
           "data_key_item_bytes", "PAIR_HEADER", "Pickled", "resolve_pickled",
           "deferred_count", "NotDataError", "PickledDataError", "register_data_class",
           "KeyIdentity", "RAW_KEY_TYPES", "key_identity", "user_key"]

_TUPLE = 1
_PICKLE = 2
_FROZENSET = 3  # keys only: the members' bytes, sorted
_BIG_INT = 4  # signed little-endian bytes
_DECIMAL = 5  # str()
_DATE = 6  # [year, month, day]
_TIME = 7  # [hour, minute, second, microsecond] (naive)
_DATETIME = 8  # [year, month, day, hour, minute, second, microsecond, UTC offset s or None]
ROW = 9  # api.common.types.Row: [field names or None, values, row kind]
INSTANT = 10  # api.common.time.Instant: [seconds, nanos]
TIME_WINDOW = 11  # engine.time.windows.TimeWindow: [start, end]
COUNT_WINDOW = 12  # engine.time.windows.CountWindow: [id]
GLOBAL_WINDOW = 13  # engine.time.windows.GlobalWindow: []
_REGISTRABLE = (ROW, INSTANT, TIME_WINDOW, COUNT_WINDOW, GLOBAL_WINDOW)
_SAME_TYPE = 14  # a list of items of one type above: [its code, [each item's fields]]
_PROTOCOL = 5


class NotDataError(TypeError):
    """A value is not data (see the module docstring) where only data may be stored."""


class PickledDataError(ValueError):
    """Stored bytes hold a pickled object where nothing may be unpickled."""


class Pickled:
    """A pickled object read from stored state and not unpickled: its pickle bytes.
    Serializing it writes the same bytes back; ``resolve_pickled`` unpickles it."""

    __slots__ = ("data",)

    def __init__(self, data: bytes):
        self.data = bytes(data)

    def __eq__(self, other) -> bool:
        return type(other) is Pickled and other.data == self.data

    def __hash__(self) -> int:
        return hash(self.data)

    def __repr__(self) -> str:
        return f"Pickled({len(self.data)} bytes)"


# -- data classes beyond msgpack's own types -------------------------------------------

def _date_fields(d: datetime.date) -> list:
    return [d.year, d.month, d.day]


def _time_fields(t: datetime.time) -> Optional[list]:
    if t.tzinfo is not None:
        return None
    return [t.hour, t.minute, t.second, t.microsecond]


def _datetime_fields(d: datetime.datetime) -> Optional[list]:
    if d.tzinfo is None:
        offset = None
    elif type(d.tzinfo) is datetime.timezone:
        offset = d.utcoffset() // datetime.timedelta(microseconds=1)
    else:  # a zone with rules (zoneinfo, pytz) is more than an offset
        return None
    return [d.year, d.month, d.day, d.hour, d.minute, d.second, d.microsecond, offset]


def _datetime(fields: list) -> datetime.datetime:
    *parts, offset = fields
    zone = None if offset is None else datetime.timezone(
        datetime.timedelta(microseconds=offset))
    return datetime.datetime(*parts, tzinfo=zone)


# type -> (extension code, fields of a value, or None where the value is not data)
_TO_DATA: Dict[type, Tuple[int, Callable[[Any], Optional[list]]]] = {
    Decimal: (_DECIMAL, str),
    datetime.date: (_DATE, _date_fields),
    datetime.time: (_TIME, _time_fields),
    datetime.datetime: (_DATETIME, _datetime_fields),
}
# extension code -> a value of its fields
_FROM_DATA: Dict[int, Callable[[list], Any]] = {
    _DECIMAL: Decimal,
    _DATE: lambda f: datetime.date(*f),
    _TIME: lambda f: datetime.time(*f),
    _DATETIME: _datetime,
}
_CLASS_OF_CODE: Dict[int, str] = {}  # code -> the value class registered with it


def register_data_class(cls: type, code: int, fields_of: Callable[[Any], list],
                        from_fields: Callable[[list], Any]) -> None:
    """Makes the instances of ``cls`` (exactly that class) data, stored as extension
    ``code`` (one of ROW, INSTANT, TIME_WINDOW, COUNT_WINDOW, GLOBAL_WINDOW) holding
    ``fields_of(value)``, and read back as ``from_fields(fields)``. The module that defines
    a value class registers it when it is imported; a code is taken by one class only."""
    if code not in _REGISTRABLE:
        raise ValueError(f"extension code {code} is not one a value class may take")
    name = f"{cls.__module__}.{cls.__qualname__}"
    if _CLASS_OF_CODE.setdefault(code, name) != name:  # (a module imported again may)
        raise ValueError(f"extension code {code} is already taken by another class")
    _TO_DATA[cls] = (code, fields_of)
    _FROM_DATA[code] = from_fields
    _by_type.clear()


_NO_DATA = (None, None)
_by_type: Dict[type, Tuple[Optional[int], Optional[Callable[[Any], Optional[list]]]]] = {}


def _converter(t: type) -> Tuple[Optional[int], Optional[Callable[[Any], Optional[list]]]]:
    """(extension code, fields of a value) of type ``t`` as data, or (None, None)."""
    found = _by_type.get(t)
    if found is None:
        found = _by_type[t] = _TO_DATA.get(t) or _NO_DATA
    return found


def _data_of(obj: Any) -> Optional[Tuple[int, Any]]:
    """(extension code, fields) of a data object beyond msgpack's types, else None."""
    t = type(obj)
    if t is int:  # (msgpack asks only for ints beyond 64 bits)
        return _BIG_INT, obj.to_bytes((obj.bit_length() + 8) // 8, "little", signed=True)
    code, fields_of = _converter(t)
    if code is None:
        return None
    fields = fields_of(obj)
    return None if fields is None else (code, fields)


# -- writing ---------------------------------------------------------------------------

def _canonical_pickle(obj: Any) -> bytes:
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=_PROTOCOL)
    pickler.fast = True  # no memo: equal objects give equal bytes whatever they share
    pickler.dump(obj)
    return buffer.getvalue()


def _value_pickle(obj: Any) -> bytes:
    return pickle.dumps(obj, _PROTOCOL)


def _refuse(obj: Any) -> bytes:
    raise NotDataError(f"a {type(obj).__module__}.{type(obj).__qualname__} is not data "
                       "that can be stored without pickle")


def _make_default(pickled: Callable[[Any], bytes], canonical: bool) -> Callable:
    """A packer's hook for what msgpack does not pack itself: the extensions above, and
    ``pickled(obj)`` (a pickle, or NotDataError) for what is not data."""
    def default(obj: Any) -> msgpack.ExtType:
        t = type(obj)
        if t is tuple:
            return msgpack.ExtType(_TUPLE, _items(list(obj), default))
        if t is Pickled:
            return msgpack.ExtType(_PICKLE, obj.data)
        if t is frozenset and canonical:  # iteration order varies: sort the members' bytes
            # Each member through a fresh packer: the top-level packer is mid-pack here.
            members = sorted(_whole(member, _fresh_packer(default), pickled)
                             for member in obj)
            return msgpack.ExtType(_FROZENSET, msgpack.packb(members))
        data = _data_of(obj)
        if data is not None:
            code, fields = data
            return msgpack.ExtType(code, fields if code == _BIG_INT
                                   else _items(fields, default))
        return msgpack.ExtType(_PICKLE, pickled(obj))
    return default


def _items(items: list, default) -> bytes:
    try:  # the common case first: scalars
        return _SCALAR_PACKER.pack(items)
    except _NOT_SCALAR:
        return _packb(items, default)


def _fresh_packer(default) -> msgpack.Packer:
    return msgpack.Packer(default=default, strict_types=True, use_bin_type=True)


def _packb(obj: Any, default) -> bytes:
    # A fresh packer: the hooks above run inside a packer, which must not be re-entered.
    return _fresh_packer(default).pack(obj)


def _whole(obj: Any, packer: msgpack.Packer, pickled: Callable[[Any], bytes]) -> bytes:
    """``packer``'s bytes of ``obj``; what msgpack refuses as a whole is ``pickled``."""
    try:
        return packer.pack(obj)
    except (UnicodeEncodeError, ValueError):
        return msgpack.packb(msgpack.ExtType(_PICKLE, pickled(obj)))


# Without a hook, so never re-entered (the hooks above may use it): packs None, bool,
# int, float, str, bytes and lists and dicts of those exactly as the packers below do,
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


def _scalar_tuple(obj: tuple) -> Optional[bytes]:
    """The bytes of a tuple of scalars as the packers write it (an extension holding the
    msgpack of its items), ~4x faster than through their hook; None for another tuple."""
    try:
        items = _SCALAR_PACKER.pack(list(obj))
    except _NOT_SCALAR:
        return None
    size = len(items)
    return (_TUPLE_HEADS[size] if size < 256 else _ext_head(_TUPLE, size)) + items


class _Writer:
    """Serializes keys and values, pickling what is not data with ``pickled`` (which may
    raise NotDataError instead). The packers are reused (4x faster than packb); a
    backend is single-threaded."""

    def __init__(self, key_pickle: Callable[[Any], bytes], value_pickle: Callable[[Any], bytes]):
        self._key_pickle = key_pickle
        self._value_pickle = value_pickle
        self._key_packer = _fresh_packer(_make_default(key_pickle, canonical=True))
        self._value_default = _make_default(value_pickle, canonical=False)
        self._value_packer = _fresh_packer(self._value_default)

    def key(self, obj: Any) -> bytes:
        if type(obj) is tuple:  # (a tuple of scalars: a common key, faster, same bytes)
            data = _scalar_tuple(obj)
            if data is not None:
                return data
        return _whole(obj, self._key_packer, self._key_pickle)

    def key_item(self, obj: Any) -> Optional[bytes]:
        if type(obj) is list or type(obj) is dict:
            return None
        try:
            return self._key_packer.pack(obj)
        except Exception:
            return None

    def value(self, obj: Any) -> bytes:
        if type(obj) is tuple:  # (the common tuple of scalars: faster, same bytes)
            data = _scalar_tuple(obj)
            if data is not None:
                return data
        return _whole(obj, self._value_packer, self._value_pickle)

    def items(self, items: list) -> bytes:
        """A list as ``value`` writes it, or, faster, a list of tuples or of one data class
        as one extension holding their fields (the same list when read)."""
        try:
            return _SCALAR_PACKER.pack(items)
        except _NOT_SCALAR:
            pass
        t = type(items[0])
        code, fields_of = (_TUPLE, list) if t is tuple else _converter(t)
        if code is not None:
            for item in items:
                if type(item) is not t:
                    break
            else:
                fields = list(map(fields_of, items))
                if None not in fields:
                    try:
                        return msgpack.packb(msgpack.ExtType(_SAME_TYPE, _items(
                            [code, fields], self._value_default)))
                    except (UnicodeEncodeError, ValueError):
                        pass
        return self.value(items)


_PICKLING = _Writer(_canonical_pickle, _value_pickle)
_DATA_ONLY = _Writer(_refuse, _refuse)

serialize_key: Callable[[Any], bytes] = _PICKLING.key
"""Canonical bytes of a state key, namespace or (key, namespace) pair; what is not data
is pickled."""
serialize_data_key: Callable[[Any], bytes] = _DATA_ONLY.key
"""As ``serialize_key``, but raises NotDataError for what is not data."""
serialize_value: Callable[[Any], bytes] = _PICKLING.value
"""Bytes of a state value; what is not data is pickled."""
serialize_data: Callable[[Any], bytes] = _DATA_ONLY.value
"""Bytes of data (a state value, checkpoint metadata); NotDataError for anything else."""
serialize_value_items: Callable[[list], bytes] = _PICKLING.items
"""``serialize_value`` of a list of values (of keys), faster for a list of one type."""
serialize_data_items: Callable[[list], bytes] = _DATA_ONLY.items
"""``serialize_data`` of a list of values (of keys), faster for a list of one type."""


# -- key identity ----------------------------------------------------------------------

RAW_KEY_TYPES = frozenset((str, int, bytes))
"""Key types that stand for themselves in state: a str, int or bytes equals only keys of
its own type (never 1.0 or True), and then exactly when their bytes are equal."""


class KeyIdentity:
    """A key of any type but str, int and bytes, as state compares it: by its canonical
    bytes (``serialize_key``). ``key`` is the key itself, for the user."""

    __slots__ = ("key", "data")

    def __init__(self, key: Any):
        self.key = key
        try:
            self.data = serialize_key(key)
        except Exception as e:
            raise TypeError(f"key {key!r} cannot be serialized, so it cannot be a key of "
                            f"keyed state: {e}") from e

    def __eq__(self, other) -> bool:
        return type(other) is KeyIdentity and other.data == self.data

    def __hash__(self) -> int:
        return hash(self.data)

    def __repr__(self) -> str:
        return repr(self.key)


_IDENTIFIED_TYPES = RAW_KEY_TYPES | {KeyIdentity}


def key_identity(key: Any) -> Any:
    """What state compares for ``key``: a str, int or bytes key itself, any other its
    ``KeyIdentity`` (an identity stays itself)."""
    return key if type(key) in _IDENTIFIED_TYPES else KeyIdentity(key)


def user_key(identity: Any) -> Any:
    """The key of a ``key_identity``: what the user gave."""
    return identity.key if type(identity) is KeyIdentity else identity


PAIR_HEADER = b"\x92"
"""The msgpack header of a two-item list: see ``key_item_bytes``."""

key_item_bytes: Callable[[Any], Optional[bytes]] = _PICKLING.key_item
"""The bytes of ``obj`` as an item of a serialized key list, so that
``serialize_key([a, b]) == PAIR_HEADER + key_item_bytes(a) + key_item_bytes(b)``
(to serialize a pair from its parts' bytes computed once); None where they depend on
the list: for a list or dict (its nesting depth counts towards msgpack's limit), for
what msgpack refuses (the whole list is pickled instead) and for what fails (so that
``serialize_key`` of the pair reports it)."""
data_key_item_bytes: Callable[[Any], Optional[bytes]] = _DATA_ONLY.key_item
"""``key_item_bytes`` for ``serialize_data_key``."""


# -- reading ---------------------------------------------------------------------------

def _make_reader(on_pickle: Callable[[bytes], Any]) -> Callable[[bytes], Any]:
    """A deserializer that turns a pickle extension into ``on_pickle(its bytes)``."""
    def ext_hook(code: int, data: bytes) -> Any:
        if code == _TUPLE:
            return tuple(read(data))
        if code == _PICKLE:
            return on_pickle(data)
        if code == _FROZENSET:
            return frozenset(map(read, msgpack.unpackb(data)))
        if code == _BIG_INT:
            return int.from_bytes(data, "little", signed=True)
        if code == _SAME_TYPE:
            code, fields = read(data)
            if code == _TUPLE:
                return [tuple(f) for f in fields]
            return list(map(_FROM_DATA[code], fields))
        from_data = _FROM_DATA.get(code)
        if from_data is None:
            raise ValueError(f"unknown msgpack extension type {code} in stored state" + (
                " (a value class whose module is not imported)" if code in _REGISTRABLE
                else ""))
        return from_data(read(data))
    def read(data: bytes, unpackb=msgpack.unpackb) -> Any:
        return unpackb(data, ext_hook=ext_hook, strict_map_key=False, raw=False)
    return read


class _Counter:
    count = 0


_deferred = _Counter()


def _defer(data: bytes) -> Pickled:
    _deferred.count += 1
    return Pickled(data)


def _refuse_pickle(data: bytes) -> Any:
    raise PickledDataError("the stored bytes hold a pickled object, which may not be "
                           "unpickled here")


deserialize: Callable[[bytes], Any] = _make_reader(pickle.loads)
"""The object of bytes made by the ``serialize_*`` functions, unpickling what was pickled:
only for state the job declares pickled."""
deserialize_deferred: Callable[[bytes], Any] = _make_reader(_defer)
"""As ``deserialize``, but a pickled object comes back as a ``Pickled`` placeholder
(and ``deferred_count()`` grows by one)."""
deserialize_data: Callable[[bytes], Any] = _make_reader(_refuse_pickle)
"""As ``deserialize``, but a pickled object raises PickledDataError: nothing runs."""


def deferred_count() -> int:
    """How many ``Pickled`` placeholders ``deserialize_deferred`` has made in this
    process: compare before and after a call to learn whether it made any."""
    return _deferred.count


def resolve_pickled(obj: Any, unpickle: Callable[[Pickled], Any]) -> Any:
    """``obj`` with every ``Pickled`` placeholder in it (inside tuples, lists, dicts,
    frozensets and Rows) replaced by ``unpickle(placeholder)``."""
    t = type(obj)
    if t is Pickled:
        return unpickle(obj)
    if t is tuple or t is list:
        return t(resolve_pickled(item, unpickle) for item in obj)
    if t is dict:
        return {resolve_pickled(k, unpickle): resolve_pickled(v, unpickle)
                for k, v in obj.items()}
    if t is frozenset:
        return frozenset(resolve_pickled(item, unpickle) for item in obj)
    code, fields_of = _converter(t)
    if code in _REGISTRABLE:  # a value class: its fields may hold placeholders
        return _FROM_DATA[code](resolve_pickled(fields_of(obj), unpickle))
    return obj
