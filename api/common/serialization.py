"""Serialization schemas and encoders, as in ``pyflink.common.serialization``.

A :class:`SerializationSchema` turns a record into the bytes a sink writes (e.g. a Kafka
message value); a :class:`DeserializationSchema` turns the bytes a source reads into a
record. Connectors call them through two internal methods, the one contract between a
schema and a connector: ``schema._serialize(value) -> bytes`` and
``schema._deserialize(message: bytes)`` (None means "no record": Flink skips it), and
``schema._produced_type()`` gives the type of the records ``_deserialize`` returns.
"""
import codecs
from api.unavailable import SINK_ALTERNATIVES, UnavailableConnector

from .typeinfo import TypeInformation, Types
from .utils import JavaObjectWrapper
from .types import Row

__all__ = ['SerializationSchema', 'DeserializationSchema', 'SimpleStringSchema',
           'ByteArraySchema', 'Encoder', 'BulkWriterFactory', 'RowDataBulkWriterFactory',
           'RowFieldExtractorSchema']


class SerializationSchema(object):
    """Describes how a sink turns a record into bytes."""

    def _serialize(self, value) -> bytes:
        """The bytes written for ``value``."""
        raise NotImplementedError(f"{type(self).__name__} does not serialize records")


class DeserializationSchema(object):
    """Describes how a source turns the bytes it reads into a record, and the record type."""

    def _deserialize(self, message: bytes):
        """The record read from ``message``, or None when the message gives no record."""
        raise NotImplementedError(f"{type(self).__name__} does not deserialize records")

    def _produced_type(self) -> TypeInformation:
        """The type of the records ``_deserialize`` returns."""
        raise NotImplementedError(f"{type(self).__name__} has no produced type")


class _Charset:
    """A Java charset name and the codec doing what Java's ``String.getBytes(charset)`` and
    ``new String(bytes, charset)`` do: unmappable characters become ``?``, malformed input
    becomes U+FFFD, and "UTF-16" writes a big-endian byte order mark as Java does."""

    def __init__(self, charset_name: str, owner: str):
        try:
            self.codec = codecs.lookup(charset_name).name
        except (LookupError, TypeError):
            raise ValueError(f"{owner}: unknown charset {charset_name!r}") from None
        self.name = charset_name

    def encode(self, text: str) -> bytes:
        if self.codec == 'utf-16':
            return codecs.BOM_UTF16_BE + text.encode('utf-16-be', 'replace')
        if self.codec == 'utf-32':
            return text.encode('utf-32-be', 'replace')
        return text.encode(self.codec, 'replace')

    def decode(self, data: bytes) -> str:
        data = bytes(data)
        if self.codec in ('utf-16', 'utf-32'):
            # Java reads a byte order mark if there is one, and big-endian otherwise.
            width = 2 if self.codec == 'utf-16' else 4
            boms = ((codecs.BOM_UTF16_BE, 'utf-16-be'), (codecs.BOM_UTF16_LE, 'utf-16-le')) \
                if width == 2 else ((codecs.BOM_UTF32_BE, 'utf-32-be'),
                                    (codecs.BOM_UTF32_LE, 'utf-32-le'))
            for bom, codec in boms:
                if data.startswith(bom):
                    return data[len(bom):].decode(codec, 'replace')
            return data.decode(self.codec + '-be', 'replace')
        return data.decode(self.codec, 'replace')


class SimpleStringSchema(SerializationSchema, DeserializationSchema):
    """Strings to and from bytes in ``charset`` (UTF-8 by default)::

        KafkaSource.builder().set_value_only_deserializer(SimpleStringSchema())
    """

    def __init__(self, charset: str = 'UTF-8'):
        self._charset = _Charset(charset, 'SimpleStringSchema')

    def _serialize(self, value) -> bytes:
        if not isinstance(value, str):
            raise TypeError(f"SimpleStringSchema serializes str records, got "
                            f"{type(value).__name__}: {value!r:.100}")
        return self._charset.encode(value)

    def _deserialize(self, message: bytes) -> str:
        return self._charset.decode(message)

    def _produced_type(self) -> TypeInformation:
        return Types.STRING()


class ByteArraySchema(SerializationSchema, DeserializationSchema):
    """Records that are the bytes themselves."""

    def _serialize(self, value) -> bytes:
        if not isinstance(value, (bytes, bytearray)):
            raise TypeError(f"ByteArraySchema serializes bytes records, got "
                            f"{type(value).__name__}: {value!r:.100}")
        return bytes(value)

    def _deserialize(self, message: bytes) -> bytes:
        return bytes(message)

    def _produced_type(self) -> TypeInformation:
        return Types.PRIMITIVE_ARRAY(Types.BYTE())


class RowFieldExtractorSchema(SerializationSchema):
    """Writes one field of a Row, which must already be bytes: e.g. the message key of a
    Kafka record, ``set_key_serialization_schema(RowFieldExtractorSchema(0))``."""

    def __init__(self, field_index: int):
        if field_index < 0:
            raise ValueError(f"Field index must be non-negative, got: {field_index}")
        self._field_index = field_index

    def _serialize(self, value) -> bytes:
        if value is None:
            return b''
        if not isinstance(value, Row):
            raise TypeError(f"RowFieldExtractorSchema serializes Row records, got "
                            f"{type(value).__name__}: {value!r:.100}")
        if self._field_index >= len(value):
            raise ValueError(f"Cannot access field {self._field_index} in Row with arity "
                             f"{len(value)}")
        field = value[self._field_index]
        if field is None:
            return b''
        if not isinstance(field, (bytes, bytearray)):
            raise ValueError(f"Field at index {self._field_index} must be of type bytes, but "
                             f"was {type(field).__name__}")
        return bytes(field)


class Encoder:
    """How FileSink writes a record into a row-format part file (as
    ``pyflink.common.serialization.Encoder``)."""

    def __init__(self, charset_name: str):
        self._charset_name = _Charset(charset_name, 'Encoder').name

    @staticmethod
    def simple_string_encoder(charset_name: str = "UTF-8") -> "Encoder":
        """Writes each record's string form and a ``\\n``: Java's ``toString()`` of the
        record for declared types, ``str()`` for untyped records."""
        return Encoder(charset_name)


class BulkWriterFactory(JavaObjectWrapper):
    """Writes records into part files in bulk (a FileSink bulk format such as Parquet or
    CSV)."""

    def __init__(self, name: str, **settings):
        self._name = name
        self._settings = settings

    def _part_format(self, type_info: TypeInformation):
        """The engine's part file format for records of ``type_info``."""
        raise NotImplementedError(f"{self._name} cannot write files")


class UnavailableBulkFormat(UnavailableConnector):
    """Marks the bulk writer factories of formats this engine cannot write yet (Avro,
    ORC): a FileSink built with one fails when a job uses it."""

    _instead = ("FileSink.for_bulk_format(...) with ParquetBulkWriters or CsvBulkWriters, "
                "or " + SINK_ALTERNATIVES)

    def _connector_name(self) -> str:
        return f"The bulk format {self._name}"


class RowDataBulkWriterFactory(BulkWriterFactory):
    """A bulk writer factory for Row records of a known row type."""

    def __init__(self, name: str, row_type, **settings):
        super().__init__(name, **settings)
        self._row_type = row_type

    def get_row_type(self):
        """The row type the written records have."""
        return self._row_type

