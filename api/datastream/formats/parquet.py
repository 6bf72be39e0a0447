"""Parquet formats, as in ``pyflink.datastream.formats.parquet``.

``ParquetBulkWriters.for_row_type`` writes Parquet files with FileSink (through pyarrow:
``pip install 'spark-datastream[parquet]'``); as in PyFlink its row type is a Table API
``RowType`` (``DataTypes.ROW([DataTypes.FIELD(...), ...])``), whose fields are the columns.
The readers and the Avro writers are not available yet: they can be created, and a job
using one fails when it is built.
"""
from typing import Optional

from engine.io.files.sink import ParquetFormat

from api.common.configuration import Configuration
from api.common.serialization import (BulkWriterFactory, RowDataBulkWriterFactory,
                                      UnavailableBulkFormat)
from api.common.typeinfo import TypeInformation
from api.datastream.connectors.file_system import BulkFormat, StreamFormat
from api.unavailable import SOURCE_ALTERNATIVES, UnavailableConnector

from api.table.types import RowType, checked_data_type, type_info_of

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

    def __init__(self, row_type: RowType, hadoop_config: Optional[Configuration] = None,
                 batch_size: int = 2048, is_utc_timestamp: bool = False,
                 is_case_sensitive: bool = True):
        checked_data_type('ParquetColumnarRowInputFormat', 'row_type', row_type, RowType)
        super().__init__('ParquetColumnarRowInputFormat', row_type=row_type,
                         hadoop_config=hadoop_config or Configuration(),
                         batch_size=batch_size, is_utc_timestamp=is_utc_timestamp,
                         is_case_sensitive=is_case_sensitive)


class ParquetBulkWriters(object):
    """Bulk writers of Parquet files from rows, for FileSink."""

    @staticmethod
    def for_row_type(row_type: RowType, hadoop_config: Optional[Configuration] = None,
                     utc_timestamp: bool = False) -> BulkWriterFactory:
        """Writes rows of ``row_type`` (a ``DataTypes.ROW``: its fields are the columns);
        timestamps are stored as UTC instants with ``utc_timestamp``."""
        checked_data_type('ParquetBulkWriters', 'row_type', row_type, RowType)
        return _ParquetWriterFactory('ParquetBulkWriters.for_row_type', row_type,
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
        schema = pa.schema([pa.field(f.name, _arrow_type(f.data_type, pa, utc))
                            for f in row_type])
        values = [_arrow_value(t) for t in row_type.field_types()]
        convert = type_info_of(row_type).convert

        def to_columns(records: list) -> list:
            rows = [convert(record) for record in records]
            return [[value(row[i]) for row in rows] for i, value in enumerate(values)]
        return ParquetFormat(schema, to_columns)


_ARROW_SCALARS = {
    'BOOLEAN': 'bool_', 'TINYINT': 'int8', 'SMALLINT': 'int16', 'INT': 'int32',
    'BIGINT': 'int64', 'FLOAT': 'float32', 'DOUBLE': 'float64', 'STRING': 'string',
    'VARCHAR': 'string', 'CHAR': 'string', 'DATE': 'date32', 'BYTES': 'binary',
    'VARBINARY': 'binary', 'BINARY': 'binary',
}


def _arrow_type(data_type, pa, utc: bool):
    """The Arrow type a field of ``data_type`` is stored as (times in milliseconds,
    timestamps in microseconds)."""
    root, args = data_type._root, data_type._args
    if root in _ARROW_SCALARS:
        return getattr(pa, _ARROW_SCALARS[root])()
    if root == 'DECIMAL':
        return pa.decimal128(*args)
    if root == 'TIME':
        return pa.time32('ms')
    if root in ('TIMESTAMP', 'TIMESTAMP_LTZ'):
        return pa.timestamp('us', tz='UTC' if utc else None)
    if root == 'ARRAY':
        return pa.list_(_arrow_type(args[0], pa, utc))
    if root == 'MAP':
        return pa.map_(_arrow_type(args[0], pa, utc), _arrow_type(args[1], pa, utc))
    if root == 'ROW':
        return pa.struct([pa.field(name, _arrow_type(t, pa, utc)) for name, t in args])
    raise ValueError(f"ParquetBulkWriters: unsupported field type {data_type}")


def _arrow_value(data_type):
    """A function from a converted field value to what pyarrow takes for its type."""
    root, args = data_type._root, data_type._args
    if root == 'ROW':
        fields = [(name, _arrow_value(t)) for name, t in args]
        return lambda row: None if row is None else {
            name: value(v) for (name, value), v in zip(fields, row)}
    if root == 'ARRAY':
        element = _arrow_value(args[0])
        return lambda values: None if values is None else [element(v) for v in values]
    if root == 'MAP':
        key, value = _arrow_value(args[0]), _arrow_value(args[1])
        return lambda mapping: None if mapping is None else [
            (key(k), value(v)) for k, v in mapping.items()]
    return lambda value: value
