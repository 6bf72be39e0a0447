"""The ``filesystem`` SQL connector: a bounded FileSource reading the files under 'path'
(recursively; names starting with ``.`` or ``_`` are skipped) and a FileSink writing part
files into 'path' (exactly once, visible when the batch that wrote them is committed; one
part file per subtask and micro-batch), in 'format' = 'csv' | 'json' (one record a line,
with Flink's ``csv.*`` / ``json.*`` options) or 'parquet'."""
from typing import Callable, Optional

from api.common.serialization import BulkWriterFactory
from api.common.typeinfo import TypeInformation
from api.common.watermark_strategy import WatermarkStrategy
from api.datastream.connectors.file_system import (BucketAssigner, FileSink, FileSource,
                                                   StreamFormat)
from api.datastream.data_stream import DataStream
from api.datastream.formats import parquet  # (the module: parquet imports api.table.types)
from api.datastream.functions import FlatMapFunction
from engine.io.files.sink import EncodedFormat
from engine.io.files.source import ParquetFileFormat
from ..ddl import TableDefinition
from ..types import DataTypes
from .formats import RowFormat, format_option_keys
from .options import SqlConnector, check_options, flag, row_type

__all__ = ['FILESYSTEM']

_FORMATS = ('csv', 'json', 'parquet')


def _check(definition: TableDefinition) -> None:
    options = definition.options
    format_name = options.get('format')
    check_options('filesystem', options, ['path', 'format', 'sink.parallelism',
                                          'parquet.utc-timezone'] +
                  format_option_keys(format_name or ''), required=['path', 'format'])
    if format_name not in _FORMATS:
        raise ValueError(f"Could not find any format factory for identifier '{format_name}': "
                         f"the formats of the filesystem connector here are "
                         f"{', '.join(_FORMATS)}")
    if format_name != 'parquet':
        RowFormat(format_name, definition.physical_columns(), options)


def filesystem_source(env, definition: TableDefinition,
                      parallelism: Optional[int]) -> DataStream:
    """The bounded stream of the rows of the files under the table's 'path'."""
    options = definition.options
    rows = row_type(definition)
    if options['format'] == 'parquet':
        source = FileSource.for_record_stream_format(_ParquetRows(rows), options['path'])
        stream = env.from_source(source.build(), WatermarkStrategy.no_watermarks(),
                                 definition.name)
    else:
        lines = FileSource.for_record_stream_format(StreamFormat.text_line_format(),
                                                    options['path']).build()
        stream = env.from_source(lines, WatermarkStrategy.no_watermarks(), definition.name) \
            .flat_map(_Deserialized(RowFormat(options['format'], definition.physical_columns(),
                                              options)), rows)
    return stream if parallelism is None else stream.set_parallelism(parallelism)


def filesystem_sink(definition: TableDefinition,
                    parallelism: Optional[int] = None) -> Callable[[DataStream], object]:
    """What writes a stream of the table's rows into part files under its 'path'."""
    options = definition.options
    columns = definition.physical_columns()
    if options['format'] == 'parquet':
        writers = parquet.ParquetBulkWriters.for_row_type(
            DataTypes.ROW([DataTypes.FIELD(n, t) for n, t in columns]),
            utc_timestamp=flag(options, 'parquet.utc-timezone'))
    else:
        writers = _LineWriters(RowFormat(options['format'], columns, options))
    sink = FileSink.for_bulk_format(options['path'], writers) \
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner()).build()
    parallelism = int(options.get('sink.parallelism', parallelism or 0)) or None

    def write(stream: DataStream):
        written = stream.sink_to(sink)
        return written if parallelism is None else written.set_parallelism(parallelism)
    return write


class _Deserialized(FlatMapFunction):
    """The row of a line (none for an unreadable line skipped by 'ignore-parse-errors')."""

    def __init__(self, row_format: RowFormat):
        self.row_format = row_format

    def flat_map(self, value):
        row = self.row_format.deserialize(value.encode('utf-8'))
        if row is not None:
            yield row


class _LineWriters(BulkWriterFactory):
    """Writes each record as a line of its format."""

    def __init__(self, row_format: RowFormat):
        super().__init__('filesystem')
        self.row_format = row_format

    def _part_format(self, type_info: TypeInformation) -> EncodedFormat:
        serialize = self.row_format.serialize
        return EncodedFormat(lambda row: serialize(row) + b'\n')


class _ParquetRows(StreamFormat):
    """Reads the rows of Parquet files (the table's columns, by name)."""

    def __init__(self, rows):
        super().__init__('parquet')
        self.rows = rows

    def _produced_type(self) -> TypeInformation:
        return self.rows

    def _engine_format(self) -> ParquetFileFormat:
        return ParquetFileFormat(self.rows.get_field_names(), self.rows.convert)


FILESYSTEM = SqlConnector(_check, source=filesystem_source, sink=filesystem_sink)
