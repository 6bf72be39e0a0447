"""Parquet formats, as in ``pyflink.datastream.formats.parquet``.

Not available yet in this engine: the readers and bulk writers can be created, and a job
using one fails when it is built.
"""
from typing import Optional

from api.common.configuration import Configuration
from api.common.serialization import BulkWriterFactory, RowDataBulkWriterFactory
from api.datastream.connectors.file_system import BulkFormat, StreamFormat
from api.unavailable import SOURCE_ALTERNATIVES, UnavailableConnector

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


class AvroParquetWriters(object):
    """Bulk writers of Parquet files from Avro records, for FileSink."""

    @staticmethod
    def for_generic_record(schema: 'AvroSchema') -> BulkWriterFactory:
        """Writes generic records of ``schema``."""
        return BulkWriterFactory('AvroParquetWriters.for_generic_record', schema=schema)


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
        """Writes rows of ``row_type``."""
        return RowDataBulkWriterFactory('ParquetBulkWriters.for_row_type', row_type,
                                        hadoop_config=hadoop_config or Configuration(),
                                        utc_timestamp=utc_timestamp)
