"""Reading and writing field values as text the way Flink's JSON and CSV row formats do:
Java's number parsing (``Integer.parseInt``, ``Double.parseDouble``, ``new BigDecimal``),
Java's ``toString`` of floats, dates and timestamps, and the field types both formats
accept."""
import datetime
import re
from decimal import Decimal

from api.common.typeinfo import (BasicArrayTypeInfo, BasicTypeInfo, DateTypeInfo, ListTypeInfo,
                                 MapTypeInfo, ObjectArrayTypeInfo, PrimitiveArrayTypeInfo,
                                 RowTypeInfo, TimestampTypeInfo, TimeTypeInfo, TypeInformation,
                                 Types, _java_float_string)

# Java's String.trim() removes every character up to the space.
_JAVA_BLANKS = ''.join(chr(c) for c in range(33))
_INTEGER = re.compile(r'[+-]?[0-9]+')
_DECIMAL = re.compile(r'[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?')
_JAVA_DOUBLE = re.compile(r'[+-]?(NaN|Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?)'
                          r'[fFdD]?')
_JAVA_HEX_DOUBLE = re.compile(r'([+-]?0[xX]([0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)'
                              r'[pP][+-]?[0-9]+)[fFdD]?')
_INTEGER_BITS = {'Byte': 8, 'Short': 16, 'Integer': 32, 'Long': 64}


def java_trim(text: str) -> str:
    return text.strip(_JAVA_BLANKS)


def parse_integer(text: str, type_info: TypeInformation) -> int:
    """``Byte/Short/Integer/Long.parseInt`` (or ``new BigInteger``) of ``text``, trimmed."""
    trimmed = java_trim(text)
    if not _INTEGER.fullmatch(trimmed):
        raise ValueError(f'For input string: "{trimmed}"')
    value = int(trimmed)
    bits = _INTEGER_BITS.get(repr(type_info))
    if bits and not -(1 << bits - 1) <= value < 1 << bits - 1:
        raise ValueError(f'Value out of range. Value:"{trimmed}" Radix:10')
    return value


def parse_double(text: str) -> float:
    """``Double.parseDouble`` of ``text``, trimmed (``Float.parseFloat`` is this, rounded to
    32 bits by the FLOAT type)."""
    trimmed = java_trim(text)
    if _JAVA_DOUBLE.fullmatch(trimmed):
        return float(trimmed.rstrip('fFdD').replace('Infinity', 'inf'))
    hex_match = _JAVA_HEX_DOUBLE.fullmatch(trimmed)
    if hex_match:
        return float.fromhex(hex_match.group(1))
    raise ValueError(f'For input string: "{trimmed}"')


def parse_decimal(text: str) -> Decimal:
    """``new BigDecimal`` of ``text``, trimmed."""
    trimmed = java_trim(text)
    if not _DECIMAL.fullmatch(trimmed):
        raise ValueError(f'Character array is not a valid decimal number: "{trimmed}"')
    return Decimal(trimmed)


def float_string(value: float, type_info: TypeInformation) -> str:
    """Java's ``Float.toString`` or ``Double.toString``."""
    return _java_float_string(value, type_info == Types.FLOAT())


def decimal_string(value: Decimal) -> str:
    """Java's ``BigDecimal.toString`` (Java has no negative zero)."""
    return str(value.copy_abs() if value.is_zero() else value)


def time_string(value: datetime.time) -> str:
    return value.strftime('%H:%M:%S')


def timestamp_fraction(value: datetime.datetime) -> str:
    """The fraction of a second as Java prints it: no trailing zeros, empty for none."""
    return ('%06d' % value.microsecond).rstrip('0')


def kind_of(type_info: TypeInformation) -> str:
    """What a field of ``type_info`` holds, as the formats see it: the Java class name of a
    basic type (``Integer``, ``String``, ``BigDecimal``, ...), or ``Date``, ``Time``,
    ``Timestamp``, ``Row``, ``Array`` (an object or basic array), ``Bytes`` (a primitive
    byte array), ``PrimitiveArray``, ``List``, ``Map``; None for other types."""
    if isinstance(type_info, BasicTypeInfo):
        return repr(type_info)
    if isinstance(type_info, PrimitiveArrayTypeInfo):
        return 'Bytes' if type_info._element_type == Types.BYTE() else 'PrimitiveArray'
    for cls, kind in ((DateTypeInfo, 'Date'), (TimeTypeInfo, 'Time'),
                      (TimestampTypeInfo, 'Timestamp'), (RowTypeInfo, 'Row'),
                      (BasicArrayTypeInfo, 'Array'), (ObjectArrayTypeInfo, 'Array'),
                      (ListTypeInfo, 'List'), (MapTypeInfo, 'Map')):
        if isinstance(type_info, cls):
            return kind
    return None


def element_type(type_info: TypeInformation) -> TypeInformation:
    """The element type of an array or list type."""
    return type_info.elem_type if isinstance(type_info, ListTypeInfo) else type_info._element_type


def checked_row_type(type_info, owner: str) -> RowTypeInfo:
    """``type_info`` if it is a row type; the formats read and write rows only."""
    if type_info is None:
        raise TypeError(f"{owner}: the type information must not be None")
    if not isinstance(type_info, RowTypeInfo):
        raise ValueError(f"{owner}: only row type information (Types.ROW or Types.ROW_NAMED) "
                         f"is supported, got {type_info!r}")
    return type_info
