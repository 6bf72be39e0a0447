"""FileSink, as in ``pyflink.datastream.connectors.file_system``: a sink that writes rows to
part files in bucket directories under a base path, exactly once.

Every micro-batch, each sink subtask writes its records into hidden in-progress files
(``<bucket>/.part-<uuid>-<n>.inprogress.<batch>``); the driver renames them to their
finished names (``<bucket>/part-<uuid>-<n>``) only after the batch is committed. A failed
batch leaves no finished file, and a resumed job finishes or discards what a crash left
in progress. The base path must be on a file system the driver and every worker share.
"""
import os
import uuid
import warnings
from datetime import datetime
from typing import Optional, Union
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from engine.io.files import sink as file_sink, source as file_source

from api.common.serialization import BulkWriterFactory, Encoder, _Charset
from api.common.typeinfo import TypeInformation, Types
from api.common.time import Duration
from api.common.utils import JavaObjectWrapper
from api.datastream.sinks import string_formatter
from api.unavailable import UnavailableConnector, check_available

from .base import (LegacyConnectorFunction, Sink, Source, StreamTransformer,
                   SupportsPreprocessing)

# Importable from here as in PyFlink.
from api.common.serialization import RowDataBulkWriterFactory  # noqa: E402,F401
from api.datastream.functions import SinkFunction  # noqa: E402,F401

__all__ = ["FileCompactor", "FileCompactStrategy", "OutputFileConfig", "FileSource",
           "FileSourceBuilder", "FileSink", "StreamingFileSink", "StreamFormat", "BulkFormat",
           "FileEnumeratorProvider", "FileSplitAssignerProvider", "RollingPolicy",
           "BucketAssigner"]


class OutputFileConfig(JavaObjectWrapper):
    """The prefix and suffix of part file names: ``<prefix>-<uuid>-<n><suffix>``.

    ``OutputFileConfig.builder().with_part_prefix("pre").with_part_suffix(".txt").build()``
    """

    def __init__(self, part_prefix: str, part_suffix: str):
        for what, value in (("part_prefix", part_prefix), ("part_suffix", part_suffix)):
            if not isinstance(value, str) or os.sep in value:
                raise ValueError(f"OutputFileConfig: {what} must be a string without "
                                 f"{os.sep!r}, got {value!r}")
        self._part_prefix = part_prefix
        self._part_suffix = part_suffix

    @staticmethod
    def builder() -> "OutputFileConfig.OutputFileConfigBuilder":
        return OutputFileConfig.OutputFileConfigBuilder()

    def get_part_prefix(self) -> str:
        return self._part_prefix

    def get_part_suffix(self) -> str:
        return self._part_suffix

    class OutputFileConfigBuilder:
        """Builds an OutputFileConfig; the defaults are prefix "part" and no suffix."""

        def __init__(self):
            self._part_prefix = "part"
            self._part_suffix = ""

        def with_part_prefix(self, prefix) -> "OutputFileConfig.OutputFileConfigBuilder":
            self._part_prefix = prefix
            return self

        def with_part_suffix(self, suffix) -> "OutputFileConfig.OutputFileConfigBuilder":
            self._part_suffix = suffix
            return self

        def build(self) -> "OutputFileConfig":
            return OutputFileConfig(self._part_prefix, self._part_suffix)


class RollingPolicy(JavaObjectWrapper):
    """When FileSink closes its open part file and starts a new one.

    Every micro-batch closes its part files when it commits (like a checkpoint), so
    ``default_rolling_policy`` also rolls by size within a batch, and its time limits
    only matter for batches longer than them (which processing time, fixed per batch,
    never shows): a departure from Flink, whose row-format files stay open across
    checkpoints until the policy rolls them."""

    def __init__(self, part_size: Optional[int]):
        self._part_size = part_size

    @staticmethod
    def default_rolling_policy(part_size: int = 1024 * 1024 * 128,
                               rollover_interval: int = 60 * 1000,
                               inactivity_interval: int = 60 * 1000) -> "DefaultRollingPolicy":
        """Rolls a part file once it is larger than ``part_size`` bytes, or older than
        ``rollover_interval`` ms, or not written for ``inactivity_interval`` ms."""
        return DefaultRollingPolicy(part_size, rollover_interval, inactivity_interval)

    @staticmethod
    def on_checkpoint_rolling_policy() -> "OnCheckpointRollingPolicy":
        """Rolls part files only at checkpoints: here, at the end of every micro-batch."""
        return OnCheckpointRollingPolicy()


class DefaultRollingPolicy(RollingPolicy):
    """Rolls by part size, age and inactivity; see ``RollingPolicy.default_rolling_policy``."""

    def __init__(self, part_size: int, rollover_interval: int, inactivity_interval: int):
        for what, value in (("part_size", part_size), ("rollover_interval", rollover_interval),
                            ("inactivity_interval", inactivity_interval)):
            if not isinstance(value, int) or value <= 0:
                raise ValueError(f"DefaultRollingPolicy: {what} must be a positive integer, "
                                 f"got {value!r}")
        super().__init__(part_size)
        self._rollover_interval = rollover_interval
        self._inactivity_interval = inactivity_interval


class OnCheckpointRollingPolicy(RollingPolicy):
    """Rolls only at checkpoints (the end of each micro-batch)."""

    def __init__(self):
        super().__init__(None)


class BucketAssigner(JavaObjectWrapper):
    """Chooses the bucket (sub-directory of the base path) part files are written to."""

    _by_record = False  # the bucket depends on the batch's processing time only

    def __init__(self, format_str: Optional[str] = None, timezone_id: Optional[str] = None):
        self._pattern = None if format_str is None else _parse_java_pattern(format_str)
        self._zone = None
        if timezone_id is not None:
            try:
                self._zone = ZoneInfo(timezone_id)
            except (ZoneInfoNotFoundError, ValueError, TypeError):
                raise ValueError(f"date_time_bucket_assigner: unknown timezone_id "
                                 f"{timezone_id!r}") from None

    @staticmethod
    def base_path_bucket_assigner() -> "BucketAssigner":
        """Writes every part file directly into the base path."""
        return BucketAssigner()

    @staticmethod
    def date_time_bucket_assigner(format_str: str = "yyyy-MM-dd--HH",
                                  timezone_id: str = None) -> "BucketAssigner":
        """One bucket per value of the processing time formatted by ``format_str`` (a Java
        ``DateTimeFormatter`` pattern) in ``timezone_id`` (default: the worker's local
        time zone). A micro-batch's records share one processing time, hence one bucket."""
        if not isinstance(format_str, str):
            raise ValueError(f"date_time_bucket_assigner: format_str must be a string, got "
                             f"{format_str!r}")
        return BucketAssigner(format_str, timezone_id)

    def _bucket_id(self, value, processing_time: int) -> str:
        if self._pattern is None:
            return ""
        moment = datetime.fromtimestamp(processing_time / 1000, self._zone)
        return "".join(part if isinstance(part, str) else _format_field(part, moment)
                       for part in self._pattern)


class FileCompactStrategy(JavaObjectWrapper):
    """When FileSink would compact small part files (``FileSink.BaseBuilder.enable_compact``)."""

    def __init__(self, num_checkpoints_before_compaction: int, size_threshold: int,
                 num_compact_threads: int):
        self._num_checkpoints_before_compaction = num_checkpoints_before_compaction
        self._size_threshold = size_threshold
        self._num_compact_threads = num_compact_threads

    @staticmethod
    def builder() -> 'FileCompactStrategy.Builder':
        return FileCompactStrategy.Builder()

    class Builder(object):
        """Builds a FileCompactStrategy; at least one trigger must be set."""

        def __init__(self):
            self._num_checkpoints_before_compaction = -1
            self._size_threshold = -1
            self._num_compact_threads = -1

        def enable_compaction_on_checkpoint(self, num_checkpoints_before_compaction: int
                                            ) -> 'FileCompactStrategy.Builder':
            """Compacts every ``num_checkpoints_before_compaction`` checkpoints."""
            if num_checkpoints_before_compaction <= 0:
                raise ValueError("Number of checkpoints before compaction should be more "
                                 "than 0.")
            self._num_checkpoints_before_compaction = num_checkpoints_before_compaction
            return self

        def set_size_threshold(self, size_threshold: int) -> 'FileCompactStrategy.Builder':
            """Compacts once the pending files reach ``size_threshold`` bytes."""
            self._size_threshold = size_threshold
            return self

        def set_num_compact_threads(self, num_compact_threads: int
                                    ) -> 'FileCompactStrategy.Builder':
            """The number of threads compacting files."""
            self._num_compact_threads = num_compact_threads
            return self

        def build(self) -> 'FileCompactStrategy':
            if self._num_checkpoints_before_compaction < 0 and self._size_threshold < 0:
                raise ValueError("At least one compaction trigger must be set: "
                                 "enable_compaction_on_checkpoint or set_size_threshold.")
            return FileCompactStrategy(self._num_checkpoints_before_compaction,
                                       self._size_threshold, self._num_compact_threads)


class FileCompactor(JavaObjectWrapper):
    """How FileSink would merge small part files."""

    def __init__(self, kind: str, file_delimiter: Optional[bytes] = None):
        self._kind = kind
        self._file_delimiter = file_delimiter

    @staticmethod
    def concat_file_compactor(file_delimiter: bytes = None) -> 'FileCompactor':
        """Concatenates the files, with ``file_delimiter`` between them if given."""
        return FileCompactor('concat', file_delimiter)

    @staticmethod
    def identical_file_compactor() -> 'FileCompactor':
        """Copies a single file as it is."""
        return FileCompactor('identical')


class FileSink(Sink, SupportsPreprocessing):
    """A sink writing rows to part files within buckets under ``base_path``, exactly once
    in BATCH and STREAMING mode; see the module's description for how::

        ds.sink_to(FileSink.for_row_format("/tmp/out", Encoder.simple_string_encoder())
                   .with_output_file_config(OutputFileConfig.builder()
                                            .with_part_prefix("pre").build())
                   .with_rolling_policy(RollingPolicy.default_rolling_policy(part_size=1 << 20))
                   .build())

    ``for_bulk_format`` writes a subtask's records of each batch into one file with a bulk
    writer factory: ``ParquetBulkWriters.for_row_type(...)`` or
    ``CsvBulkWriters.for_schema(...)`` (Avro and ORC writers are not available yet).
    """

    def __init__(self, base_path: str, file_format: Union[Encoder, BulkWriterFactory],
                 bucket_assigner: BucketAssigner, rolling_policy: RollingPolicy,
                 output_file_config: OutputFileConfig, compaction: Optional[tuple] = None):
        self._base_path = base_path
        self._format = file_format
        self._bucket_assigner = bucket_assigner
        self._rolling_policy = rolling_policy
        self._output_file_config = output_file_config
        self._compaction = compaction

    def get_transformer(self) -> Optional[StreamTransformer]:
        """None: records reach the part file writers as they are."""
        return None

    @staticmethod
    def for_row_format(base_path: str, encoder: Encoder) -> "FileSink.RowFormatBuilder":
        """Starts a FileSink writing each record as a row encoded by ``encoder``."""
        return FileSink.RowFormatBuilder(base_path, encoder)

    @staticmethod
    def for_bulk_format(base_path: str, writer_factory: BulkWriterFactory
                        ) -> "FileSink.BulkFormatBuilder":
        """Starts a FileSink writing records in bulk with ``writer_factory``; part files
        roll at the end of every micro-batch."""
        return FileSink.BulkFormatBuilder(base_path, writer_factory)

    def engine_sink(self, type_info: TypeInformation) -> file_sink.FileSink:
        """The engine sink writing a stream of ``type_info`` (used by ``sink_to``)."""
        check_available(self._format)
        if isinstance(self._format, Encoder):
            to_line, charset = string_formatter(type_info), self._format._charset_name
            # Java's String.getBytes writes '?' for characters the charset lacks.
            part_format = file_sink.EncodedFormat(
                lambda value: to_line(value).encode(charset, "replace") + b"\n")
        else:
            part_format = self._format._part_format(type_info)
        # The token keeps part file names of several sinks sharing a base path apart.
        return file_sink.FileSink(self._base_path, part_format,
                                  self._output_file_config.get_part_prefix(),
                                  self._output_file_config.get_part_suffix(),
                                  self._rolling_policy._part_size, self._bucket_assigner._bucket_id,
                                  uuid.uuid4().hex, self._bucket_assigner._by_record)

    class BaseBuilder(object):
        """The settings both FileSink builders share; defaults: an hourly
        ``date_time_bucket_assigner`` and part files named ``part-<uuid>-<n>``."""

        def __init__(self, base_path: str, file_format, rolling_policy: RollingPolicy):
            if not isinstance(base_path, str) or not base_path:
                raise ValueError(f"FileSink: base_path must be a non-empty string, got "
                                 f"{base_path!r}")
            self._base_path = _local_path(base_path)
            self._format = file_format
            self._bucket_assigner = BucketAssigner.date_time_bucket_assigner()
            self._rolling_policy = rolling_policy
            self._output_file_config = OutputFileConfig.builder().build()
            self._compaction = None

        def with_bucket_check_interval(self, interval: int):
            """Accepted for compatibility: part files are checked for rolling at the end of
            every micro-batch, where they all roll anyway."""
            if not isinstance(interval, int) or interval <= 0:
                raise ValueError(f"FileSink: the bucket check interval must be a positive "
                                 f"number of milliseconds, got {interval!r}")
            return self

        def with_bucket_assigner(self, bucket_assigner: BucketAssigner):
            _check_type(bucket_assigner, BucketAssigner, "with_bucket_assigner")
            self._bucket_assigner = bucket_assigner
            return self

        def with_output_file_config(self, output_file_config: OutputFileConfig):
            _check_type(output_file_config, OutputFileConfig, "with_output_file_config")
            self._output_file_config = output_file_config
            return self

        def enable_compact(self, strategy: FileCompactStrategy, compactor: FileCompactor):
            """Recorded for compatibility: this engine publishes each micro-batch's part
            files as they are and does not merge them (the records written are the same)."""
            _check_type(strategy, FileCompactStrategy, "enable_compact")
            _check_type(compactor, FileCompactor, "enable_compact")
            self._compaction = (strategy, compactor)
            return self

        def disable_compact(self):
            self._compaction = None
            return self

        def with_rolling_policy(self, rolling_policy: RollingPolicy):
            _check_type(rolling_policy, RollingPolicy, "with_rolling_policy")
            self._rolling_policy = rolling_policy
            return self

        def build(self) -> "FileSink":
            return FileSink(self._base_path, self._format, self._bucket_assigner,
                            self._rolling_policy, self._output_file_config, self._compaction)

    class RowFormatBuilder(BaseBuilder):
        """Builder of a row-format FileSink (default rolling policy:
        ``default_rolling_policy()``)."""

        def __init__(self, base_path: str, encoder: Encoder):
            if not isinstance(encoder, Encoder):
                raise TypeError(f"FileSink.for_row_format: encoder must be an Encoder (e.g. "
                                f"Encoder.simple_string_encoder()), got {encoder!r}")
            super().__init__(base_path, encoder, RollingPolicy.default_rolling_policy())

    class BulkFormatBuilder(BaseBuilder):
        """Builder of a bulk-format FileSink, which rolls its part files at checkpoints."""

        def __init__(self, base_path: str, writer_factory: BulkWriterFactory):
            if not isinstance(writer_factory, BulkWriterFactory):
                raise TypeError(f"FileSink.for_bulk_format: writer_factory must be a "
                                f"BulkWriterFactory (e.g. ParquetBulkWriters.for_row_type(...))"
                                f", got {writer_factory!r}")
            super().__init__(base_path, writer_factory,
                             RollingPolicy.on_checkpoint_rolling_policy())

        def with_rolling_policy(self, rolling_policy: OnCheckpointRollingPolicy):
            if not isinstance(rolling_policy, OnCheckpointRollingPolicy):
                raise ValueError('rolling_policy must be OnCheckpointRollingPolicy for bulk '
                                 'format')
            return super().with_rolling_policy(rolling_policy)


class StreamingFileSink(LegacyConnectorFunction):
    """The legacy file sink, deprecated since Flink 1.15 in favour of FileSink (which has
    the same builder methods and is available here)."""

    _instead = "ds.sink_to(FileSink.for_row_format(...)), built with the same methods"

    def __init__(self, settings: dict):
        warnings.warn("Deprecated in 1.15. Use FileSink instead.", DeprecationWarning)
        self._settings = settings

    @staticmethod
    def for_row_format(base_path: str, encoder: Encoder
                       ) -> 'StreamingFileSink.DefaultRowFormatBuilder':
        return StreamingFileSink.DefaultRowFormatBuilder(base_path, encoder)

    @staticmethod
    def for_bulk_format(base_path: str, writer_factory: BulkWriterFactory
                        ) -> 'StreamingFileSink.DefaultBulkFormatBuilder':
        return StreamingFileSink.DefaultBulkFormatBuilder(base_path, writer_factory)

    class BaseBuilder(object):
        """Records the settings of a StreamingFileSink."""

        def __init__(self, base_path: str, file_format):
            self._settings = {'base_path': base_path, 'format': file_format}

        def with_bucket_check_interval(self, interval: int):
            self._settings['bucket_check_interval'] = interval
            return self

        def with_bucket_assigner(self, bucket_assigner: BucketAssigner):
            self._settings['bucket_assigner'] = bucket_assigner
            return self

        def with_rolling_policy(self, policy: RollingPolicy):
            self._settings['rolling_policy'] = policy
            return self

        def with_output_file_config(self, output_file_config: OutputFileConfig):
            self._settings['output_file_config'] = output_file_config
            return self

        def build(self) -> 'StreamingFileSink':
            return StreamingFileSink(dict(self._settings))

    class DefaultRowFormatBuilder(BaseBuilder):
        """Builder of a row-format StreamingFileSink."""

    class DefaultBulkFormatBuilder(BaseBuilder):
        """Builder of a bulk-format StreamingFileSink."""


class StreamFormat(object):
    """How FileSource reads records from a stream of file bytes, e.g. text lines."""

    def __init__(self, name: str, **settings):
        self._name = name
        self._settings = settings

    @staticmethod
    def text_line_format(charset_name: str = "UTF-8") -> 'StreamFormat':
        """Reads each line of a text file as a string record (lines end at ``\\n``,
        ``\\r`` or ``\\r\\n``; undecodable bytes become U+FFFD)."""
        return _TextLineFormat(_Charset(charset_name, 'StreamFormat.text_line_format'))

    def _produced_type(self) -> TypeInformation:
        """The type of the records read."""
        raise NotImplementedError

    def _engine_format(self) -> file_source.FileFormat:
        """How the engine reads files in this format."""
        raise NotImplementedError


class _TextLineFormat(StreamFormat):
    def __init__(self, charset: _Charset):
        super().__init__('StreamFormat.text_line_format', charset_name=charset.name)
        self._charset = charset

    def _produced_type(self) -> TypeInformation:
        return Types.STRING()

    def _engine_format(self) -> file_source.TextLineFormat:
        return file_source.TextLineFormat(self._charset.codec, self._charset.decode)


class BulkFormat(UnavailableConnector):
    """How FileSource reads records in batches from files (e.g. Parquet columns); no bulk
    format can be read yet in this engine."""

    _instead = "FileSource.for_record_stream_format(...) with a StreamFormat"

    def __init__(self, name: str, **settings):
        self._name = name
        self._settings = settings

    def _connector_name(self) -> str:
        return f"The bulk format {self._name}"


class FileEnumeratorProvider(object):
    """How FileSource lists the files under its paths and cuts them into splits."""

    def __init__(self, kind: str):
        self._kind = kind

    @staticmethod
    def default_splittable_file_enumerator() -> 'FileEnumeratorProvider':
        """Lists files recursively (skipping hidden ones) and splits splittable formats."""
        return FileEnumeratorProvider('splittable')

    @staticmethod
    def default_non_splittable_file_enumerator() -> 'FileEnumeratorProvider':
        """Lists files recursively (skipping hidden ones), one split per file."""
        return FileEnumeratorProvider('non_splittable')


class FileSplitAssignerProvider(object):
    """How FileSource hands file splits to its parallel readers."""

    def __init__(self, kind: str):
        self._kind = kind

    @staticmethod
    def locality_aware_split_assigner() -> 'FileSplitAssignerProvider':
        """Prefers splits stored on the reader's host."""
        return FileSplitAssignerProvider('locality_aware')


class FileSource(Source):
    """A source reading the files under the given paths (directories recursively, hidden
    files skipped) with a stream format, once (bounded, the default) or continuously
    (``monitor_continuously``)::

        FileSource.for_record_stream_format(StreamFormat.text_line_format(), "/data/in") \\
            .monitor_continuously(Duration.of_seconds(10)).build()

    Large plain text files are split so that parallel readers share them; every split's
    read position is part of each batch's commit record, so a restarted job neither skips
    nor repeats a record. Continuous monitoring reads each new file once: a file must be
    complete when it appears in the paths (move it in once written).
    """

    def __init__(self, file_format: Union[StreamFormat, BulkFormat], paths: tuple,
                 discovery_interval: Optional[Duration],
                 file_enumerator: Optional[FileEnumeratorProvider],
                 split_assigner: Optional[FileSplitAssignerProvider]):
        self._format = file_format
        self._paths = paths
        self._discovery_interval = discovery_interval
        self._file_enumerator = file_enumerator
        self._split_assigner = split_assigner

    def get_produced_type(self) -> TypeInformation:
        check_available(self._format)
        return self._format._produced_type()

    def engine_source(self) -> file_source.FileSource:
        check_available(self._format)
        interval = self._discovery_interval
        split_size = file_source.SPLIT_SIZE
        if self._file_enumerator is not None and self._file_enumerator._kind == 'non_splittable':
            split_size = None
        return file_source.FileSource([_local_path(path, "FileSource") for path in self._paths],
                                      self._format._engine_format(),
                                      None if interval is None else interval.to_milliseconds(),
                                      split_size)

    @staticmethod
    def for_record_stream_format(stream_format: StreamFormat, *paths: str
                                 ) -> 'FileSourceBuilder':
        """Starts a FileSource reading ``paths`` record by record with ``stream_format``."""
        _check_type(stream_format, StreamFormat, "for_record_stream_format", "FileSource")
        return FileSourceBuilder(stream_format, paths)

    @staticmethod
    def for_bulk_file_format(bulk_format: BulkFormat, *paths: str) -> 'FileSourceBuilder':
        """Starts a FileSource reading ``paths`` in batches with ``bulk_format``."""
        _check_type(bulk_format, BulkFormat, "for_bulk_file_format", "FileSource")
        return FileSourceBuilder(bulk_format, paths)


class FileSourceBuilder(object):
    """Builds a FileSource; by default it reads the files present once and ends."""

    def __init__(self, file_format, paths: tuple):
        if not paths:
            raise ValueError("FileSource: at least one path is required")
        self._format = file_format
        self._paths = tuple(paths)
        self._discovery_interval = None
        self._file_enumerator = None
        self._split_assigner = None

    def monitor_continuously(self, discovery_interval: Duration) -> 'FileSourceBuilder':
        """Keeps watching the paths for new files every ``discovery_interval`` (unbounded)."""
        _check_type(discovery_interval, Duration, "monitor_continuously", "FileSource")
        if discovery_interval.to_nanos() <= 0:
            raise ValueError("discoveryInterval must be > 0")
        self._discovery_interval = discovery_interval
        return self

    def process_static_file_set(self) -> 'FileSourceBuilder':
        """Reads the files present when the job starts, then ends (the default)."""
        self._discovery_interval = None
        return self

    def set_file_enumerator(self, file_enumerator: FileEnumeratorProvider
                            ) -> 'FileSourceBuilder':
        _check_type(file_enumerator, FileEnumeratorProvider, "set_file_enumerator",
                    "FileSource")
        self._file_enumerator = file_enumerator
        return self

    def set_split_assigner(self, split_assigner: FileSplitAssignerProvider
                           ) -> 'FileSourceBuilder':
        _check_type(split_assigner, FileSplitAssignerProvider, "set_split_assigner",
                    "FileSource")
        self._split_assigner = split_assigner
        return self

    def build(self) -> FileSource:
        return FileSource(self._format, self._paths, self._discovery_interval,
                          self._file_enumerator, self._split_assigner)


def _check_type(value, expected: type, method: str, owner: str = "FileSink") -> None:
    if not isinstance(value, expected):
        raise TypeError(f"{owner}.{method}: expected a {expected.__name__}, got {value!r}")


def _local_path(path: str, owner: str = "FileSink") -> str:
    """An absolute local path (workers may run in another directory); ``file://`` URIs
    are accepted, other file systems are not supported."""
    if path.startswith("file://"):
        path = path[len("file://"):]
    elif "://" in path:
        raise ValueError(f"{owner}: only local or mounted file systems are supported, got "
                         f"{path!r}")
    return os.path.abspath(path)


# Java DateTimeFormatter pattern letters supported in bucket formats, with the largest
# count Java accepts.
_MAX_COUNT = {"y": 9, "u": 9, "M": 5, "d": 2, "H": 2, "h": 2, "m": 2, "s": 2, "S": 9,
              "a": 1, "E": 5, "D": 3}


def _parse_java_pattern(pattern: str) -> list:
    """Splits a Java date-time pattern into literal strings and ``(letter, count)`` fields."""
    parts, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("''", i):
            parts.append("'")
            i += 2
        elif char == "'":  # quoted text, in which '' is a quote
            i += 1
            while True:
                end = pattern.find("'", i)
                if end < 0:
                    raise ValueError(f"date_time_bucket_assigner: unterminated quote in "
                                     f"{pattern!r}")
                parts.append(pattern[i:end])
                i = end + 1
                if not pattern.startswith("''", end):
                    break
                parts.append("'")
                i = end + 2
        elif char.isalpha() or char in "[]{}#":
            count = len(pattern) - i - len(pattern[i:].lstrip(char))
            if char not in _MAX_COUNT or count > _MAX_COUNT[char]:
                raise ValueError(f"date_time_bucket_assigner: unsupported pattern "
                                 f"{char * count!r} in {pattern!r}")
            parts.append((char, count))
            i += count
        else:
            parts.append(char)
            i += 1
    return parts


def _format_field(field: tuple, moment: datetime) -> str:
    letter, count = field
    if letter in "yu":
        return f"{moment.year % 100:02d}" if count == 2 else str(moment.year).zfill(count)
    if letter == "M" and count >= 3:
        return moment.strftime("%b" if count == 3 else "%B")[:1 if count == 5 else None]
    if letter == "E":
        return moment.strftime("%A" if count == 4 else "%a")[:1 if count == 5 else None]
    if letter == "a":
        return "AM" if moment.hour < 12 else "PM"
    if letter == "S":
        return f"{moment.microsecond:06d}000"[:count]
    value = {"M": moment.month, "d": moment.day, "H": moment.hour, "h": (moment.hour - 1) % 12 + 1,
             "m": moment.minute, "s": moment.second,
             "D": moment.timetuple().tm_yday}[letter]
    return str(value).zfill(count)
