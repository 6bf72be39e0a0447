"""Parquet formats, as in ``pyflink.datastream.formats.parquet``.

``ParquetBulkWriters.for_row_type`` writes Parquet files with FileSink (through pyarrow:
``pip install 'spark-datastream[parquet]'``); its row type is a ``Types.ROW_NAMED`` row
type (this engine has no Table API ``DataTypes``). The readers and the Avro writers are
not available yet: they can be created, and a job using one fails when it is built.
"""
from typing import Optional

from engine.io.files.sink import ParquetFormat

from api.common.configuration import Configuration
from api.common.serialization import (BulkWriterFactory, RowDataBulkWriterFactory,
                                      UnavailableBulkFormat)
from api.common.typeinfo import TypeInformation
from api.datastream.connectors.file_system import BulkFormat, StreamFormat
from api.unavailable import SOURCE_ALTERNATIVES, UnavailableConnector

from ._text import checked_row_type, element_type, kind_of
from .avro import AvroSchema

__all__ = ['AvroParquetReaders', 'AvroParquetWriters', 'ParquetColumnarRowInputFormat',
           'ParquetBulkWriters']


class _ParquetStreamFormat(StreamFormat, UnavailableConnector):
    """A Parquet record reader for FileSource (not available yet)."""

    _instead = SOURCE_ALTERNATIVES

    def _connector_name(self) -> str:
        return f"The Parquet format {self._name}"


class AvroParquetReaders(object):
    """Readers of Parquet files as Avro records, for FileSource."""

    @staticmethod
    def for_generic_record(schema: 'AvroSchema') -> StreamFormat:
        """Reads generic records of ``schema``."""
        return _ParquetStreamFormat('AvroParquetReaders.for_generic_record', schema=schema)


class _AvroParquetWriterFactory(BulkWriterFactory, UnavailableBulkFormat):
    """A bulk writer factory of Parquet files from Avro records (not available yet)."""


class AvroParquetWriters(object):
    """Bulk writers of Parquet files from Avro records, for FileSink."""

    @staticmethod
    def for_generic_record(schema: 'AvroSchema') -> BulkWriterFactory:
        """Writes generic records of ``schema``."""
        return _AvroParquetWriterFactory('AvroParquetWriters.for_generic_record',
                                         schema=schema)


class ParquetColumnarRowInputFormat(BulkFormat, UnavailableConnector):
    """Reads the columns of ``row_type`` from Parquet files in batches, for FileSource."""

    _instead = SOURCE_ALTERNATIVES

    def __init__(self, row_type, hadoop_config: Optional[Configuration] = None,
                 batch_size: int = 2048, is_utc_timestamp: bool = False,
                 is_case_sensitive: bool = True):
        super().__init__('ParquetColumnarRowInputFormat', row_type=row_type,
                         hadoop_config=hadoop_config or Configuration(),
                         batch_size=batch_size, is_utc_timestamp=is_utc_timestamp,
                         is_case_sensitive=is_case_sensitive)


class ParquetBulkWriters(object):
    """Bulk writers of Parquet files from rows, for FileSink."""

    @staticmethod
    def for_row_type(row_type, hadoop_config: Optional[Configuration] = None,
                     utc_timestamp: bool = False) -> BulkWriterFactory:
        """Writes rows of ``row_type`` (``Types.ROW_NAMED``: its field names are the
        columns); timestamps are stored as UTC instants with ``utc_timestamp``."""
        return _ParquetWriterFactory('ParquetBulkWriters.for_row_type',
                                     checked_row_type(row_type, 'ParquetBulkWriters'),
                                     hadoop_config=hadoop_config or Configuration(),
                                     utc_timestamp=utc_timestamp)


class _ParquetWriterFactory(RowDataBulkWriterFactory):
    """Writes each batch's rows of a subtask into one Parquet part file."""

    def _part_format(self, type_info: TypeInformation) -> ParquetFormat:
        try:
            import pyarrow as pa
        except ImportError:
            raise ImportError("ParquetBulkWriters need pyarrow: pip install "
                              "'spark-datastream[parquet]'") from None
        row_type = self._row_type
        utc = self._settings['utc_timestamp']
        schema = pa.schema([pa.field(name, _arrow_type(t, pa, utc)) for name, t in
                            zip(row_type.get_field_names(), row_type.get_field_types())])
        values = [_arrow_value(t) for t in row_type.get_field_types()]
        convert = row_type.convert

        def to_columns(records: list) -> list:
            rows = [convert(record) for record in records]
            return [[value(row[i]) for row in rows] for i, value in enumerate(values)]
        return ParquetFormat(schema, to_columns)


_ARROW_SCALARS = {
    'String': 'string', 'Char': 'string', 'Boolean': 'bool_', 'Byte': 'int8',
    'Short': 'int16', 'Integer': 'int32', 'Long': 'int64', 'Float': 'float32',
    'Double': 'float64', 'Date': 'date32', 'Bytes': 'binary',
}


def _arrow_type(type_info: TypeInformation, pa, utc: bool):
    """The Arrow type a field of ``type_info`` is stored as (Flink's Parquet types:
    BIG_DEC as DECIMAL(38, 18), times in milliseconds, timestamps in microseconds)."""
    kind = kind_of(type_info)
    if kind in _ARROW_SCALARS:
        return getattr(pa, _ARROW_SCALARS[kind])()
    if kind == 'BigDecimal':
        return pa.decimal128(38, 18)
    if kind == 'Time':
        return pa.time32('ms')
    if kind == 'Timestamp':
        return pa.timestamp('us', tz='UTC' if utc else None)
    if kind in ('Array', 'List', 'PrimitiveArray'):
        return pa.list_(_arrow_type(element_type(type_info), pa, utc))
    if kind == 'Map':
        return pa.map_(_arrow_type(type_info._key_type_info, pa, utc),
                       _arrow_type(type_info._value_type_info, pa, utc))
    if kind == 'Row':
        return pa.struct([pa.field(name, _arrow_type(t, pa, utc)) for name, t in
                          zip(type_info.get_field_names(), type_info.get_field_types())])
    raise ValueError(f"ParquetBulkWriters: unsupported field type {type_info!r}")


def _arrow_value(type_info: TypeInformation):
    """A function from a converted field value to what pyarrow takes for its type."""
    kind = kind_of(type_info)
    if kind == 'Row':
        names = type_info.get_field_names()
        fields = [_arrow_value(t) for t in type_info.get_field_types()]
        return lambda row: None if row is None else {
            name: value(v) for name, value, v in zip(names, fields, row)}
    if kind in ('Array', 'List', 'PrimitiveArray'):
        element = _arrow_value(element_type(type_info))
        return lambda values: None if values is None else [element(v) for v in values]
    if kind == 'Map':
        key, value = _arrow_value(type_info._key_type_info), _arrow_value(
            type_info._value_type_info)
        return lambda mapping: None if mapping is None else [
            (key(k), value(v)) for k, v in mapping.items()]
    return lambda value: value
