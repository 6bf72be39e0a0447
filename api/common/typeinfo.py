"""
Type information, as in ``pyflink.common.typeinfo``.

Besides PyFlink's API, every :class:`TypeInformation` offers two methods the engine calls:

* ``convert(value)``: the value as PyFlink hands it to the next operator after serializing
  it with this type (FLOAT rounded to 32 bits, integers range-checked, ROW as a named
  ``Row``, ...). Wrong Python types raise ``TypeError``, out-of-range integers
  ``OverflowError``. ``convert`` is idempotent.
* ``to_print_string(value)``: the line PyFlink's ``print()`` sink writes for a record of
  this type, given the record as the upstream function returned it (Java ``toString`` of
  the serialized value, or Python ``str()`` for pickled records and ROW fields).

PyFlink's ``to_internal_type``/``from_internal_type`` (its wire form of a value: epoch
microseconds for times, a row kind before a row's fields) work as there;
``get_java_type_info`` has no Java type to return here.
"""
from array import array
import calendar
import datetime
import time
from enum import Enum
import math
import numbers
import operator
import pickle
import struct
from decimal import Decimal, InvalidOperation
from functools import partial
from operator import attrgetter, itemgetter
from typing import Annotated, Any, Callable, List, NamedTuple, Optional, Tuple

import msgspec

from core.keygroups import KeyType

from .time import Instant
from .types import Row, RowKind, new_row

__all__ = ['TypeInformation', 'Types', 'BasicType', 'BasicTypeInfo', 'PickledBytesTypeInfo',
           'RowTypeInfo', 'TupleTypeInfo', 'ListTypeInfo', 'MapTypeInfo', 'BasicArrayTypeInfo',
           'PrimitiveArrayTypeInfo', 'ObjectArrayTypeInfo', 'SqlTimeTypeInfo', 'DateTypeInfo',
           'TimeTypeInfo', 'TimestampTypeInfo', 'InstantTypeInfo', 'LocalTimeTypeInfo',
           'ExternalTypeInfo']

_EPOCH = datetime.date(1970, 1, 1)
# PyFlink's wire form of a naive time of day is shifted by the local UTC offset at the epoch.
_LOCAL_EPOCH_OFFSET_MICROS = calendar.timegm(time.localtime(0)) * 10 ** 6


class TypeInformation(object):
    """The type of the records of a stream or of a state; tells how records are serialized."""

    def convert(self, value):
        """Returns ``value`` as PyFlink hands it on after serializing it with this type."""
        raise NotImplementedError

    def to_print_string(self, value) -> str:
        """Returns the line ``print()`` writes for the record ``value`` of this type."""
        return self._java_string(self.convert(value), False)

    def to_java_string(self, value) -> str:
        """Returns Java's ``toString()`` of the record ``value`` of this type, as Flink's
        string encoders write it (a ROW as ``+I[...]``, unlike ``print()``)."""
        return self._java_string(self.convert(value), False)

    def collected_value(self, value):
        """Returns the converted record ``value`` as ``execute_and_collect`` hands it back:
        collected records pass through Java, so a FLOAT comes back as the Python float of
        Java's shortest decimal text (110.1, not 110.0999984741211)."""
        return value

    def _java_string(self, value, deep: bool) -> str:
        # Java's String.valueOf of the converted value; ``deep`` prints arrays element by
        # element, as Flink's Tuple and Row toString do.
        return 'null' if value is None else str(value)

    def chunk_converter(self, timed: bool) -> Callable[[list], Optional[list]]:
        """A function converting a whole chunk of elements (values, or ``(timestamp,
        value)`` pairs if ``timed``) in one pass, much cheaper than converting each value:
        it returns what ``convert`` gives for each, or None where it cannot (then convert
        each value, which also names one that does not fit)."""
        schema = self.exact_schema()
        if schema is None:
            return _no_chunk_conversion
        return partial(_converted_chunk, _chunk_of(schema, timed))

    def exact_schema(self):
        """The msgspec type whose strict conversion of a value gives what ``convert``
        gives, or fails where ``convert`` does something else; None if there is none.
        Every converted value fits it as it is."""
        return None

    def wire_form(self, timed: bool) -> Optional['WireForm']:
        """How a chunk of converted elements of this type (``(timestamp, value)`` pairs
        if ``timed``) crosses an exchange as msgpack; None if it is pickled."""
        schema = self._wire_schema()
        if schema is None:
            return None
        return WireForm(List[Tuple[Any, schema] if timed else schema], None, None)

    def _wire_schema(self):
        """The msgspec type every converted value of this type fits: ``exact_schema``, or
        also one for a type whose conversion rounds (FLOAT); None if there is none."""
        return self.exact_schema()

    def _wrong_type(self, value, expected: str):
        return TypeError("%r expects %s, got %s: %r" % (self, expected, type(value).__name__, value))

    def need_conversion(self) -> bool:
        """Whether ``to_internal_type`` changes values of this type."""
        return False

    def to_internal_type(self, obj):
        """``obj`` in PyFlink's internal (wire) form."""
        return obj

    def from_internal_type(self, obj):
        """The Python value of ``obj`` in PyFlink's internal (wire) form."""
        return obj

    def get_java_type_info(self):
        """JVM-only: there is no Java type information here, so this returns None."""
        return None

    def _key_type(self):
        """Where keys of this type go, as a ``core.keygroups.KeyType``; None: by their
        pickled bytes, as untyped keys (also for types whose placement is not modelled)."""
        return None

    def __ne__(self, other):
        return not self == other


class BasicType(Enum):
    """The basic types, named as Flink's Java classes."""
    STRING = "String"
    BYTE = "Byte"
    BOOLEAN = "Boolean"
    SHORT = "Short"
    INT = "Integer"
    LONG = "Long"
    FLOAT = "Float"
    DOUBLE = "Double"
    CHAR = "Char"
    BIG_INT = "BigInteger"
    BIG_DEC = "BigDecimal"
    INSTANT = "Instant"


class BasicTypeInfo(TypeInformation):
    """Type information for primitive types (int, long, double, ...), String, BigInteger and
    BigDecimal; ``BasicTypeInfo.INT_TYPE_INFO()`` is ``Types.INT()``."""

    STRING_TYPE_INFO = staticmethod(lambda: Types.STRING())
    BYTE_TYPE_INFO = staticmethod(lambda: Types.BYTE())
    BOOLEAN_TYPE_INFO = staticmethod(lambda: Types.BOOLEAN())
    SHORT_TYPE_INFO = staticmethod(lambda: Types.SHORT())
    INT_TYPE_INFO = staticmethod(lambda: Types.INT())
    LONG_TYPE_INFO = staticmethod(lambda: Types.LONG())
    FLOAT_TYPE_INFO = staticmethod(lambda: Types.FLOAT())
    DOUBLE_TYPE_INFO = staticmethod(lambda: Types.DOUBLE())
    CHAR_TYPE_INFO = staticmethod(lambda: Types.CHAR())
    BIG_INT_TYPE_INFO = staticmethod(lambda: Types.BIG_INT())
    BIG_DEC_TYPE_INFO = staticmethod(lambda: Types.BIG_DEC())
    INSTANT_TYPE_INFO = staticmethod(lambda: Types.INSTANT())

    def __init__(self, name: str, java_class: str):
        self._name = name
        self._java_class = java_class

    def _key_type(self):
        kind = _KEY_KINDS.get(self._java_class)
        return None if kind is None else KeyType(kind)

    def __eq__(self, other):
        return type(other) is type(self) and self._name == other._name

    def __repr__(self):
        return self._name


class WireForm(NamedTuple):
    """A type's records on an exchange: msgpack of ``schema`` (a chunk's), of the list of
    elements as it is or as ``to_wire`` gives it (``from_wire`` gives it back)."""
    schema: Any
    to_wire: Optional[Callable[[list], list]]
    from_wire: Optional[Callable[[list], list]]


def _chunk_of(schema, timed: bool):
    """The msgspec type of a chunk of elements of ``schema`` (a Struct: its type
    information is built once, a list type's on every conversion)."""
    return msgspec.defstruct("Chunk", [
        ("elements", List[Tuple[Any, schema]] if timed else List[schema])], array_like=True)


def _converted_chunk(chunk_type, elements: list) -> Optional[list]:
    try:
        return msgspec.convert((elements,), chunk_type).elements
    except msgspec.ValidationError:
        return None


def _no_chunk_conversion(elements: list) -> None:
    return None


_KEY_KINDS = {"java.lang.String": "STRING", "java.lang.Byte": "BYTE",
              "java.lang.Boolean": "BOOLEAN", "java.lang.Short": "SHORT",
              "java.lang.Integer": "INT", "java.lang.Long": "LONG", "java.lang.Float": "FLOAT",
              "java.lang.Double": "DOUBLE"}


class _StringTypeInfo(BasicTypeInfo):

    def convert(self, value):
        if not isinstance(value, str):
            raise self._wrong_type(value, 'str')
        return value

    def exact_schema(self):
        return str


class _IntegerTypeInfo(BasicTypeInfo):

    def __init__(self, name: str, java_class: str, bits: int):
        super().__init__(name, java_class)
        self._bits = bits

    def convert(self, value):
        if isinstance(value, float):
            value = int(value)  # PyFlink truncates floats written to integer fields
        else:
            try:
                value = operator.index(value)
            except TypeError:
                raise self._wrong_type(value, 'int') from None
        if self._bits and not -(1 << self._bits - 1) <= value < 1 << self._bits - 1:
            raise OverflowError("%d is out of range for %r (%d-bit)" % (value, self, self._bits))
        return value

    def exact_schema(self):
        if not self._bits:
            return int
        return Annotated[int, msgspec.Meta(ge=-(1 << self._bits - 1), le=(1 << self._bits - 1) - 1)]


class _FloatTypeInfo(BasicTypeInfo):

    def __init__(self, name: str, java_class: str, single: bool):
        super().__init__(name, java_class)
        self._single = single

    def convert(self, value):
        if not hasattr(type(value), '__float__'):  # (as PyFlink: a Decimal, a Fraction)
            raise self._wrong_type(value, 'float')
        if not self._single:
            return float(value)
        try:
            return struct.unpack('f', struct.pack('f', value))[0]
        except OverflowError:
            return math.copysign(math.inf, value)

    def exact_schema(self):
        return None if self._single else float  # (no float is 32-bit as it is)

    def _wire_schema(self):
        return float

    def chunk_converter(self, timed: bool) -> Callable[[list], Optional[list]]:
        if not self._single:
            return super().chunk_converter(timed)
        return partial(_rounded_chunk, _chunk_of(float, timed), _singles, timed)

    def _java_string(self, value, deep):
        return 'null' if value is None else _java_float_string(value, self._single)

    def collected_value(self, value):
        return value if value is None or not self._single else float(
            _java_float_string(value, True))


class _BooleanTypeInfo(BasicTypeInfo):

    def convert(self, value):
        if not isinstance(value, numbers.Number):
            raise self._wrong_type(value, 'bool')
        return bool(value)

    def exact_schema(self):
        return bool

    def _java_string(self, value, deep):
        return 'null' if value is None else ('true' if value else 'false')


class _BigDecTypeInfo(BasicTypeInfo):

    def convert(self, value):
        if isinstance(value, Decimal):
            return value
        try:
            return Decimal(str(value))
        except InvalidOperation:
            raise self._wrong_type(value, 'a decimal.Decimal') from None


class InstantTypeInfo(BasicTypeInfo):
    """Type information for :class:`Instant`; supports None."""

    def convert(self, value):
        if value is not None and not isinstance(value, Instant):
            raise self._wrong_type(value, 'an Instant')
        return value

    def need_conversion(self) -> bool:
        return True

    def to_internal_type(self, obj):
        """Epoch microseconds."""
        return None if obj is None else obj.to_epoch_milli() * 1000

    def from_internal_type(self, obj):
        return None if obj is None else Instant.of_epoch_milli(obj // 1000)

    def _java_string(self, value, deep):
        if value is None:
            return 'null'
        moment = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=value.seconds)
        nanos = value.nanos
        if nanos == 0:
            fraction = ''
        elif nanos % 1_000_000 == 0:
            fraction = '.%03d' % (nanos // 1_000_000)
        elif nanos % 1000 == 0:
            fraction = '.%06d' % (nanos // 1000)
        else:
            fraction = '.%09d' % nanos
        return moment.strftime('%Y-%m-%dT%H:%M:%S') + fraction + 'Z'


class SqlTimeTypeInfo(TypeInformation):
    """The java.sql time types: ``SqlTimeTypeInfo.DATE()``, ``TIME()``, ``TIMESTAMP()``."""

    @staticmethod
    def DATE() -> 'DateTypeInfo':
        return DateTypeInfo()

    @staticmethod
    def TIME() -> 'TimeTypeInfo':
        return TimeTypeInfo()

    @staticmethod
    def TIMESTAMP() -> 'TimestampTypeInfo':
        return TimestampTypeInfo()


class DateTypeInfo(TypeInformation):
    """Type information for ``datetime.date`` (Java ``java.sql.Date``)."""

    def convert(self, value):
        if isinstance(value, datetime.datetime):
            return value.date()
        if not isinstance(value, datetime.date):
            raise self._wrong_type(value, 'a datetime.date')
        return value

    def need_conversion(self) -> bool:
        return True

    def to_internal_type(self, d):
        """Days since 1970-01-01."""
        return None if d is None else (d - _EPOCH).days

    def from_internal_type(self, v):
        return None if v is None else _EPOCH + datetime.timedelta(days=v)

    def __eq__(self, other):
        return isinstance(other, DateTypeInfo)

    def __repr__(self):
        return 'DateTypeInfo'


class TimeTypeInfo(TypeInformation):
    """Type information for ``datetime.time`` (Java ``java.sql.Time``), millisecond precision."""

    def convert(self, value):
        if not isinstance(value, datetime.time):
            raise self._wrong_type(value, 'a datetime.time')
        return value.replace(microsecond=value.microsecond // 1000 * 1000)

    def need_conversion(self) -> bool:
        return True

    def to_internal_type(self, t):
        """Microseconds since midnight UTC (a naive time is shifted as PyFlink does)."""
        if t is None:
            return None
        if t.tzinfo is None:
            offset_micros = _LOCAL_EPOCH_OFFSET_MICROS
        else:
            offset = t.utcoffset() or datetime.timedelta()
            offset_micros = offset // datetime.timedelta(microseconds=1)
        micros = ((t.hour * 60 + t.minute) * 60 + t.second) * 10 ** 6 + t.microsecond
        return micros - offset_micros

    def from_internal_type(self, t):
        if t is None:
            return None
        seconds, micros = divmod(t + _LOCAL_EPOCH_OFFSET_MICROS, 10 ** 6)
        minutes, seconds = divmod(seconds, 60)
        return datetime.time(*divmod(minutes, 60), seconds, micros)

    def _java_string(self, value, deep):
        return 'null' if value is None else value.strftime('%H:%M:%S')

    def __eq__(self, other):
        return isinstance(other, TimeTypeInfo)

    def __repr__(self):
        return 'TimeTypeInfo'


class TimestampTypeInfo(TypeInformation):
    """Type information for ``datetime.datetime`` (Java ``java.sql.Timestamp``), millisecond
    precision."""

    def convert(self, value):
        if not isinstance(value, datetime.datetime):
            raise self._wrong_type(value, 'a datetime.datetime')
        return value.replace(microsecond=value.microsecond // 1000 * 1000)

    def need_conversion(self) -> bool:
        return True

    def to_internal_type(self, dt):
        """Epoch microseconds (a naive datetime is local time)."""
        if dt is None:
            return None
        seconds = calendar.timegm(dt.utctimetuple()) if dt.tzinfo else time.mktime(dt.timetuple())
        return int(seconds) * 10 ** 6 + dt.microsecond

    def from_internal_type(self, ts):
        if ts is None:
            return None
        return datetime.datetime.fromtimestamp(ts // 10 ** 6).replace(microsecond=ts % 10 ** 6)

    def _java_string(self, value, deep):
        if value is None:
            return 'null'
        fraction = ('%06d' % value.microsecond).rstrip('0') or '0'
        return value.strftime('%Y-%m-%d %H:%M:%S.') + fraction

    def __eq__(self, other):
        return isinstance(other, TimestampTypeInfo)

    def __repr__(self):
        return 'TimestampTypeInfo'


class PickledBytesTypeInfo(TypeInformation):
    """Records are any Python objects, serialized with pickle (the default type)."""

    def convert(self, value):
        return value

    def to_print_string(self, value) -> str:
        return value if isinstance(value, str) else str(value)

    def _java_string(self, value, deep):
        # Inside a Java record the object is a byte[]: its pickle bytes, or an identity.
        if value is None:
            return 'null'
        if deep:
            return _java_bytes_string(pickle.dumps(value, protocol=5))
        return _java_identity('[B', value)

    def __eq__(self, other):
        return isinstance(other, PickledBytesTypeInfo)

    def __repr__(self):
        return 'PickledByteArrayTypeInfo'


class RowTypeInfo(TypeInformation):
    """Type information for :class:`Row`; fields may be None."""

    def __init__(self, field_types: List[TypeInformation], field_names: List[str] = None):
        self._field_types = field_types
        self._field_names = field_names
        self._names = field_names or ['f%d' % i for i in range(len(field_types))]

    def get_field_names(self) -> List[str]:
        return self._names

    def get_field_index(self, field_name: str) -> int:
        return self._field_names.index(field_name) if self._field_names else -1

    def get_field_types(self) -> List[TypeInformation]:
        return self._field_types

    def _key_type(self):
        return KeyType("ROW", tuple(t._key_type() for t in self._field_types))

    def convert(self, value):
        if isinstance(value, Row):
            values = value.get_fields_by_names(self._names)
            kind = value.get_row_kind()
        elif isinstance(value, (tuple, list)):
            values, kind = value, RowKind.INSERT
        else:
            raise self._wrong_type(value, 'a Row')
        if len(values) != len(self._field_types):
            raise ValueError("%r expects %d fields, got %d: %r"
                             % (self, len(self._field_types), len(values), value))
        return new_row(_converted_fields(self._field_types, self._names, values, True),
                       self._names, kind)

    def chunk_converter(self, timed: bool) -> Callable[[list], Optional[list]]:
        fields = _loose_fields(self._field_types)
        if fields is None:
            return _no_chunk_conversion
        schemas, singles = fields
        schema = Tuple[tuple(Optional[f] for f in schemas)]
        return partial(_converted_rows, _chunk_of(schema, False), singles, self._names, timed)

    def wire_form(self, timed: bool) -> Optional[WireForm]:
        """Rows cross as columns: (timestamps,) kinds, values."""
        schema = self._values_schema()
        if schema is None:
            return None
        if timed:
            return WireForm(Tuple[List[Any], List[int], List[schema]], _timed_rows_to_wire,
                            partial(_timed_rows_from_wire, self._names))
        return WireForm(Tuple[List[int], List[schema]], _rows_to_wire,
                        partial(_rows_from_wire, self._names))

    def _values_schema(self):
        """The wire schema of a row's values (each may be None), or None."""
        fields = [t._wire_schema() for t in self._field_types]
        return None if None in fields else Tuple[tuple(Optional[f] for f in fields)]

    def need_conversion(self) -> bool:
        return True

    def to_internal_type(self, obj):
        """The row kind's value, then the fields: from a Row, a tuple or list, a dict or an
        object's attributes (by field name)."""
        if obj is None:
            return None
        names = self.get_field_names()
        if isinstance(obj, dict):
            values = [obj.get(n) for n in names]
        elif isinstance(obj, Row):
            values = obj.get_fields_by_names(names) if hasattr(obj, '_fields') else list(obj)
        elif isinstance(obj, (tuple, list)):
            values = obj
        elif hasattr(obj, '__dict__'):
            values = [vars(obj).get(n) for n in names]
        else:
            raise ValueError("Unexpected tuple %r with RowTypeInfo" % obj)
        kind = obj.get_row_kind() if isinstance(obj, Row) else RowKind.INSERT
        return (kind.value,) + tuple(t.to_internal_type(v)
                                     for t, v in zip(self._field_types, values))

    def from_internal_type(self, obj):
        # a tuple or list is already a Python value (as in PyFlink, where pickling made it)
        if obj is None or isinstance(obj, (tuple, list)):
            return obj
        return tuple(t.from_internal_type(v) for t, v in zip(self._field_types, obj))

    def collected_value(self, value):
        if value is None:
            return None
        row = Row(*[None if v is None else t.collected_value(v)
                    for t, v in zip(self._field_types, value)])
        row._fields = value._fields
        row._row_kind = value.get_row_kind()
        return row

    def to_print_string(self, value) -> str:
        # PyFlink formats a ROW record in Python before it is serialized.
        if isinstance(value, Row):
            return '%s[%s]' % (value.get_row_kind(), ','.join(str(v) for v in value._values))
        return '+I[%s]' % ','.join(str(v) for v in self.convert(value))

    def _java_string(self, value, deep):
        if value is None:
            return 'null'
        return '%s[%s]' % (value.get_row_kind(), ', '.join(
            t._java_string(v, True) for t, v in zip(self._field_types, value)))

    def __eq__(self, other):
        return isinstance(other, RowTypeInfo) and self._field_types == other._field_types

    def __repr__(self):
        if self._field_names:
            return 'RowTypeInfo(%s)' % ', '.join(
                '%s: %r' % nt for nt in zip(self._field_names, self._field_types))
        return 'RowTypeInfo(%s)' % ', '.join(repr(t) for t in self._field_types)


_ROW_KINDS = tuple(RowKind)  # by value
_kind_value_of, _values_of = attrgetter('_row_kind._value_'), attrgetter('_values')


def _rows_to_wire(rows: list) -> tuple:
    return list(map(_kind_value_of, rows)), list(map(_values_of, rows))


def _rows_from_wire(names: List[str], wire: tuple) -> list:
    kinds, values = wire
    return [new_row(list(v), names, _ROW_KINDS[kind]) for kind, v in zip(kinds, values)]


def _timed_rows_to_wire(elements: list) -> tuple:
    return (list(map(itemgetter(0), elements)),
            *_rows_to_wire(list(map(itemgetter(1), elements))))


def _timed_rows_from_wire(names: List[str], wire: tuple) -> list:
    stamps, kinds, values = wire
    return list(zip(stamps, _rows_from_wire(names, (kinds, values))))


def _converted_rows(values_chunk, singles: List[int], names: List[str], timed: bool,
                    elements: list):
    """``RowTypeInfo.convert`` of each element (a Row, tuple or list) in one msgspec pass
    over their values (then rounding their FLOAT fields, at ``singles``), or None where
    that cannot be done."""
    values = list(map(itemgetter(1), elements)) if timed else elements
    if set(map(type, values)) == _TUPLES:  # (the common case: a function returned tuples)
        return _rows_of_values(values_chunk, singles, names, timed, elements, values,
                               [RowKind.INSERT] * len(values))
    values, kinds = [], []
    insert = RowKind.INSERT
    for element in elements:
        value = element[1] if timed else element
        kind = type(value)
        if kind is Row:
            attributes = value.__dict__
            fields = attributes.get('_fields', names)
            if fields is not names and fields != names:  # (convert picks them by name)
                return None
            values.append(attributes['_values'])
            kinds.append(attributes['_row_kind'])
        elif kind is tuple or kind is list:
            values.append(value)
            kinds.append(insert)
        else:
            return None
    return _rows_of_values(values_chunk, singles, names, timed, elements, values, kinds)


_TUPLES = {tuple}


def _rows_of_values(values_chunk, singles, names, timed, elements, values, kinds):
    """The rows of ``kinds`` holding ``values`` converted (None if they cannot be), in
    ``elements``' shape."""
    converted = _converted_chunk(values_chunk, values)
    if converted is None:
        return None
    if singles:
        converted = _round_singles(singles, converted)
    rows = [new_row(list(v), names, kind) for v, kind in zip(converted, kinds)]
    return list(zip(map(itemgetter(0), elements), rows)) if timed else rows


def _loose_fields(field_types):
    """The schemas that convert fields of ``field_types`` but for rounding FLOAT ones
    (``float``), and the positions of those; None if a field has no such schema (a FLOAT
    nested deeper, say)."""
    schemas, singles = [], []
    for i, field_type in enumerate(field_types):
        if isinstance(field_type, _FloatTypeInfo) and field_type._single:
            schemas.append(float)
            singles.append(i)
        else:
            schemas.append(field_type.exact_schema())
    return None if None in schemas else (schemas, singles)


def _rounded_chunk(chunk_type, round_values: Callable[[list], list], timed: bool,
                   elements: list) -> Optional[list]:
    """The chunk converted in one pass, then its values rounded by ``round_values``."""
    converted = _converted_chunk(chunk_type, elements)
    if not converted:
        return converted
    if not timed:
        return round_values(converted)
    stamps, values = zip(*converted)
    return list(zip(stamps, round_values(values)))


def _singles(column) -> list:
    """Floats rounded to 32 bits, as FLOAT's ``convert`` rounds each (C's cast of a double
    to a float, as in ``struct``: beyond the range, an infinity); None stays None."""
    try:
        return array('f', column).tolist()
    except TypeError:
        return [None if v is None else array('f', (v,))[0] for v in column]


def _round_singles(singles: List[int], values) -> list:
    """The tuples ``values`` with their fields at ``singles`` rounded to 32 bits."""
    if not values:
        return []
    columns = list(zip(*values))
    for i in singles:
        columns[i] = _singles(columns[i])
    return list(zip(*columns))


_CONVERSION_ERRORS = (TypeError, ValueError, OverflowError)


def _converted_fields(field_types, names, values, none_passes: bool) -> list:
    """Each field's value converted by its type (None kept as it is if ``none_passes``);
    a value that does not fit names its field (``f0``, ``f1``... in a tuple, as in Flink)."""
    try:
        if none_passes:
            return [None if v is None else t.convert(v) for t, v in zip(field_types, values)]
        return [t.convert(v) for t, v in zip(field_types, values)]
    except _CONVERSION_ERRORS:
        for name, field_type, value in zip(names, field_types, values):
            if value is None and none_passes:
                continue
            try:
                field_type.convert(value)
            except _CONVERSION_ERRORS as e:
                raise type(e)("field %r: %s" % (name, e)) from None
        raise


class TupleTypeInfo(TypeInformation):
    """Type information for tuples; fields may not be None (except pickled and Instant)."""

    def __init__(self, field_types: List[TypeInformation]):
        self._field_types = field_types

    def get_field_types(self) -> List[TypeInformation]:
        return self._field_types

    def _key_type(self):
        return KeyType("TUPLE", tuple(t._key_type() for t in self._field_types))

    def convert(self, value):
        if not isinstance(value, (tuple, list, Row)):
            raise self._wrong_type(value, 'a tuple')
        if len(value) != len(self._field_types):
            raise ValueError("%r expects %d fields, got %d: %r"
                             % (self, len(self._field_types), len(value), value))
        return tuple(_converted_fields(
            self._field_types, ['f%d' % i for i in range(len(value))], value, False))

    def exact_schema(self):
        fields = [t.exact_schema() for t in self._field_types]
        return None if None in fields else Tuple[tuple(fields)]

    def _wire_schema(self):
        fields = [t._wire_schema() for t in self._field_types]
        return None if None in fields else Tuple[tuple(fields)]

    def chunk_converter(self, timed: bool) -> Callable[[list], Optional[list]]:
        fields = _loose_fields(self._field_types)
        if fields is None or not fields[1]:
            return super().chunk_converter(timed)
        schemas, singles = fields
        return partial(_rounded_chunk, _chunk_of(Tuple[tuple(schemas)], timed),
                       partial(_round_singles, singles), timed)

    def collected_value(self, value):
        return tuple(t.collected_value(v) for t, v in zip(self._field_types, value))

    def need_conversion(self) -> bool:
        return True

    def to_internal_type(self, obj):
        if obj is None or not any(t.need_conversion() for t in self._field_types):
            return obj
        if not isinstance(obj, (list, tuple, Row)):
            raise ValueError("Unexpected tuple %r with TupleTypeInfo" % obj)
        return tuple(t.to_internal_type(v) for t, v in zip(self._field_types, obj))

    def from_internal_type(self, obj):
        # a tuple or list is already a Python value (as in PyFlink, where pickling made it)
        if obj is None or isinstance(obj, (tuple, list)):
            return obj
        return tuple(t.from_internal_type(v) for t, v in zip(self._field_types, obj))

    def _java_string(self, value, deep):
        if value is None:
            return 'null'
        return '(%s)' % ','.join(t._java_string(v, True) for t, v in zip(self._field_types, value))

    def __eq__(self, other):
        return isinstance(other, TupleTypeInfo) and self._field_types == other._field_types

    def __repr__(self):
        return 'TupleTypeInfo(%s)' % ', '.join(repr(t) for t in self._field_types)


class ListTypeInfo(TypeInformation):
    """Type information for lists; elements may not be None."""

    def __init__(self, element_type: TypeInformation):
        self.elem_type = element_type

    def convert(self, value):
        if not isinstance(value, (list, tuple)):
            raise self._wrong_type(value, 'a list')
        return [self.elem_type.convert(v) for v in value]

    def collected_value(self, value):
        return [self.elem_type.collected_value(v) for v in value]

    def _java_string(self, value, deep):
        if value is None:
            return 'null'
        return '[%s]' % ', '.join(self.elem_type._java_string(v, deep) for v in value)

    def __eq__(self, other):
        return isinstance(other, ListTypeInfo) and self.elem_type == other.elem_type

    def __repr__(self):
        return 'ListTypeInfo<%r>' % self.elem_type


class MapTypeInfo(TypeInformation):
    """Type information for dicts; values may be None, keys may not."""

    def __init__(self, key_type_info: TypeInformation, value_type_info: TypeInformation):
        self._key_type_info = key_type_info
        self._value_type_info = value_type_info

    def convert(self, value):
        if not isinstance(value, dict):
            raise self._wrong_type(value, 'a dict')
        key_type, value_type = self._key_type_info, self._value_type_info
        return {key_type.convert(k): None if v is None else value_type.convert(v)
                for k, v in value.items()}

    def _java_string(self, value, deep):
        if value is None:
            return 'null'
        return '{%s}' % ', '.join(
            '%s=%s' % (self._key_type_info._java_string(k, deep),
                       self._value_type_info._java_string(v, deep)) for k, v in value.items())

    def __eq__(self, other):
        return (isinstance(other, MapTypeInfo) and self._key_type_info == other._key_type_info
                and self._value_type_info == other._value_type_info)

    def __repr__(self):
        return 'MapTypeInfo<%r, %r>' % (self._key_type_info, self._value_type_info)


class _ArrayTypeInfo(TypeInformation):
    # A Java array: printed as an identity (``[I@1b6d3586``), or element by element when deep.

    def __init__(self, element_type: TypeInformation):
        self._element_type = element_type

    def convert(self, value):
        if not isinstance(value, (list, tuple)):
            raise self._wrong_type(value, 'a list')
        element_type = self._element_type
        return [None if v is None else element_type.convert(v) for v in value]

    def _java_class(self) -> str:
        return '[L%s;' % getattr(self._element_type, '_java_class', 'java.lang.Object')

    def _java_string(self, value, deep):
        if value is None:
            return 'null'
        if not deep:
            return _java_identity(self._java_class(), value)
        return '[%s]' % ', '.join(self._element_type._java_string(v, True) for v in value)

    def __eq__(self, other):
        return type(other) is type(self) and self._element_type == other._element_type

    def __repr__(self):
        return '%s<%r>' % (type(self).__name__, self._element_type)


class BasicArrayTypeInfo(_ArrayTypeInfo):
    """Type information for arrays of boxed primitive types (Integer[], String[], ...); elements
    may be None."""


class ObjectArrayTypeInfo(_ArrayTypeInfo):
    """Type information for arrays of non-primitive types; elements may be None."""


class PrimitiveArrayTypeInfo(_ArrayTypeInfo):
    """Type information for arrays of primitive types (int[], byte[], ...); a byte array is
    ``bytes``, others are lists without None."""

    _CODES = {'Boolean': 'Z', 'Byte': 'B', 'Short': 'S', 'Integer': 'I', 'Long': 'J',
              'Float': 'F', 'Double': 'D', 'Char': 'C'}

    def convert(self, value):
        if self._element_type == Types.BYTE():
            if not isinstance(value, (bytes, bytearray)):
                raise self._wrong_type(value, 'bytes')
            return bytes(value)
        if not isinstance(value, (list, tuple)):
            raise self._wrong_type(value, 'a list')
        return [self._element_type.convert(v) for v in value]

    def _java_class(self):
        return '[' + self._CODES[repr(self._element_type)]

    def _java_string(self, value, deep):
        if deep and isinstance(value, bytes):
            return _java_bytes_string(value)
        return super()._java_string(value, deep)


class LocalTimeTypeInfo(TypeInformation):
    """Type information for java.time's local date, time and date-time
    (``datetime.date``, ``datetime.time``, ``datetime.datetime``)."""

    class TimeType(Enum):
        LOCAL_DATE = 0
        LOCAL_TIME = 1
        LOCAL_DATE_TIME = 2

    _PYTHON_TYPES = {TimeType.LOCAL_DATE: datetime.date, TimeType.LOCAL_TIME: datetime.time,
                     TimeType.LOCAL_DATE_TIME: datetime.datetime}

    def __init__(self, time_type: 'LocalTimeTypeInfo.TimeType'):
        self._time_type = time_type

    def convert(self, value):
        python_type = self._PYTHON_TYPES[self._time_type]
        if python_type is datetime.date and isinstance(value, datetime.datetime) \
                or not isinstance(value, python_type):
            raise self._wrong_type(value, 'a ' + python_type.__qualname__)
        return value

    def _java_string(self, value, deep):
        if value is None:
            return 'null'
        if self._time_type is LocalTimeTypeInfo.TimeType.LOCAL_DATE:
            return value.isoformat()
        if self._time_type is LocalTimeTypeInfo.TimeType.LOCAL_TIME:
            return _java_local_time(value)
        return value.date().isoformat() + 'T' + _java_local_time(value.time())

    def __eq__(self, other):
        return type(other) is type(self) and self._time_type == other._time_type

    def __repr__(self):
        return 'LocalTimeTypeInfo<%s>' % self._time_type.name


def _java_local_time(t: datetime.time) -> str:
    """Java's LocalTime.toString: HH:mm, then :ss and a fraction only when not zero."""
    text = '%02d:%02d' % (t.hour, t.minute)
    if t.second or t.microsecond:
        text += ':%02d' % t.second
    if t.microsecond:
        text += '.%03d' % (t.microsecond // 1000) if t.microsecond % 1000 == 0 \
            else '.%06d' % t.microsecond
    return text


class ExternalTypeInfo(TypeInformation):
    """Wraps a type information as the Table API's external type; values are those of the
    wrapped type."""

    def __init__(self, type_info: TypeInformation):
        self._type_info = type_info

    def convert(self, value):
        return self._type_info.convert(value)

    def _java_string(self, value, deep):
        return self._type_info._java_string(value, deep)

    def need_conversion(self) -> bool:
        return self._type_info.need_conversion()

    def to_internal_type(self, obj):
        return self._type_info.to_internal_type(obj)

    def from_internal_type(self, obj):
        return self._type_info.from_internal_type(obj)

    def __eq__(self, other):
        return type(other) is type(self) and self._type_info == other._type_info

    def __repr__(self):
        return 'ExternalTypeInfo<%r>' % self._type_info


def _java_identity(java_class: str, value) -> str:
    # Java prints arrays by class and identity hash; the hash is arbitrary there too.
    return '%s@%x' % (java_class, id(value) & 0x7fffffff)


def _java_bytes_string(data: bytes) -> str:
    return '[%s]' % ', '.join(str(b - 256 if b > 127 else b) for b in data)


# JDK 17's FloatingDecimal: how many low decimal digits of an integral value to drop.
_INSIGNIFICANT_DIGITS = (0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6,
                         7, 7, 7, 8, 8, 8, 9, 9, 9, 9, 10, 10, 10, 11, 11, 11, 12, 12, 12, 12, 13,
                         13, 13, 14, 14, 14, 15, 15, 15, 15, 16, 16, 16, 17, 17, 17, 18, 18, 18, 19)


def _java_float_string(value: float, single: bool) -> str:
    """Java 17's ``Float.toString`` (``single``) or ``Double.toString``: plain between 10^-3
    and 10^7, else ``d.dddE<n>``."""
    if math.isnan(value):
        return 'NaN'
    if math.isinf(value):
        return 'Infinity' if value > 0 else '-Infinity'
    if value == 0:
        return '-0.0' if math.copysign(1, value) < 0 else '0.0'
    minus = '-' if value < 0 else ''
    bin_exp = math.frexp(value)[1] - 1
    if value.is_integer() and bin_exp <= 62:
        # Java 17 prints integral values from their exact digits, less a few insignificant
        # ones (e.g. 4.6733888E7 where the shortest would be 4.673389E7).
        number = int(abs(value))
        p2 = bin_exp - (24 if single else 53) - 1
        dropped = _INSIGNIFICANT_DIGITS[p2] if 1 < p2 < len(_INSIGNIFICANT_DIGITS) else 0
        if dropped:
            number, residue = divmod(number, 10 ** dropped)
            number += residue >= 10 ** dropped // 2
        digits = str(number)
        point = len(digits) + dropped
        digits = digits.rstrip('0')
    else:
        if single:
            text = next(t for t in ('%.*e' % (p, value) for p in range(9))
                        if struct.unpack('f', struct.pack('f', float(t)))[0] == value)
        else:
            text = repr(value)
        _, digit_tuple, exponent = Decimal(text).normalize().as_tuple()
        digits = ''.join(map(str, digit_tuple))
        point = len(digits) + exponent  # digits[:point] is the integer part
    if 1e-3 <= abs(value) < 1e7:
        if point <= 0:
            return '%s0.%s%s' % (minus, '0' * -point, digits)
        digits = digits.ljust(point, '0')
        return '%s%s.%s' % (minus, digits[:point], digits[point:] or '0')
    if len(digits) == 1:
        # Java prints at least one fractional digit, and picks it closest to the exact value.
        mantissa, exp = ('%.1e' % value).split('e')
        return '%sE%d' % (mantissa, int(exp))
    return '%s%s.%sE%d' % (minus, digits[0], digits[1:], point - 1)


class Types(object):
    """Type information for the common types, as in ``pyflink.common.typeinfo.Types``."""

    @staticmethod
    def STRING() -> TypeInformation:
        """Type information for str. Does not support a None value."""
        return _StringTypeInfo('String', 'java.lang.String')

    @staticmethod
    def BYTE() -> TypeInformation:
        """Type information for an 8-bit int. Does not support a None value."""
        return _IntegerTypeInfo('Byte', 'java.lang.Byte', 8)

    @staticmethod
    def BOOLEAN() -> TypeInformation:
        """Type information for bool. Does not support a None value."""
        return _BooleanTypeInfo('Boolean', 'java.lang.Boolean')

    @staticmethod
    def SHORT() -> TypeInformation:
        """Type information for a 16-bit int. Does not support a None value."""
        return _IntegerTypeInfo('Short', 'java.lang.Short', 16)

    @staticmethod
    def INT() -> TypeInformation:
        """Type information for a 32-bit int. Does not support a None value."""
        return _IntegerTypeInfo('Integer', 'java.lang.Integer', 32)

    @staticmethod
    def LONG() -> TypeInformation:
        """Type information for a 64-bit int. Does not support a None value."""
        return _IntegerTypeInfo('Long', 'java.lang.Long', 64)

    @staticmethod
    def FLOAT() -> TypeInformation:
        """Type information for a 32-bit float. Does not support a None value."""
        return _FloatTypeInfo('Float', 'java.lang.Float', True)

    @staticmethod
    def DOUBLE() -> TypeInformation:
        """Type information for a 64-bit float. Does not support a None value."""
        return _FloatTypeInfo('Double', 'java.lang.Double', False)

    @staticmethod
    def CHAR() -> TypeInformation:
        """Type information for a one-character str. Does not support a None value."""
        return _StringTypeInfo('Char', 'java.lang.Character')

    @staticmethod
    def BIG_INT() -> TypeInformation:
        """Type information for an int of any size."""
        return _IntegerTypeInfo('BigInteger', 'java.math.BigInteger', 0)

    @staticmethod
    def BIG_DEC() -> TypeInformation:
        """Type information for decimal.Decimal."""
        return _BigDecTypeInfo('BigDecimal', 'java.math.BigDecimal')

    @staticmethod
    def INSTANT() -> TypeInformation:
        """Type information for Instant. Supports a None value."""
        return InstantTypeInfo('Instant', 'java.time.Instant')

    @staticmethod
    def SQL_DATE() -> TypeInformation:
        """Type information for datetime.date."""
        return DateTypeInfo()

    @staticmethod
    def SQL_TIME() -> TypeInformation:
        """Type information for datetime.time."""
        return TimeTypeInfo()

    @staticmethod
    def SQL_TIMESTAMP() -> TypeInformation:
        """Type information for datetime.datetime."""
        return TimestampTypeInfo()

    @staticmethod
    def PICKLED_BYTE_ARRAY() -> TypeInformation:
        """Type information for any Python object, serialized with pickle."""
        return PickledBytesTypeInfo()

    @staticmethod
    def ROW(field_types: List[TypeInformation]) -> TypeInformation:
        """Type information for Row with fields of the given types (named f0, f1, ...)."""
        return RowTypeInfo(field_types)

    @staticmethod
    def ROW_NAMED(field_names: List[str], field_types: List[TypeInformation]) -> TypeInformation:
        """Type information for Row with fields of the given types and names."""
        return RowTypeInfo(field_types, field_names)

    @staticmethod
    def TUPLE(field_types: List[TypeInformation]) -> TypeInformation:
        """Type information for tuples with fields of the given types."""
        return TupleTypeInfo(field_types)

    @staticmethod
    def PRIMITIVE_ARRAY(element_type: TypeInformation) -> TypeInformation:
        """Type information for arrays of a primitive type (such as byte[] or int[])."""
        return PrimitiveArrayTypeInfo(element_type)

    @staticmethod
    def BASIC_ARRAY(element_type: TypeInformation) -> TypeInformation:
        """Type information for arrays of a boxed primitive type (such as Integer[])."""
        return BasicArrayTypeInfo(element_type)

    @staticmethod
    def OBJECT_ARRAY(element_type: TypeInformation) -> TypeInformation:
        """Type information for arrays of non-primitive types; elements may be None."""
        return ObjectArrayTypeInfo(element_type)

    @staticmethod
    def MAP(key_type_info: TypeInformation, value_type_info: TypeInformation) -> TypeInformation:
        """Type information for dicts with keys and values of the given types."""
        return MapTypeInfo(key_type_info, value_type_info)

    @staticmethod
    def LIST(element_type_info: TypeInformation) -> TypeInformation:
        """Type information for lists with elements of the given type."""
        return ListTypeInfo(element_type_info)
