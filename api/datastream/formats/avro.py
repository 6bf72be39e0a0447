"""Avro formats, as in ``pyflink.datastream.formats.avro``.

Not available yet in this engine: the schemas, input format and bulk writers can be
created, and a job using one fails when it is built.
"""
import json
from typing import Optional

from api.common.serialization import (BulkWriterFactory, DeserializationSchema,
                                      SerializationSchema, UnavailableBulkFormat)
from api.common.typeinfo import TypeInformation
from api.common.utils import JavaObjectWrapper
from api.unavailable import SOURCE_ALTERNATIVES, UnavailableConnector

__all__ = ['AvroSchema', 'GenericRecordAvroTypeInfo', 'AvroInputFormat', 'AvroBulkWriters',
           'AvroRowDeserializationSchema', 'AvroRowSerializationSchema']

_ROW_SCHEMAS_INSTEAD = ("JsonRowSerializationSchema / JsonRowDeserializationSchema or "
                        "CsvRowSerializationSchema / CsvRowDeserializationSchema")


class AvroSchema(object):
    """An Avro schema, parsed from its JSON text."""

    def __init__(self, schema):
        self._schema = schema

    def __str__(self):
        return json.dumps(self._schema, separators=(',', ':'))

    @staticmethod
    def parse_string(json_schema: str) -> 'AvroSchema':
        """Parses an Avro schema from JSON text."""
        try:
            schema = json.loads(json_schema)
        except ValueError as e:
            raise ValueError(f"Invalid Avro schema: {e}") from None
        if isinstance(schema, dict) and 'type' not in schema:
            raise ValueError(f"Invalid Avro schema, no type: {json_schema[:200]}")
        return AvroSchema(schema)

    @staticmethod
    def parse_file(file_path: str) -> 'AvroSchema':
        """Parses an Avro schema from a JSON file."""
        with open(file_path, encoding='utf-8') as f:
            return AvroSchema.parse_string(f.read())


class GenericRecordAvroTypeInfo(TypeInformation):
    """The type of Avro generic records of a schema."""

    def __init__(self, schema: 'AvroSchema'):
        self._schema = schema

    def __eq__(self, other):
        return isinstance(other, GenericRecordAvroTypeInfo) and \
            str(self._schema) == str(other._schema)

    def __repr__(self):
        return f"GenericRecordAvroTypeInfo({self._schema})"


class AvroInputFormat(JavaObjectWrapper, UnavailableConnector):
    """Reads Avro files as generic records of ``schema``."""

    _instead = SOURCE_ALTERNATIVES

    def __init__(self, path: str, schema: 'AvroSchema'):
        self._path = path
        self._type_info = GenericRecordAvroTypeInfo(schema)

    def get_produced_type(self) -> GenericRecordAvroTypeInfo:
        return self._type_info


class _AvroWriterFactory(BulkWriterFactory, UnavailableBulkFormat):
    """A bulk writer factory of Avro files (not available yet)."""


class AvroBulkWriters(object):
    """Bulk writers of Avro files for FileSink."""

    @staticmethod
    def for_generic_record(schema: 'AvroSchema') -> BulkWriterFactory:
        """Writes generic records of ``schema``."""
        return _AvroWriterFactory('AvroBulkWriters.for_generic_record', schema=schema)


def _checked_schema_arguments(record_class: Optional[str], avro_schema_string: Optional[str]):
    if avro_schema_string is None and record_class is None:
        raise TypeError("record_class or avro_schema_string should be specified.")


class AvroRowDeserializationSchema(DeserializationSchema, UnavailableConnector):
    """Reads Avro records into Rows, given a record class name or a schema string."""

    _instead = _ROW_SCHEMAS_INSTEAD

    def __init__(self, record_class: str = None, avro_schema_string: str = None):
        _checked_schema_arguments(record_class, avro_schema_string)
        self._record_class = record_class
        self._avro_schema_string = avro_schema_string


class AvroRowSerializationSchema(SerializationSchema, UnavailableConnector):
    """Writes Rows as Avro records, given a record class name or a schema string."""

    _instead = _ROW_SCHEMAS_INSTEAD

    def __init__(self, record_class: str = None, avro_schema_string: str = None):
        _checked_schema_arguments(record_class, avro_schema_string)
        self._record_class = record_class
        self._avro_schema_string = avro_schema_string
