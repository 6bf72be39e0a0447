"""SimpleStringSchema, ByteArraySchema and RowFieldExtractorSchema turn records into bytes
and back as PyFlink 2.3.0's do (expected bytes observed by calling PyFlink's Java schemas
through py4j)."""
import pytest

from api.common import (ByteArraySchema, DeserializationSchema, Encoder, Row,
                        SerializationSchema, SimpleStringSchema, Types)
from api.common.serialization import RowFieldExtractorSchema


@pytest.mark.parametrize("charset, encoded", [
    ("UTF-8", b"a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
    ("utf8", b"a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
    ("ISO-8859-1", b"a\xe9??"),          # characters the charset lacks become "?"
    ("US-ASCII", b"a???"),
    ("windows-1252", b"a\xe9\x80?"),
    ("UTF-16", b"\xfe\xff\x00a\x00\xe9 \xac\xd8=\xde\x00"),   # big-endian, with a mark
    ("UTF-16LE", b"a\x00\xe9\x00\xac =\xd8\x00\xde"),
    ("UTF-32", b"\x00\x00\x00a\x00\x00\x00\xe9\x00\x00 \xac\x00\x01\xf6\x00"),
])
def test_simple_string_schema_encodes_with_its_charset(charset, encoded):
    schema = SimpleStringSchema(charset)
    assert schema._serialize("a\u00e9\u20ac\U0001F600") == encoded
    if b"?" not in encoded:
        assert schema._deserialize(encoded) == "a\u00e9\u20ac\U0001F600"


def test_simple_string_schema_decodes_as_java():
    assert SimpleStringSchema()._deserialize(b"h\xc3\xa9llo") == "h\u00e9llo"
    assert SimpleStringSchema()._deserialize(b"a\xff\xc3b") == "a\ufffd\ufffdb"
    assert SimpleStringSchema("UTF-16")._deserialize(b"\x00a\x00b") == "ab"       # no mark
    assert SimpleStringSchema("UTF-16")._deserialize(b"\xff\xfea\x00b\x00") == "ab"
    assert SimpleStringSchema("UTF-32")._deserialize(b"\xff\xfe\x00\x00a\x00\x00\x00") == "a"
    assert SimpleStringSchema()._produced_type() == Types.STRING()


def test_simple_string_schema_rejects_unknown_charsets_and_non_strings():
    with pytest.raises(ValueError, match="unknown charset 'nope'"):
        SimpleStringSchema("nope")
    with pytest.raises(TypeError, match="serializes str records, got int"):
        SimpleStringSchema()._serialize(5)


def test_byte_array_schema():
    schema = ByteArraySchema()
    assert schema._serialize(bytearray(b"ab")) == b"ab"
    assert schema._deserialize(b"\x00\x01") == b"\x00\x01"
    assert schema._produced_type() == Types.PRIMITIVE_ARRAY(Types.BYTE())
    with pytest.raises(TypeError, match="serializes bytes records"):
        schema._serialize("ab")


def test_row_field_extractor_schema():
    row = Row(b"\x01\x02", "x")
    assert RowFieldExtractorSchema(0)._serialize(row) == b"\x01\x02"
    assert RowFieldExtractorSchema(0)._serialize(Row(None, None)) == b""
    assert RowFieldExtractorSchema(2)._serialize(None) == b""
    with pytest.raises(ValueError, match="Field at index 1 must be of type bytes, but was str"):
        RowFieldExtractorSchema(1)._serialize(row)
    with pytest.raises(ValueError, match="Cannot access field 2 in Row with arity 2"):
        RowFieldExtractorSchema(2)._serialize(row)
    with pytest.raises(ValueError, match="Field index must be non-negative, got: -1"):
        RowFieldExtractorSchema(-1)


def test_schema_classes_are_importable_as_in_pyflink():
    from api.common import CsvRowSerializationSchema, JsonRowDeserializationSchema
    from api.datastream.formats.csv import CsvRowSerializationSchema as csv_class
    from api.datastream.formats.json import JsonRowDeserializationSchema as json_class
    assert (CsvRowSerializationSchema, JsonRowDeserializationSchema) == (csv_class, json_class)
    assert issubclass(SimpleStringSchema, SerializationSchema)
    assert issubclass(SimpleStringSchema, DeserializationSchema)
    assert Encoder.simple_string_encoder("UTF-8")._charset_name == "UTF-8"
    with pytest.raises(ImportError):
        from api.common import NoSuchSchema  # noqa: F401
