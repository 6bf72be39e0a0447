"""JsonRowSerializationSchema and JsonRowDeserializationSchema: Row to JSON and back.

The tables were observed with PyFlink 2.3.0: its Java schemas (``open(None)``, then
``deserialize``/``serialize`` through py4j) read each message and wrote the row read; the
tests read the same message with ``api``'s schema and write the row again. Timestamps
keep milliseconds here (as Types.SQL_TIMESTAMP does everywhere in this project), so
messages with finer fractions are left out."""
import datetime
import math
from decimal import Decimal

import pytest

from api.common import Row, Types
from api.datastream.formats.json import JsonRowDeserializationSchema, JsonRowSerializationSchema
from tests.api.datastream.formats.row_types import ROW_TYPES

READ_WRITE = [  # (row type, message, the JSON written for the row read)
    ('basic', '{"i": 1, "s": "x", "f": 110.1, "d": 110.1, "b": true, "l": 9007199254740993, "sh": 7, "by": -3}',
     '{"i":1,"s":"x","f":110.1,"d":110.1,"b":true,"l":9007199254740993,"sh":7,"by":-3}'),
    ('basic', '{"i": null, "s": null, "f": null, "d": null, "b": null, "l": null, "sh": null, "by": null}',
     '{"i":null,"s":null,"f":null,"d":null,"b":null,"l":null,"sh":null,"by":null}'),
    ('basic', '{"i": 1}',
     '{"i":1,"s":null,"f":null,"d":null,"b":null,"l":null,"sh":null,"by":null}'),
    ('basic', '{"s": "extra", "zzz": 5, "i": 2}',
     '{"i":2,"s":"extra","f":null,"d":null,"b":null,"l":null,"sh":null,"by":null}'),
    ('unnamed', '{"f0": 5, "f1": "five"}',
     '{"f0":5,"f1":"five"}'),
    ('dec', '{"dec": 1.10, "bi": 123456789012345678901234567890}',
     '{"dec":1.1,"bi":123456789012345678901234567890}'),
    ('dec', '{"dec": "1.10", "bi": "-42"}',
     '{"dec":1.10,"bi":-42}'),
    ('dec', '{"dec": 1e20, "bi": 7}',
     '{"dec":1E+20,"bi":7}'),
    ('dec', '{"dec": 0.000001, "bi": 0}',
     '{"dec":0.000001,"bi":0}'),
    ('time', '{"d": "2020-01-02", "t": "10:11:12Z", "ts": "2020-01-02T10:11:12.345Z"}',
     '{"d":"2020-01-02","t":"10:11:12Z","ts":"2020-01-02T10:11:12.345Z"}'),
    ('time', '{"d": "2020-01-02", "t": "00:00:00Z", "ts": "2020-01-02T10:11:12Z"}',
     '{"d":"2020-01-02","t":"00:00:00Z","ts":"2020-01-02T10:11:12Z"}'),
    ('time', '{"ts": "2020-01-02T10:11:12.1Z"}',
     '{"d":null,"t":null,"ts":"2020-01-02T10:11:12.1Z"}'),
    ('time', '{"t": "10:11:12.000Z"}',
     '{"d":null,"t":"10:11:12Z","ts":null}'),
    ('nested', '{"id": 1, "inner": {"x": "a", "y": 2.5}, "tags": ["p", null, "q"], "nums": [1, 2, null], "raw": "AQID/w==", "m": {"k": 1}}',
     '{"id":1,"inner":{"x":"a","y":2.5},"tags":["p",null,"q"],"nums":[1,2,null],"raw":"AQID/w==","m":{"k":1}}'),
    ('nested', '{"id": 2, "inner": null, "tags": [], "nums": null, "raw": null, "m": {}}',
     '{"id":2,"inner":null,"tags":[],"nums":null,"raw":null,"m":{}}'),
    ('str', '{"s": "quote \\" backslash \\\\ slash / tab \\t nl \\n cr \\r ctrl \\u0001 \\u001f uni \\u00e9 \\u20ac \\ud83d\\ude00"}',
     '{"s":"quote \\" backslash \\\\ slash / tab \\t nl \\n cr \\r ctrl \\u0001 \\u001F uni é € \\uD83D\\uDE00"}'),
    ('str', '{"s": 1.5}',
     '{"s":"1.5"}'),
    ('str', '{"s": 10}',
     '{"s":"10"}'),
    ('str', '{"s": true}',
     '{"s":"true"}'),
    ('str', '{"s": {"a": [1, 2.0, "x"], "b": null}}',
     '{"s":"{\\"a\\":[1,2.0,\\"x\\"],\\"b\\":null}"}'),
    ('str', '{"s": [1, "two"]}',
     '{"s":"[1,\\"two\\"]"}'),
    ('str', '{"s": 1e300}',
     '{"s":"1.0E300"}'),
    ('str', '{"s": 12345678901234567890}',
     '{"s":"12345678901234567890"}'),
    ('int', '{"v": "12"}',
     '{"v":12}'),
    ('int', '{"v": " 12 "}',
     '{"v":12}'),
    ('int', '{"v": 1.9}',
     '{"v":1}'),
    ('int', '{"v": -1.9}',
     '{"v":-1}'),
    ('int', '{"v": "+7"}',
     '{"v":7}'),
    ('long', '{"v": "-9223372036854775808"}',
     '{"v":-9223372036854775808}'),
    ('long', '{"v": 2.5}',
     '{"v":2}'),
    ('float', '{"v": "1.5"}',
     '{"v":1.5}'),
    ('float', '{"v": 0.1}',
     '{"v":0.1}'),
    ('float', '{"v": 3.4e38}',
     '{"v":3.4E38}'),
    ('float', '{"v": 1e-5}',
     '{"v":1.0E-5}'),
    ('float', '{"v": 123456789}',
     '{"v":1.23456792E8}'),
    ('float', '{"v": "NaN"}',
     '{"v":"NaN"}'),
    ('float', '{"v": "-Infinity"}',
     '{"v":"-Infinity"}'),
    ('double', '{"v": 1e10}',
     '{"v":1.0E10}'),
    ('double', '{"v": 1.0}',
     '{"v":1.0}'),
    ('double', '{"v": 1e-5}',
     '{"v":1.0E-5}'),
    ('double', '{"v": 5}',
     '{"v":5.0}'),
    ('double', '{"v": "1e3"}',
     '{"v":1000.0}'),
    ('double', '{"v": "NaN"}',
     '{"v":"NaN"}'),
    ('double', '{"v": 0.1}',
     '{"v":0.1}'),
    ('double', '{"v": 123456789.125}',
     '{"v":1.23456789125E8}'),
    ('double', '{"v": -0.0}',
     '{"v":-0.0}'),
    ('bool', '{"v": "TRUE"}',
     '{"v":true}'),
    ('bool', '{"v": "yes"}',
     '{"v":false}'),
    ('bool', '{"v": 1}',
     '{"v":false}'),
    ('bool', '{"v": false}',
     '{"v":false}'),
    ('short', '{"v": "12"}',
     '{"v":12}'),
    ('short', '{"v": 12}',
     '{"v":12}'),
    ('bigdec', '{"v": 100}',
     '{"v":100}'),
    ('bigdec', '{"v": "1E+3"}',
     '{"v":1E+3}'),
    ('bigdec', '{"v": 123.4500}',
     '{"v":123.45}'),
    ('bigint', '{"v": "00012"}',
     '{"v":12}'),
    ('bytes', '{"v": "aGVsbG8="}',
     '{"v":"aGVsbG8="}'),
    ('bytes', '{"v": ""}',
     '{"v":""}'),
    ('intarr', '{"v": [1, "2", 3.7]}',
     '{"v":[1,2,3]}'),
    ('map', '{"v": {"1": "a", "22": null}}',
     '{"v":{"1":"a","22":null}}'),
    ('row2', '{"id": 1, "r": {"a": 2, "b": "x"}}',
     '{"id":1,"r":{"a":2,"b":"x"}}'),
]
FAILING = [  # (row type, message, the fields read with ignore_parse_errors(), None: no record)
    ('int', '{"v": "abc"}', [None]),
    ('int', '{"v": 3000000000}', [None]),
    ('int', '{"v": true}', [None]),
    ('int', 'not json', None),
    ('int', '[1, 2]', None),
    ('int', '5', None),
    ('int', '', None),
    ('short', '{"v": 1.0}', [None]),
    ('short', '{"v": 40000}', [None]),
    ('bigint', '{"v": 1.5}', [None]),
    ('date', '{"v": "2020-1-2"}', [None]),
    ('date', '{"v": " 2020-01-02"}', [None]),
    ('time1', '{"v": "10:11:12.5"}', [None]),
    ('time1', '{"v": "10:11:12.5Z"}', [None]),
    ('time1', '{"v": "10:11:12+01:00"}', [None]),
    ('ts', '{"v": "2020-01-02T10:11:12+01:00"}', [None]),
    ('time1', '{"v": "10:11"}', [None]),
    ('ts', '{"v": "2020-01-02 10:11:12"}', [None]),
    ('row2', '{"id": 1, "r": [1, "x"]}', [1, None]),
    ('strarr', '{"id": 1, "v": "a"}', [1, None]),
    ('bytes', '{"v": "not base64!"}', [None]),
    ('int', '{"v": "1_000"}', [None]),
]
FAILING_ONLY = [  # (row type, message): fails, as in PyFlink
    ('time', '{"d": "2020-01-02", "t": "10:11:12", "ts": "2020-01-02T10:11:12.345"}'),
    ('time', '{"ts": "2020-01-02T10:11:12+00:00"}'),
    ('time', '{"ts": "2020-01-02t10:11:12z"}'),
    ('time', '{"ts": "2020-01-02T10:11"}'),
    ('time', '{"ts": "2020-01-02T10:11:12.1"}'),
    ('time', '{"ts": "2020-01-02T10:11:12.123456"}'),
]


def reader(name, ignore=False, fail=False):
    builder = JsonRowDeserializationSchema.builder().type_info(ROW_TYPES[name])
    if ignore:
        builder.ignore_parse_errors()
    if fail:
        builder.fail_on_missing_field()
    return builder.build()


def writer(name):
    return JsonRowSerializationSchema.builder().with_type_info(ROW_TYPES[name]).build()


@pytest.mark.parametrize("name, message, written", READ_WRITE)
def test_reads_and_writes_as_pyflink(name, message, written):
    row = reader(name)._deserialize(message.encode())
    assert writer(name)._serialize(row).decode() == written


@pytest.mark.parametrize("name, message, ignored", FAILING)
def test_unreadable_messages_fail_or_read_as_null_with_ignore_parse_errors(name, message,
                                                                          ignored):
    with pytest.raises(ValueError, match="Failed to deserialize JSON"):
        reader(name)._deserialize(message.encode())
    row = reader(name, ignore=True)._deserialize(message.encode())
    assert (None if row is None else list(row)) == ignored


@pytest.mark.parametrize("name, message", FAILING_ONLY)
def test_times_must_be_rfc3339_in_utc(name, message):
    with pytest.raises(ValueError, match="Failed to deserialize JSON"):
        reader(name)._deserialize(message.encode())


def test_reads_typed_values_into_a_named_row():
    row = reader("basic")._deserialize(
        b'{"i": 1, "s": "x", "f": 110.1, "d": 110.1, "b": true, "l": 5, "sh": 7, "by": -3}')
    assert row == Row(i=1, s="x", f=110.0999984741211, d=110.1, b=True, l=5, sh=7, by=-3)
    assert row.as_dict()["f"] == 110.0999984741211      # FLOAT fields are 32-bit
    nested = reader("nested")._deserialize(
        b'{"id": 1, "inner": {"x": "a", "y": 2.5}, "tags": ["p", null], "nums": [1],'
        b' "raw": "AQID/w==", "m": {"k": 1}}')
    assert nested.inner == Row(x="a", y=2.5) and nested.inner.x == "a"
    assert (nested.tags, nested.nums, nested.raw, nested.m) == (
        ["p", None], [1], b"\x01\x02\x03\xff", {"k": 1})
    times = reader("time")._deserialize(
        b'{"d": "2020-01-02", "t": "10:11:12Z", "ts": "2020-01-02T10:11:12.345Z"}')
    assert list(times) == [datetime.date(2020, 1, 2), datetime.time(10, 11, 12),
                           datetime.datetime(2020, 1, 2, 10, 11, 12, 345000)]
    decimals = reader("dec")._deserialize(b'{"dec": "1.10", "bi": 123456789012345678901234567890}')
    assert list(decimals) == [Decimal("1.10"), 123456789012345678901234567890]


def test_reads_like_java_number_parsing():
    assert reader("float")._deserialize(b'{"v": "1.5f"}').v == 1.5
    assert reader("double")._deserialize(b'{"v": "0x1p3"}').v == 8.0
    assert math.isinf(reader("double")._deserialize(b'{"v": " Infinity "}').v)
    # a number where bytes are expected gives no bytes, without an error
    assert reader("bytes")._deserialize(b'{"v": 5}').v is None


def test_null_message_gives_no_record_and_trailing_content_is_ignored():
    assert reader("int")._deserialize(b"null") is None
    assert reader("int")._deserialize(b'{"v": 1} trailing') == Row(v=1)


def test_fail_on_missing_field():
    with pytest.raises(ValueError, match="Could not find field with name 's'"):
        reader("basic", fail=True)._deserialize(b'{"i": 1}')
    assert reader("basic", fail=True)._deserialize(
        b'{"i": 1, "s": null, "f": 1, "d": 1, "b": true, "l": 1, "sh": 1, "by": 1}').s is None


def test_writes_python_rows_tuples_and_nulls():
    schema = writer("basic")
    expected = b'{"i":1,"s":"x","f":110.1,"d":1.0E10,"b":true,"l":5,"sh":7,"by":-3}'
    assert schema._serialize(Row(1, "x", 110.1, 1e10, True, 5, 7, -3)) == expected
    assert schema._serialize((1, "x", 110.1, 1e10, True, 5, 7, -3)) == expected
    assert schema._serialize(Row(i=None, s=None, f=None, d=None, b=None, l=None, sh=None,
                                 by=None)) == \
        b'{"i":null,"s":null,"f":null,"d":null,"b":null,"l":null,"sh":null,"by":null}'
    assert writer("time")._serialize(Row(datetime.date(2020, 1, 2), datetime.time(10, 11, 12),
                                         datetime.datetime(2020, 1, 2, 10, 11, 12, 345000))) == \
        b'{"d":"2020-01-02","t":"10:11:12Z","ts":"2020-01-02T10:11:12.345Z"}'
    assert writer("str")._serialize(Row("caf\u00e9 \U0001F600")) == \
        '{"s":"caf\u00e9 \\uD83D\\uDE00"}'.encode()


def test_writing_a_wrong_row_fails_clearly():
    with pytest.raises(ValueError, match="expects 8 fields, got 1"):
        writer("basic")._serialize(Row(1))
    with pytest.raises(TypeError, match="expects int"):
        writer("int")._serialize(Row("one"))


def test_builders_validate_as_pyflink():
    with pytest.raises(TypeError, match="Typeinfo should be set"):
        JsonRowSerializationSchema.builder().build()
    with pytest.raises(ValueError, match="only row type information"):
        JsonRowSerializationSchema.builder().with_type_info(Types.INT()).build()
    with pytest.raises(TypeError, match="set the row type"):
        JsonRowDeserializationSchema.builder().build()
    with pytest.raises(TypeError, match="json_schema must not be None"):
        JsonRowDeserializationSchema.builder().json_schema(None)
    with pytest.raises(ValueError, match="failOnMissingField and ignoreParseErrors"):
        JsonRowDeserializationSchema.builder().type_info(ROW_TYPES["int"]) \
            .fail_on_missing_field().ignore_parse_errors().build()
    with pytest.raises(ValueError, match="unsupported type information"):
        JsonRowSerializationSchema.builder().with_type_info(
            Types.ROW([Types.PICKLED_BYTE_ARRAY()])).build()


def test_produced_type_is_the_row_type():
    assert reader("basic")._produced_type() == ROW_TYPES["basic"]


# (JSON Schema, the row type PyFlink 2.3.0 derives from it)
SCHEMAS = [
    ('{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"string"},'
     '"c":{"type":"number"},"d":{"type":"string","format":"date-time"},'
     '"e":{"type":"array","items":{"type":"boolean"}}}}',
     Types.ROW_NAMED(["a", "b", "c", "d", "e"],
                     [Types.BIG_DEC(), Types.STRING(), Types.BIG_DEC(), Types.SQL_TIMESTAMP(),
                      Types.OBJECT_ARRAY(Types.BOOLEAN())])),
    ('{"type":"object","properties":{"n":{"type":"object","properties":{"x":{"type":"string",'
     '"format":"date"},"y":{"type":"string","format":"time"}}},"z":{"type":["string","null"]}}}',
     Types.ROW_NAMED(["n", "z"], [Types.ROW_NAMED(["x", "y"], [Types.SQL_DATE(),
                                                            Types.SQL_TIME()]),
                                  Types.STRING()])),
    ('{"type":"object","properties":{"b":{"type":"string","contentEncoding":"base64"},'
     '"t":{"type":"array","items":[{"type":"integer"},{"type":"string"}]}}}',
     Types.ROW_NAMED(["b", "t"], [Types.PRIMITIVE_ARRAY(Types.BYTE()),
                                  Types.ROW([Types.BIG_DEC(), Types.STRING()])])),
    ('{"definitions":{"p":{"type":"object","properties":{"q":{"type":"boolean"}}}},'
     '"type":"object","properties":{"r":{"$ref":"#/definitions/p"}}}',
     Types.ROW_NAMED(["r"], [Types.ROW_NAMED(["q"], [Types.BOOLEAN()])])),
]


@pytest.mark.parametrize("json_schema, expected", SCHEMAS)
def test_json_schema_gives_the_row_type(json_schema, expected):
    schema = JsonRowDeserializationSchema.builder().json_schema(json_schema).build()
    assert schema._produced_type() == expected
    assert schema._produced_type().get_field_names() == expected.get_field_names()


@pytest.mark.parametrize("json_schema, message", [
    ('{"type":"object","properties":{"x":{"enum":["a","b"]}}}', "No type could be found"),
    ('{"type":"object","properties":{"x":{"type":["string","integer"]}}}', "Union types"),
    ('{"type":"object","properties":{"x":{"type":"array"}}}', "must specify an 'items'"),
    ('{"properties":{"x":{"type":"string"}}}', "No type could be found"),
])
def test_json_schemas_pyflink_rejects(json_schema, message):
    with pytest.raises(ValueError, match=message):
        JsonRowDeserializationSchema.builder().json_schema(json_schema)
