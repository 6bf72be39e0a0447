"""The ``filesystem`` SQL connector: a bounded FileSource reading the files under 'path'
(recursively; names starting with ``.`` or ``_`` are skipped) and a FileSink writing part
files into 'path' (exactly once, visible when the batch that wrote them is committed; one
part file per subtask and micro-batch), in 'format' = 'csv' | 'json' (one record a line,
with Flink's ``csv.*`` / ``json.*`` options) or 'parquet'.

A table ``PARTITIONED BY (k1, k2)`` keeps its rows in Hive-style directories
``path/k1=v1/k2=v2/`` (Flink's escaping of names and values; a NULL or empty value is
'partition.default-name'), its partition columns in the directory names, not in the
files.

Part files roll at the end of every micro-batch (Flink's checkpoints) and once larger than
'sink.rolling-policy.file-size' (128MB); 'sink.rolling-policy.rollover-interval',
'inactivity-interval' (30 min) and 'check-interval' (1 min) are checked, but a batch's
files are closed when it commits, long before such intervals pass."""
import datetime
import os
from decimal import Decimal
from typing import Callable, Optional

from api.common.serialization import BulkWriterFactory
from api.common.typeinfo import TypeInformation, Types
from api.common.types import Row
from api.common.watermark_strategy import WatermarkStrategy
from api.datastream.connectors.file_system import (BucketAssigner, FileSink, FileSource,
                                                   OnCheckpointRollingPolicy, StreamFormat)
from api.datastream.data_stream import DataStream
from api.datastream.formats import parquet  # (the module: parquet imports api.table.types)
from api.datastream.functions import FlatMapFunction
from engine.io.files.sink import EncodedFormat, MappedFormat, PartFileFormat
from engine.io.files.source import FileFormat, ParquetFileFormat, WithPathFormat
from ..ddl import TableDefinition
from ..types import DataType, DataTypes, type_info_of
from .formats import RowFormat, format_option_keys
from .options import SqlConnector, check_options, duration, flag, memory_size, row_type

__all__ = ['FILESYSTEM']

_FORMATS = ('csv', 'json', 'parquet')
_ROLLING = {'sink.rolling-policy.file-size': '128MB',
            'sink.rolling-policy.rollover-interval': '30 min',
            'sink.rolling-policy.inactivity-interval': '30 min',
            'sink.rolling-policy.check-interval': '1 min'}


def _check(definition: TableDefinition) -> None:
    options = definition.options
    format_name = options.get('format')
    check_options('filesystem', options, ['path', 'format', 'sink.parallelism',
                                          'parquet.utc-timezone', 'partition.default-name',
                                          *_ROLLING] +
                  format_option_keys(format_name or ''), required=['path', 'format'])
    _TableRollingPolicy(options)
    if format_name not in _FORMATS:
        raise ValueError(f"Could not find any format factory for identifier '{format_name}': "
                         f"the formats of the filesystem connector here are "
                         f"{', '.join(_FORMATS)}")
    partitions = _Partitions(definition)
    if format_name != 'parquet':
        RowFormat(format_name, partitions.data_columns, options)


def filesystem_source(env, definition: TableDefinition,
                      parallelism: Optional[int]) -> DataStream:
    """The bounded stream of the rows of the files under the table's 'path' (of a
    partitioned table, with the values of its directories' names)."""
    options = definition.options
    partitions = _Partitions(definition)
    data = partitions.data_columns
    if options['format'] == 'parquet':
        file_format = _ParquetRows(Types.ROW_NAMED([n for n, _ in data],
                                                   [type_info_of(t) for _, t in data]))
        row_format = None
    else:
        file_format = StreamFormat.text_line_format()
        row_format = RowFormat(options['format'], data, options)
    if partitions.keys:
        file_format = _WithPath(file_format)
    stream = env.from_source(
        FileSource.for_record_stream_format(file_format, options['path']).build(),
        WatermarkStrategy.no_watermarks(), definition.name)
    if row_format is not None or partitions.keys:
        stream = stream.flat_map(_TableRows(row_format, partitions), row_type(definition))
    return stream if parallelism is None else stream.set_parallelism(parallelism)


def filesystem_sink(definition: TableDefinition,
                    parallelism: Optional[int] = None) -> Callable[[DataStream], object]:
    """What writes a stream of the table's rows into part files under its 'path' (of a
    partitioned table, into the directories of their partitions)."""
    options = definition.options
    partitions = _Partitions(definition)
    data = partitions.data_columns
    if options['format'] == 'parquet':
        writers = parquet.ParquetBulkWriters.for_row_type(
            DataTypes.ROW([DataTypes.FIELD(n, t) for n, t in data]),
            utc_timestamp=flag(options, 'parquet.utc-timezone'))
    else:
        writers = _LineWriters(RowFormat(options['format'], data, options))
    assigner = BucketAssigner.base_path_bucket_assigner()
    if partitions.keys:
        writers, assigner = _DataColumns(writers, partitions), _PartitionBuckets(partitions)
    sink = FileSink.for_bulk_format(options['path'], writers).with_bucket_assigner(assigner) \
        .with_rolling_policy(_TableRollingPolicy(options)).build()
    parallelism = int(options.get('sink.parallelism', parallelism or 0)) or None

    def write(stream: DataStream):
        written = stream.sink_to(sink)
        return written if parallelism is None else written.set_parallelism(parallelism)
    return write


class _TableRollingPolicy(OnCheckpointRollingPolicy):
    """Flink's TableRollingPolicy: rolls at checkpoints (every micro-batch) and once a part
    file is larger than 'sink.rolling-policy.file-size'; the time options are checked."""

    def __init__(self, options):
        super().__init__()
        self._part_size = memory_size(options, 'sink.rolling-policy.file-size',
                                      _ROLLING['sink.rolling-policy.file-size'])
        for key, default in _ROLLING.items():
            if key != 'sink.rolling-policy.file-size':
                duration(options, key, default)


# Flink's (Hive's) characters escaped as %XX in partition directory names
_ESCAPED = frozenset([chr(c) for c in range(1, 0x20)] + list('"#%\'*/:=?\\\x7f{}[]^'))
_PARTITION_TYPES = ('CHAR', 'VARCHAR', 'STRING', 'BOOLEAN', 'TINYINT', 'SMALLINT', 'INT',
                    'BIGINT', 'DECIMAL', 'DATE')


class _Partitions:
    """Where a table's columns are: ``keys``, the positions of its partition columns (in
    PARTITIONED BY's order), and ``data``, those of the columns in its files."""

    def __init__(self, definition: TableDefinition):
        columns = definition.physical_columns()
        names = [n for n, _ in columns]
        for key in definition.partition_keys:
            if key not in names:
                raise ValueError(f"Partition column '{key}' not defined in the table schema. "
                                 "Available columns: [%s]" % ', '.join(f"'{n}'" for n in names))
            data_type = columns[names.index(key)][1]
            if data_type._root not in _PARTITION_TYPES:
                raise NotImplementedError(
                    f"PARTITIONED BY: the partition column '{key}' is {data_type}; partition "
                    f"columns here are of {', '.join(_PARTITION_TYPES)}")
        self.names = list(definition.partition_keys)
        self.keys = [names.index(k) for k in self.names]
        self.types = [columns[i][1] for i in self.keys]
        self.data = [i for i in range(len(columns)) if i not in self.keys]
        self.data_columns = [columns[i] for i in self.data]
        self.size = len(columns)
        self.default_name = definition.options.get('partition.default-name',
                                                   '__DEFAULT_PARTITION__')

    def directory(self, row) -> str:
        """The directory of a row's partition: ``k1=v1/k2=v2``."""
        return '/'.join('%s=%s' % (_escaped(name), _escaped(_text(row[i])) or self.default_name)
                        for name, i in zip(self.names, self.keys))

    def row(self, data, path: str) -> Row:
        """The table's row of a file's ``data`` row and the file's ``path``."""
        values = [None] * self.size
        for i, value in zip(self.data, data):
            values[i] = value
        found = dict(part.split('=', 1) for part in os.path.dirname(path).split(os.sep)
                     if '=' in part)
        for name, i, data_type in zip(self.names, self.keys, self.types):
            text = found.get(_escaped(name))
            text = None if text is None else _unescaped(text)
            values[i] = None if text in (None, self.default_name) else \
                _partition_value(text, data_type)
        return Row(*values)


def _text(value) -> str:
    """A partition value as Flink writes it in a directory name."""
    if value is None:
        return ''
    if isinstance(value, bool):
        return 'true' if value else 'false'
    return str(value)


def _escaped(text: str) -> str:
    return ''.join('%%%02X' % ord(c) if c in _ESCAPED else c for c in text)


def _unescaped(text: str) -> str:
    parts = text.split('%')
    return parts[0] + ''.join(chr(int(p[:2], 16)) + p[2:] if len(p) >= 2 else '%' + p
                              for p in parts[1:])


def _partition_value(text: str, data_type: DataType):
    """The value of a partition column of ``data_type`` named by ``text``."""
    root = data_type._root
    if root in ('TINYINT', 'SMALLINT', 'INT', 'BIGINT'):
        return int(text)
    if root == 'BOOLEAN':
        return text.lower() == 'true'
    if root == 'DECIMAL':
        return Decimal(text).quantize(Decimal(1).scaleb(-data_type._args[1]))
    if root == 'DATE':
        return datetime.date.fromisoformat(text)
    return text


class _WithPath(StreamFormat):
    """The records of ``inner`` as (record, path of its file) pairs."""

    def __init__(self, inner: StreamFormat):
        super().__init__('with-path')
        self.inner = inner

    def _produced_type(self) -> TypeInformation:
        return Types.TUPLE([self.inner._produced_type(), Types.STRING()])

    def _engine_format(self) -> FileFormat:
        return WithPathFormat(self.inner._engine_format())


class _TableRows(FlatMapFunction):
    """The table's row of a record of its files: a line in ``row_format`` (None: a Row of
    a Parquet file), with the partition values of its path for a partitioned table; none
    for an unreadable line skipped by 'ignore-parse-errors'."""

    def __init__(self, row_format: Optional[RowFormat], partitions: _Partitions):
        self.row_format = row_format
        self.partitions = partitions

    def flat_map(self, value):
        record, path = value if self.partitions.keys else (value, None)
        row = record if self.row_format is None else \
            self.row_format.deserialize(record.encode('utf-8'))
        if row is not None:
            yield self.partitions.row(row, path) if path is not None else row


class _PartitionBuckets(BucketAssigner):
    """The bucket of a row: the directory of its partition."""

    _by_record = True

    def __init__(self, partitions: _Partitions):
        super().__init__()
        self.partitions = partitions

    def _bucket_id(self, value, processing_time: int) -> str:
        return self.partitions.directory(value)


class _DataColumns(BulkWriterFactory):
    """The part files of ``writers`` of a row's data columns (not its partition columns)."""

    def __init__(self, writers: BulkWriterFactory, partitions: _Partitions):
        super().__init__('filesystem')
        self.writers = writers
        self.data = partitions.data

    def _part_format(self, type_info: TypeInformation) -> PartFileFormat:
        data = self.data
        return MappedFormat(self.writers._part_format(type_info),
                            lambda row: Row(*[row[i] for i in data]))


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


FILESYSTEM = SqlConnector(_check, source=filesystem_source, sink=filesystem_sink,
                          partitioned=True)
