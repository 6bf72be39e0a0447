"""JSON row formats, as in ``pyflink.datastream.formats.json``.

A record is a JSON object whose properties are the row's field names (``f0``, ``f1``, ...
for ``Types.ROW``), written compactly in UTF-8 as Flink's ``JsonRowSerializationSchema``
writes it: numbers as Java prints them (``1.0E10``, FLOAT fields as 32-bit values), NaN
and infinities as strings, dates as ``2020-01-02``, times as ``10:11:12Z``, timestamps as
``2020-01-02T10:11:12.345Z``, byte arrays in Base64, nested rows as objects, arrays as
arrays, maps as objects and null fields as ``null``. Reading accepts what Flink's reader
accepts, including its conversions (a number for a STRING field, ``"12"`` for an INT
field, a fraction truncated for INT) and its errors.
"""
import base64
import binascii
import datetime
import json
import re
from decimal import Context, Decimal
from typing import Callable

from api.common.serialization import DeserializationSchema, SerializationSchema
from api.common.time import Instant
from api.common.typeinfo import RowTypeInfo, TypeInformation, Types

from ._text import (checked_row_type, decimal_string, element_type, float_string, java_trim,
                    kind_of, parse_decimal, parse_double, parse_integer, time_string,
                    timestamp_fraction)

__all__ = ['JsonRowDeserializationSchema', 'JsonRowSerializationSchema']


class JsonRowDeserializationSchema(DeserializationSchema):
    """Reads a JSON object into a Row of the given type::

        JsonRowDeserializationSchema.builder().type_info(Types.ROW_NAMED(
            ["id", "name"], [Types.INT(), Types.STRING()])).build()

    A property missing from the object gives a null field (or an error with
    ``fail_on_missing_field()``), unknown properties are ignored; with
    ``ignore_parse_errors()`` a field that cannot be read is null and a message that is not
    a JSON object gives no record.
    """

    def __init__(self, type_info: RowTypeInfo, fail_on_missing_field: bool,
                 ignore_parse_errors: bool):
        self._type_info = type_info
        self._fail_on_missing_field = fail_on_missing_field
        self._ignore_parse_errors = ignore_parse_errors
        self._read = _reader(type_info, self)

    @staticmethod
    def builder() -> 'JsonRowDeserializationSchema.Builder':
        return JsonRowDeserializationSchema.Builder()

    def _deserialize(self, message: bytes):
        try:
            values = self._read(_parse(bytes(message)))
        except Exception as e:
            if self._ignore_parse_errors:
                return None
            raise ValueError(f"Failed to deserialize JSON {_shown(message)}: {e}") from e
        return None if values is None else self._type_info.convert(values)

    def _produced_type(self) -> TypeInformation:
        return self._type_info

    class Builder(object):
        """Builds a JsonRowDeserializationSchema; ``type_info`` (or ``json_schema``) is
        required."""

        def __init__(self):
            self._type_info = None
            self._fail_on_missing_field = False
            self._ignore_parse_errors = False

        def type_info(self, type_info: TypeInformation) -> 'JsonRowDeserializationSchema.Builder':
            """The row type of the records; its field names are the JSON properties read."""
            self._type_info = type_info
            return self

        def json_schema(self, json_schema: str) -> 'JsonRowDeserializationSchema.Builder':
            """Takes the row type from a JSON Schema document (objects become rows, "number"
            and "integer" BIG_DEC, "string" STRING or, with a date/time format, SQL_DATE,
            SQL_TIME or SQL_TIMESTAMP, arrays OBJECT_ARRAY)."""
            if json_schema is None:
                raise TypeError("The json_schema must not be None.")
            self._type_info = json_schema_to_type_info(json_schema)
            return self

        def fail_on_missing_field(self) -> 'JsonRowDeserializationSchema.Builder':
            """Fails on an object without one of the row's fields (default: the field is
            null)."""
            self._fail_on_missing_field = True
            return self

        def ignore_parse_errors(self) -> 'JsonRowDeserializationSchema.Builder':
            """Reads unreadable fields as null and unreadable messages as no record,
            instead of failing."""
            self._ignore_parse_errors = True
            return self

        def build(self) -> 'JsonRowDeserializationSchema':
            if self._type_info is None:
                raise TypeError("JsonRowDeserializationSchema: set the row type with "
                                "type_info(...) or json_schema(...) before build()")
            type_info = checked_row_type(self._type_info, "JsonRowDeserializationSchema")
            if self._fail_on_missing_field and self._ignore_parse_errors:
                raise ValueError("JSON format doesn't support failOnMissingField and "
                                 "ignoreParseErrors are both true.")
            return JsonRowDeserializationSchema(type_info, self._fail_on_missing_field,
                                                self._ignore_parse_errors)


class JsonRowSerializationSchema(SerializationSchema):
    """Writes a Row of the given type as a JSON object::

        JsonRowSerializationSchema.builder().with_type_info(Types.ROW_NAMED(
            ["id", "name"], [Types.INT(), Types.STRING()])).build()
    """

    def __init__(self, type_info: RowTypeInfo):
        self._type_info = type_info
        self._write = _writer(type_info)

    @staticmethod
    def builder() -> 'JsonRowSerializationSchema.Builder':
        return JsonRowSerializationSchema.Builder()

    def _serialize(self, value) -> bytes:
        return self._write(self._type_info.convert(value)).encode('utf-8')

    class Builder(object):
        """Builds a JsonRowSerializationSchema; ``with_type_info`` is required."""

        def __init__(self):
            self._type_info = None

        def with_type_info(self, type_info: TypeInformation
                           ) -> 'JsonRowSerializationSchema.Builder':
            """The row type of the records; its field names become the JSON properties."""
            self._type_info = type_info
            return self

        def build(self) -> 'JsonRowSerializationSchema':
            if self._type_info is None:
                raise TypeError("Typeinfo should be set.")
            return JsonRowSerializationSchema(
                checked_row_type(self._type_info, "JsonRowSerializationSchema"))


# --- parsing -------------------------------------------------------------------------

class _FloatLiteral(str):
    """A JSON number with a fraction or an exponent, as written (Flink keeps its digits for
    BIG_DEC fields and reads it as a double otherwise)."""


def _reject_constant(name: str):
    raise ValueError(f"Non-standard token '{name}'")


_DECODER = json.JSONDecoder(parse_float=_FloatLiteral, parse_constant=_reject_constant)


def _parse(message: bytes):
    text = message.decode(json.detect_encoding(message))
    start = len(text) - len(text.lstrip(' \t\n\r'))
    if start == len(text):
        raise ValueError("No content to map due to end-of-input")
    node, _ = _DECODER.raw_decode(text, start)  # content after the value is ignored
    return node


def _shown(message: bytes) -> str:
    text = bytes(message).decode('utf-8', 'replace')
    return repr(text if len(text) <= 200 else text[:200] + '...')


def _as_text(node) -> str:
    """Jackson's ``asText()`` of a parsed JSON value."""
    if isinstance(node, bool):
        return 'true' if node else 'false'
    if isinstance(node, _FloatLiteral):
        return float_string(float(node), Types.DOUBLE())
    if isinstance(node, (str, int)):
        return str(node)
    return 'null' if node is None else ''


def _node_text(node) -> str:
    """Jackson's compact ``toString()`` of a parsed JSON value."""
    if isinstance(node, dict):
        return '{%s}' % ','.join(_json_string(k) + ':' + _node_text(v) for k, v in node.items())
    if isinstance(node, list):
        return '[%s]' % ','.join(_node_text(v) for v in node)
    if isinstance(node, str) and not isinstance(node, _FloatLiteral):
        return _json_string(node)
    return _as_text(node)


def _expect(node, expected_type, what: str):
    if not isinstance(node, expected_type) or isinstance(node, _FloatLiteral):
        raise TypeError(f"expected {what}, got {_node_text(node)[:100]}")
    return node


def _int_value(node, type_info) -> int:
    """Jackson's ``asInt``/``asLong`` where the value fits (a fraction is truncated), Java's
    ``parseInt``/``parseLong`` of its text otherwise."""
    bits = 32 if type_info == Types.INT() else 64
    if isinstance(node, _FloatLiteral):
        number = float(node)
        if -(1 << bits - 1) <= number <= (1 << bits - 1) - 1:
            return int(number)
    elif isinstance(node, int) and not isinstance(node, bool) and \
            -(1 << bits - 1) <= node < 1 << bits - 1:
        return node
    return parse_integer(_as_text(node), type_info)


_RFC3339_TIME = r'([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?(Z|[+-][0-9]{2}(?:[0-9]{2})?)'
_TIME = re.compile(_RFC3339_TIME)
_TIMESTAMP = re.compile(r'([0-9]{4})-([0-9]{2})-([0-9]{2})T' + _RFC3339_TIME)
_DATE = re.compile(r'([0-9]{4})-([0-9]{2})-([0-9]{2})')
_INSTANT = re.compile(r'([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})'
                      r'(?:\.([0-9]{1,9}))?Z')


def _matched(pattern, text: str, what: str):
    match = pattern.fullmatch(text)
    if match is None:
        raise ValueError(f"Text '{text}' is not a valid {what}")
    return match


def _read_date(node) -> datetime.date:
    text = _as_text(node)
    return datetime.date(*map(int, _matched(_DATE, text, "date (yyyy-MM-dd)").groups()))


def _read_time(node) -> datetime.time:
    text = _as_text(node)
    hour, minute, second, fraction, offset = _matched(
        _TIME, text, "time (HH:mm:ss'Z')").groups()
    if offset.strip('Z+-0') or (fraction and fraction.strip('0')):
        raise ValueError("Invalid time format. Only a time in UTC timezone without "
                         "milliseconds is supported yet.")
    return datetime.time(int(hour), int(minute), int(second))


def _read_timestamp(node) -> datetime.datetime:
    text = _as_text(node)
    *fields, fraction, offset = _matched(
        _TIMESTAMP, text, "timestamp (yyyy-MM-dd'T'HH:mm:ss.SSS'Z')").groups()
    if offset.strip('Z+-0'):
        raise ValueError("Invalid timestamp format. Only a timestamp in UTC timezone is "
                         "supported yet. Format: yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")
    micros = int((fraction or '0').ljust(9, '0')[:6])
    return datetime.datetime(*map(int, fields), micros)


def _read_instant(node) -> Instant:
    if isinstance(node, (int, _FloatLiteral)) and not isinstance(node, bool):
        number = Decimal(str(node))
        seconds = int(number // 1)
        return Instant(seconds, int((number - seconds) * 1_000_000_000))
    text = _as_text(node)
    *fields, fraction = _matched(_INSTANT, text, "instant (yyyy-MM-dd'T'HH:mm:ss'Z')").groups()
    moment = datetime.datetime(*map(int, fields), tzinfo=datetime.timezone.utc)
    return Instant(int(moment.timestamp()), int((fraction or '0').ljust(9, '0')))


def _read_bytes(node):
    if not isinstance(node, str) or isinstance(node, _FloatLiteral):
        return None  # Jackson gives no binary value for other nodes
    try:
        return base64.b64decode(node, validate=True)
    except binascii.Error as e:
        raise ValueError(f"Unable to deserialize byte array: {e}") from None


def _read_char(node) -> str:
    if isinstance(node, int) and not isinstance(node, bool):
        return chr(node)
    if isinstance(node, str) and not isinstance(node, _FloatLiteral) and len(node) == 1:
        return node
    raise ValueError(f"Cannot read {_node_text(node)[:100]} as a single character")


def _read_boolean(node) -> bool:
    if isinstance(node, bool):
        return node
    return java_trim(_as_text(node)).lower() == 'true'


def _read_string(node) -> str:
    return _node_text(node) if isinstance(node, (dict, list)) else _as_text(node)


# normalize() rounds to its context's precision: this one keeps every digit.
_WIDE = Context(prec=100_000)


def _read_decimal(node) -> Decimal:
    if isinstance(node, _FloatLiteral):
        # Flink reads a JSON number with a fraction as a decimal without trailing zeros.
        digits = Decimal(node)
        return Decimal(0) if digits.is_zero() else digits.normalize(_WIDE)
    return parse_decimal(_as_text(node))


def _read_big_integer(node) -> int:
    if isinstance(node, int) and not isinstance(node, bool):
        return node
    return parse_integer(_as_text(node), Types.BIG_INT())


def _read_double(node) -> float:
    if isinstance(node, _FloatLiteral):
        return float(node)
    return parse_double(_as_text(node))


def _reader(type_info: TypeInformation, schema: JsonRowDeserializationSchema
            ) -> Callable:
    """A function from a parsed JSON value to the field value of ``type_info`` (None for
    null), following the schema's options."""
    kind = kind_of(type_info)
    simple = {
        'String': _read_string, 'Char': _read_char, 'Boolean': _read_boolean,
        'Integer': lambda node: _int_value(node, type_info),
        'Long': lambda node: _int_value(node, type_info),
        'Short': lambda node: parse_integer(_as_text(node), type_info),
        'Byte': lambda node: parse_integer(_as_text(node), type_info),
        'BigInteger': _read_big_integer, 'BigDecimal': _read_decimal,
        'Double': _read_double, 'Float': lambda node: parse_double(_as_text(node)),
        'Date': _read_date, 'Time': _read_time, 'Timestamp': _read_timestamp,
        'Instant': _read_instant, 'Bytes': _read_bytes,
    }
    if kind in simple:
        read = simple[kind]
    elif kind == 'Row':
        read = _row_reader(type_info, schema)
    elif kind in ('Array', 'List', 'PrimitiveArray'):
        read_element = _reader(element_type(type_info), schema)
        read = lambda node: [read_element(e) for e in _expect(node, list, "an array")]  # noqa
    elif kind == 'Map':
        read_key = _reader(type_info._key_type_info, schema)
        read_value = _reader(type_info._value_type_info, schema)
        read = lambda node: {read_key(k): read_value(v)  # noqa: E731
                             for k, v in _expect(node, dict, "an object").items()}
    else:
        raise ValueError(f"JsonRowDeserializationSchema: unsupported type information "
                         f"{type_info!r}")

    def read_nullable(node):
        if node is None:
            return None
        try:
            return read(node)
        except Exception:
            if schema._ignore_parse_errors:
                return None
            raise
    return read_nullable


def _row_reader(type_info: RowTypeInfo, schema: JsonRowDeserializationSchema) -> Callable:
    fields = [(name, _reader(t, schema))
              for name, t in zip(type_info.get_field_names(), type_info.get_field_types())]

    def read(node):
        _expect(node, dict, "a JSON object")
        values = []
        for name, read_field in fields:
            if name not in node and schema._fail_on_missing_field:
                raise ValueError(f"Could not find field with name '{name}'.")
            try:
                values.append(read_field(node.get(name)))
            except Exception as e:
                raise ValueError(f"field '{name}': {e}") from e
        return values
    return read


# --- writing -------------------------------------------------------------------------

_ESCAPES = {c: '\\u%04X' % c for c in range(32)}
_ESCAPES.update({ord('"'): '\\"', ord('\\'): '\\\\', ord('\b'): '\\b', ord('\t'): '\\t',
                 ord('\n'): '\\n', ord('\f'): '\\f', ord('\r'): '\\r'})
# Jackson writes characters beyond the Basic Multilingual Plane as escaped UTF-16 pairs.
_NON_BMP = re.compile('[\U00010000-\U0010ffff\ud800-\udfff]')


def _utf16_escape(match) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return '\\u%04X' % code
    code -= 0x10000
    return '\\u%04X\\u%04X' % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))


def _json_string(text: str) -> str:
    escaped = text.translate(_ESCAPES)
    if not escaped.isascii():
        escaped = _NON_BMP.sub(_utf16_escape, escaped)
    return '"' + escaped + '"'


def _write_float(type_info):
    def write(value: float) -> str:
        text = float_string(value, type_info)
        return text if value == value and abs(value) != float('inf') else '"' + text + '"'
    return write


def _writer(type_info: TypeInformation) -> Callable:
    """A function from a converted field value of ``type_info`` to its JSON text."""
    kind = kind_of(type_info)
    simple = {
        'String': _json_string, 'Char': _json_string,
        'Boolean': lambda v: 'true' if v else 'false',
        'Byte': str, 'Short': str, 'Integer': str, 'Long': str, 'BigInteger': str,
        'Float': _write_float(type_info), 'Double': _write_float(type_info),
        'BigDecimal': decimal_string,
        'Date': lambda v: '"%s"' % v.isoformat(),
        'Time': lambda v: '"%sZ"' % time_string(v),
        'Timestamp': lambda v: '"%s%sZ"' % (v.strftime('%Y-%m-%dT%H:%M:%S'),
                                            '.' + timestamp_fraction(v)
                                            if v.microsecond else ''),
        'Instant': lambda v: '"%s"' % Types.INSTANT()._java_string(v, False),
        'Bytes': lambda v: '"%s"' % base64.b64encode(v).decode('ascii'),
    }
    if kind in simple:
        write = simple[kind]
    elif kind == 'Row':
        names = [_json_string(name) + ':' for name in type_info.get_field_names()]
        writers = [_writer(t) for t in type_info.get_field_types()]
        write = lambda row: '{%s}' % ','.join(  # noqa: E731
            name + w(v) for name, w, v in zip(names, writers, row))
    elif kind in ('Array', 'List', 'PrimitiveArray'):
        write_element = _writer(element_type(type_info))
        write = lambda values: '[%s]' % ','.join(map(write_element, values))  # noqa: E731
    elif kind == 'Map':
        key_type = type_info._key_type_info
        write_value = _writer(type_info._value_type_info)
        write = lambda mapping: '{%s}' % ','.join(  # noqa: E731
            _json_string(k if isinstance(k, str) else key_type.to_java_string(k)) + ':' +
            write_value(v) for k, v in mapping.items())
    else:
        raise ValueError(f"JsonRowSerializationSchema: unsupported type information "
                         f"{type_info!r}")
    return lambda value: 'null' if value is None else write(value)


# --- JSON Schema -----------------------------------------------------------------------

def json_schema_to_type_info(json_schema: str) -> TypeInformation:
    """The type described by a JSON Schema document, as Flink's ``JsonRowSchemaConverter``
    derives it."""
    try:
        root = json.loads(json_schema)
    except ValueError as e:
        raise ValueError(f"Invalid JSON schema: {e}") from None
    return _schema_type(root, root, '<root>')


def _schema_type(node, root, location: str) -> TypeInformation:
    if not isinstance(node, dict):
        raise ValueError(f"Invalid JSON schema in node: {location}")
    if '$ref' in node:
        ref = node['$ref']
        target = root
        for part in ref[2:].split('/') if isinstance(ref, str) and ref.startswith('#/') else [None]:
            target = target.get(part) if isinstance(target, dict) else None
        if target is None:
            raise ValueError(f"Could not resolve the reference {ref!r} in node: {location}")
        return _schema_type(target, root, location)
    kinds = node.get('type')
    if isinstance(kinds, list):
        kinds = [k for k in kinds if k != 'null']
        if len(kinds) != 1:
            raise ValueError("Union types with more than just a null type are not supported "
                             "yet.")
        kinds = kinds[0]
    if kinds == 'object':
        properties = node.get('properties', {})
        return Types.ROW_NAMED(list(properties), [
            _schema_type(v, root, f"{location}/{k}") for k, v in properties.items()])
    if kinds == 'array':
        items = node.get('items')
        if items is None:
            raise ValueError(f"Arrays must specify an 'items' property in node: {location}")
        if isinstance(items, list):
            return Types.ROW([_schema_type(v, root, f"{location}/{i}")
                              for i, v in enumerate(items)])
        return Types.OBJECT_ARRAY(_schema_type(items, root, location))
    if kinds == 'string':
        if node.get('contentEncoding') == 'base64':
            return Types.PRIMITIVE_ARRAY(Types.BYTE())
        return {'date-time': Types.SQL_TIMESTAMP(), 'date': Types.SQL_DATE(),
                'time': Types.SQL_TIME()}.get(node.get('format'), Types.STRING())
    if kinds in ('number', 'integer'):
        return Types.BIG_DEC()
    if kinds == 'boolean':
        return Types.BOOLEAN()
    if kinds is None:
        raise ValueError(f"No type could be found in node: {location}")
    raise ValueError(f"Unsupported JSON schema type {kinds!r} in node: {location}")
