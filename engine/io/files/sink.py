"""Writing files: the engine side of FileSink and of the legacy ``write_as_text`` and
``write_as_csv``.

**Writing.** ``FileSink`` writes each subtask's records of a batch into hidden
in-progress part files (``<bucket>/.<prefix>-<uuid>-<n><suffix>.inprogress.<batch>``)
and its ``FileCommitter`` renames them to their finished names once the batch is
committed. Names are a function of (run, sink, subtask, batch, part index), so a retried
task overwrites its own files; ``recover`` finishes the files of committed batches and
deletes those of later ones.

**Appending.** ``TextFileSink`` (``write_as_text``, ``write_as_csv``) stages each
subtask's encoded lines of a batch in the job's directory and appends them, once the
batch is committed, to one file per subtask, named as Flink's ``FileOutputFormat``
names them: the path itself at sink parallelism 1, ``<path>/<subtask + 1>`` above.
"""
import os
import re
import shutil
import uuid
from typing import Any, Callable, Dict, List, Optional

from engine.io.sinks import (Committer, Sink, SinkWriter, StagedCommitter, StagingWriter,
                             WriterContext)


# A part file being written is hidden and names its batch, so the committer can tell,
# after a crash, whether that batch committed: ".<finished name>.inprogress.<batch id>".
_IN_PROGRESS = re.compile(r"^\.(?P<final>.+)\.inprogress\.(?P<batch>\d+)$")
_PART_FILE_IDS = uuid.UUID("6f1d1c1e-9a53-4c8e-9b8e-3f0c2d7a5b10")  # namespace of uuid5


def in_progress_file(finished_path: str, batch_id: int) -> str:
    """The path a part file has while its batch is not yet committed."""
    directory, name = os.path.split(finished_path)
    return os.path.join(directory, f".{name}.inprogress.{batch_id}")


def parse_in_progress_file(path: str):
    """``(finished path, batch id)`` of an in-progress part file, or None for other files."""
    directory, name = os.path.split(path)
    match = _IN_PROGRESS.match(name)
    if match is None:
        return None
    return os.path.join(directory, match["final"]), int(match["batch"])


class PartFile:
    """One open part file of a FileSink format."""

    def write(self, values: list) -> None:
        raise NotImplementedError

    def size(self) -> int:
        """The bytes written so far."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class PartFileFormat:
    """How a FileSink writes records into a part file."""

    def open(self, path: str) -> PartFile:
        raise NotImplementedError


class EncodedPartFile(PartFile):
    """A part file of encoded records, opened with its header written."""

    def __init__(self, path: str, encode: Callable[[Any], bytes], header: bytes):
        self.file = open(path, "wb")
        self.encode = encode
        self.file.write(header)
        self.written = len(header)

    def write(self, values: list) -> None:
        data = b"".join(map(self.encode, values))
        self.file.write(data)
        self.written += len(data)

    def size(self) -> int:
        return self.written

    def close(self) -> None:
        self.file.close()


class EncodedFormat(PartFileFormat):
    """Part files of encoded records, one after another (the row format, CSV): ``encode``
    turns a record into its bytes; ``header`` starts every part file."""

    def __init__(self, encode: Callable[[Any], bytes], header: bytes = b""):
        self.encode = encode
        self.header = header

    def open(self, path: str) -> PartFile:
        return EncodedPartFile(path, self.encode, self.header)


class ParquetPartFile(PartFile):
    """A Parquet part file, written a record batch per ``write``."""

    def __init__(self, path: str, schema, to_columns: Callable[[list], list]):
        import pyarrow.parquet as pq
        self.file = open(path, "wb")
        self.writer = pq.ParquetWriter(self.file, schema)
        self.schema = schema
        self.to_columns = to_columns

    def write(self, values: list) -> None:
        import pyarrow as pa
        columns = self.to_columns(values)
        self.writer.write_batch(pa.record_batch(
            [pa.array(column, type=field.type) for column, field in zip(columns, self.schema)],
            schema=self.schema))

    def size(self) -> int:
        return self.file.tell()

    def close(self) -> None:
        self.writer.close()
        self.file.close()


class ParquetFormat(PartFileFormat):
    """Parquet part files of the Arrow ``schema``; ``to_columns`` turns a list of records
    into one list of values per column."""

    def __init__(self, schema, to_columns: Callable[[list], list]):
        self.schema = schema
        self.to_columns = to_columns

    def open(self, path: str) -> PartFile:
        return ParquetPartFile(path, self.schema, self.to_columns)


class MappedFormat(PartFileFormat):
    """Part files of the ``inner`` format, of each record mapped by ``mapper`` (e.g. a
    table's row without its partition columns)."""

    def __init__(self, inner: PartFileFormat, mapper: Callable[[Any], Any]):
        self.inner = inner
        self.mapper = mapper

    def open(self, path: str) -> PartFile:
        return _MappedPartFile(self.inner.open(path), self.mapper)


class _MappedPartFile(PartFile):
    def __init__(self, inner: PartFile, mapper: Callable[[Any], Any]):
        self.inner = inner
        self.mapper = mapper

    def write(self, values: list) -> None:
        self.inner.write([self.mapper(v) for v in values])

    def size(self) -> int:
        return self.inner.size()

    def close(self) -> None:
        self.inner.close()


class FileSinkWriter(SinkWriter):
    """Writes a subtask's records of one batch into in-progress part files of their
    buckets (``bucket_id(record, processing time)``); ``part_size`` None rolls only at the
    end of the batch, otherwise a file rolls once it has grown past ``part_size`` bytes.
    The committable is the list of in-progress paths. File names:
    ``<prefix>-<uuid>-<part index><suffix>``, one uuid per run, sink, subtask and batch
    (Flink's uuid per writer)."""

    def __init__(self, sink: "FileSink", context: WriterContext):
        self.sink = sink
        self.context = context
        self.paths: List[str] = []
        self.files: Dict[str, PartFile] = {}  # the open part file of each bucket

    def write(self, values: list) -> None:
        sink, processing_time = self.sink, self.context.processing_time
        if sink.buckets_by_record:
            by_bucket: Dict[str, list] = {}
            for value in values:
                by_bucket.setdefault(sink.bucket_id(value, processing_time), []).append(value)
        else:  # (one bucket for the batch: no call per record)
            by_bucket = {sink.bucket_id(None, processing_time): values}
        part_size = sink.part_size
        for bucket, bucket_values in by_bucket.items():
            if part_size is None:
                self._file(bucket, False).write(bucket_values)
                continue
            for value in bucket_values:
                self._file(bucket, True).write([value])

    def _file(self, bucket: str, by_size: bool) -> PartFile:
        """The open part file of ``bucket``, a new one if there is none or ``by_size`` it
        has grown past the part size."""
        file = self.files.get(bucket)
        if file is not None and not (by_size and file.size() > self.sink.part_size):
            return file
        sink, context = self.sink, self.context
        if file is not None:
            file.close()
        bucket_dir = os.path.join(sink.base_path, bucket)
        os.makedirs(bucket_dir, exist_ok=True)
        writer_id = uuid.uuid5(_PART_FILE_IDS, f"{context.run_id}/{sink.sink_token}/"
                                               f"{context.subtask}/{context.batch_id}")
        name = f"{sink.part_prefix}-{writer_id}-{len(self.paths)}{sink.part_suffix}"
        path = in_progress_file(os.path.join(bucket_dir, name), context.batch_id)
        self.files[bucket] = file = sink.part_format.open(path)
        self.paths.append(path)
        return file

    def prepare_commit(self) -> Optional[List[str]]:
        for file in self.files.values():
            file.close()
        self.files = {}
        return self.paths or None


class FileCommitter(Committer):
    """Renames a committed batch's in-progress part files to their finished names.
    Renaming is idempotent: a part file already finished is left alone."""

    def __init__(self, base_path: str, part_prefix: str, part_suffix: str):
        self.base_path = base_path
        self.part_prefix = part_prefix
        self.part_suffix = part_suffix

    def commit(self, batch_id: int, subtask: int, committable: List[str]) -> None:
        for path in committable:
            if not _finish(path, parse_in_progress_file(path)[0]):
                raise FileNotFoundError(
                    f"FileSink: the part file {path} written by subtask {subtask} is not "
                    "visible to the driver; the sink's base path must be on a file system "
                    "that the driver and every worker share")

    def recover(self, committed_batch: int) -> None:
        """Finishes this sink's in-progress part files of batches up to
        ``committed_batch`` and deletes those of later batches (they run again)."""
        if not os.path.isdir(self.base_path):
            return
        for directory, _, names in os.walk(self.base_path):
            for name in names:
                path = os.path.join(directory, name)
                parsed = parse_in_progress_file(path)
                if parsed is None or not self._is_own(os.path.basename(parsed[0])):
                    continue
                finished, batch_id = parsed
                if batch_id <= committed_batch:
                    _finish(path, finished)
                else:
                    os.remove(path)

    def _is_own(self, finished_name: str) -> bool:
        """Whether a part file name has this sink's prefix and suffix (others may write
        to the same base path)."""
        return (finished_name.startswith(self.part_prefix + "-")
                and finished_name.endswith(self.part_suffix))


def _finish(in_progress: str, finished: str) -> bool:
    """Renames an in-progress part file to its finished name; False if neither exists."""
    if os.path.exists(finished):  # finished before: keep it, drop a leftover copy
        if os.path.exists(in_progress):
            os.remove(in_progress)
        return True
    if os.path.exists(in_progress):
        os.rename(in_progress, finished)
        return True
    return False


class FileSink(Sink):
    """FileSink: part files in buckets under ``base_path``; ``bucket_id`` maps a record and
    the batch's processing time (ms) to its bucket (a sub-directory, "" for the base
    path), called once per batch unless ``buckets_by_record`` (the record is then None);
    the ``sink_token`` keeps part file names of several sinks sharing a base path apart."""

    name = "FileSink"

    def __init__(self, base_path: str, part_format: PartFileFormat, part_prefix: str,
                 part_suffix: str, part_size: Optional[int], bucket_id: Callable[[Any, int], str],
                 sink_token: str, buckets_by_record: bool = False):
        self.base_path = base_path
        self.part_format = part_format
        self.part_prefix = part_prefix
        self.part_suffix = part_suffix
        self.part_size = part_size
        self.bucket_id = bucket_id
        self.sink_token = sink_token
        self.buckets_by_record = buckets_by_record

    def create_writer(self, context: WriterContext) -> FileSinkWriter:
        return FileSinkWriter(self, context)

    def create_committer(self) -> FileCommitter:
        return FileCommitter(self.base_path, self.part_prefix, self.part_suffix)


ALREADY_EXISTS = ("{owner}: {path!r} already exists. Existing files and directories are not "
                  "overwritten in NO_OVERWRITE mode. Use OVERWRITE mode to overwrite existing "
                  "files and directories.")


class TextFileSink(Sink):
    """Appends each committed batch's lines (``encode(record)`` gives a line's bytes) to
    one file per subtask; at a fresh start, an existing ``path`` is deleted
    (``overwrite``) or fails the job. A crash during a commit may append a batch's lines
    twice when the job resumes: at least once, as Flink's ``write*`` methods."""

    stages_in_job_directory = True

    def __init__(self, owner: str, path: str, encode: Callable[[Any], bytes], overwrite: bool):
        self.owner = owner
        self.path = path
        self.encode = encode
        self.overwrite = overwrite

    def create_writer(self, context: WriterContext) -> StagingWriter:
        return StagingWriter(context, self.encode)

    def create_committer(self) -> "TextFileCommitter":
        return TextFileCommitter(self.owner, self.path, self.overwrite)


class TextFileCommitter(StagedCommitter):
    """Appends a committed batch's staged lines to its subtask's file."""

    def __init__(self, owner: str, path: str, overwrite: bool):
        self.owner = owner
        self.path = path
        self.overwrite = overwrite

    def recover(self, committed_batch: int) -> None:
        if committed_batch < 0 and os.path.lexists(self.path):  # a fresh start
            if not self.overwrite:
                raise FileExistsError(ALREADY_EXISTS.format(owner=self.owner, path=self.path))
            if os.path.isdir(self.path) and not os.path.islink(self.path):
                shutil.rmtree(self.path)
            else:
                os.remove(self.path)
        super().recover(committed_batch)

    def deliver(self, batch_id: int, subtask: int, items: list) -> None:
        path = self.path
        if self.context.parallelism > 1:
            path = os.path.join(path, str(subtask + 1))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "ab") as f:
            f.write(b"".join(items))
