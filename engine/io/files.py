"""Files in and out: the engine side of FileSource and FileSink.

**Reading.** ``FileSource`` lists the files under its paths (directories recursively;
names starting with ``.`` or ``_`` are hidden and skipped) and cuts them into splits:

- A plain text file read as lines in a charset that writes ``\\r`` and ``\\n`` as those
  single bytes (UTF-8, Latin-1, ASCII, ...) is *splittable*: it is cut into byte ranges
  of ``split_size`` bytes (32 MiB by default: large enough that a split's fixed cost is
  small, small enough that a few large files keep every parallel reader busy). A line
  belongs to the split in which it starts; a split that starts inside a line skips that
  partial line. The split's position is the byte offset of its next line. For each batch
  the driver plans the byte range ``[position, position + budget)``: the lines starting
  in it are read. The budget is the batch's record budget times the file's average line
  length, estimated once from its first 64 KiB.
- Every other file is one split, read from its beginning: gzip files (``.gz``,
  decompressed), CSV files (a quoted value may hold a line break) and text in charsets
  such as UTF-16. ``read`` reads at most the batch's record budget and reports the
  position after the last record: the (uncompressed) byte offset of the next record,
  or, for UTF-16/32 text (decoded whole), the number of lines read. A worker keeps such
  a file open between batches, so a gzip file is decompressed once, not once per batch.

A split's position is None once it is read to the end. Lines end at ``\\n``, ``\\r`` or
``\\r\\n`` (Java's ``readLine``); a final line terminator does not start an empty line.

With ``discovery_interval_ms`` the source is unbounded: the paths are listed again at
most every interval and new files become new splits. A file already listed is never
read again, so files must be complete when they appear (write them elsewhere, then
move them in): a file that is still growing when it is listed is not supported.

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
import codecs
import csv
import gzip
import os
import re
import shutil
import time
import uuid
from collections import OrderedDict
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from engine.errors import RecordReadError
from engine.io.sinks import Committer, Sink, SinkWriter, StagedCommitter, StagingWriter, WriterContext
from engine.io.sources import Source, SplitRange


SPLIT_SIZE = 32 * 1024 * 1024
SAMPLE_SIZE = 64 * 1024
_BLOCK = 64 * 1024
_TERMINATOR = re.compile(rb"\r\n|\r|\n")
_TEXT_TERMINATOR = re.compile(r"\r\n|\r|\n")


# --- listing ------------------------------------------------------------------------

def is_hidden(name: str) -> bool:
    return name.startswith(".") or name.startswith("_")


def list_files(paths: Sequence[str]) -> List[str]:
    """The files under ``paths`` (a path may be a file or a directory, read recursively),
    without hidden ones, sorted."""
    found = set()
    for path in paths:
        if os.path.isfile(path):
            found.add(path)
            continue
        for directory, subdirectories, names in os.walk(path):
            subdirectories[:] = [d for d in subdirectories if not is_hidden(d)]
            found.update(os.path.join(directory, name) for name in names if not is_hidden(name))
    return sorted(found)


# --- lines --------------------------------------------------------------------------

def raw_lines(stream, block: int = _BLOCK) -> Iterator[bytes]:
    """The lines of a binary stream from its current position, each with its terminator
    (``\\r\\n``, ``\\r`` or ``\\n``; the last line may have none)."""
    buffer = b""
    while True:
        chunk = stream.read(block)
        if not chunk:
            if buffer:
                yield buffer
            return
        buffer += chunk
        start = 0
        for match in _TERMINATOR.finditer(buffer):
            if match.end() == len(buffer) and buffer.endswith(b"\r"):
                break  # a "\n" may follow in the next block
            yield buffer[start:match.end()]
            start = match.end()
        buffer = buffer[start:]


def strip_terminator(line: bytes) -> bytes:
    if line.endswith(b"\r\n"):
        return line[:-2]
    if line.endswith(b"\n") or line.endswith(b"\r"):
        return line[:-1]
    return line


def read_line_range(path: str, position: int, end: int) -> Tuple[List[bytes], int]:
    """The lines (without terminators) that start in ``[position, end)`` of a file, and
    the offset of the first line start at or after ``end`` (or the file's size). If
    ``position`` is inside a line, that partial line belongs to the range before."""
    lines: List[bytes] = []
    with open(path, "rb") as f:
        offset = position
        if position > 0:
            f.seek(position - 1)
            found = raw_lines(f)
            # The line holding byte position-1 ends where the next line starts.
            offset = position - 1 + len(next(found, b""))
        else:
            found = raw_lines(f)
        for line in found:
            if offset >= end:
                break
            lines.append(strip_terminator(line))
            offset += len(line)
    return lines, offset


# --- formats ------------------------------------------------------------------------

def open_file(path: str):
    """A file's bytes, decompressed if it is a gzip file."""
    return (gzip.open if path.endswith(".gz") else open)(path, "rb")


class LineCursor:
    """The lines of a whole-file split from a byte offset (uncompressed for gzip)."""

    def __init__(self, path: str, position: int):
        self.path = path
        self.stream = open_file(path)
        self.stream.seek(position)  # a gzip stream decompresses what it skips
        self.offset = position  # where the next line starts
        self._lines = raw_lines(self.stream)
        self._next: Optional[bytes] = None

    def peek(self) -> Optional[bytes]:
        """The next line (with its terminator), None at the end of the file."""
        if self._next is None:
            self._next = next(self._lines, None)
        return self._next

    def take(self) -> bytes:
        line = self.peek()
        self._next = None
        self.offset += len(line)
        return line

    def close(self) -> None:
        self.stream.close()


# A worker keeps the cursors of the whole-file splits it reads open between batches, so
# that the next batch of a split goes on where the last one stopped instead of reading
# (for gzip: decompressing) the file again from its start. Only a cursor at the exact
# position planned is used: correctness never depends on this cache.
_CURSORS: "OrderedDict[str, LineCursor]" = OrderedDict()
_MAX_CURSORS = 16


def open_cursor(path: str, position: int) -> LineCursor:
    cursor = _CURSORS.pop(path, None)
    if cursor is not None and cursor.offset == position:
        return cursor
    if cursor is not None:
        cursor.close()
    return LineCursor(path, position)


def keep_cursor(cursor: LineCursor) -> None:
    _CURSORS[cursor.path] = cursor
    while len(_CURSORS) > _MAX_CURSORS:
        _CURSORS.popitem(last=False)[1].close()


class FileFormat:
    """How a FileSource turns a file's bytes into records. A file is read in byte ranges
    (``splittable``), as lines from a byte offset (``read_lines``), or, for formats with
    ``whole_file``, decoded whole (``read_whole``)."""

    whole_file = False

    def splittable(self, path: str) -> bool:
        return False

    def read_range(self, split: str, path: str, position: int, end: int) -> Tuple[list, int]:
        """The records of the lines starting in ``[position, end)``; splittable files only."""
        raise NotImplementedError

    def read_lines(self, split: str, cursor: LineCursor, max_records: int) -> list:
        """At most ``max_records`` records from the cursor's offset (a record's first
        line); the cursor stops at the next record."""
        raise NotImplementedError

    def read_whole(self, split: str, path: str, position, max_records: int) -> Tuple[list, Any]:
        """At most ``max_records`` records from ``position`` and the position after them
        (None: the end of the file)."""
        raise NotImplementedError


def _byte_lines(codec: str) -> bool:
    """Whether text in ``codec`` can be cut into lines on its bytes."""
    return (not codecs.lookup(codec).name.startswith(("utf-16", "utf-32"))
            and "\r\n".encode(codec) == b"\r\n")


class TextLineFormat(FileFormat):
    """Each line of a text file is a string record; ``decode`` turns a line's bytes into
    text (undecodable bytes become U+FFFD, as Java's readers do)."""

    def __init__(self, codec: str, decode: Callable[[bytes], str]):
        self.decode = decode
        self.whole_file = not _byte_lines(codec)

    def splittable(self, path: str) -> bool:
        return not self.whole_file and not path.endswith(".gz")

    def read_range(self, split, path, position, end):
        lines, after = read_line_range(path, position, end)
        decode = self.decode
        return [decode(line) for line in lines], after

    def read_lines(self, split, cursor, max_records):
        decode = self.decode
        records = []
        while len(records) < max_records and cursor.peek() is not None:
            records.append(decode(strip_terminator(cursor.take())))
        return records

    def read_whole(self, split, path, position, max_records):
        # Text in UTF-16 or UTF-32 is decoded whole; the position counts the lines read.
        with open_file(path) as f:
            lines = _TEXT_TERMINATOR.split(self.decode(f.read()))
        if lines[-1] == "":
            lines.pop()  # the final terminator ends the last line
        records = lines[position:position + max_records]
        after = position + len(records)
        return records, None if after >= len(lines) else after


class CsvFormat(FileFormat):
    """CSV files, one split each: ``parse(fields)`` turns a record's field texts into the
    record (raising for bad input). The dialect is Python's ``csv`` with the schema's
    separator, quote and escape characters; ``skipped_rows`` rows (a header, a skipped
    first data row) are skipped at the start of the file; with ``allow_comments`` rows
    starting with ``#`` are skipped. Bytes that are not text in ``codec`` are bad input."""

    def __init__(self, parse: Callable[[List[str]], Any], codec: str, column_separator: str,
                 quote_char: Optional[str], escape_char: Optional[str], skipped_rows: int,
                 allow_comments: bool):
        self.parse = parse
        self.codec = codec
        self.dialect = dict(delimiter=column_separator, quotechar=quote_char,
                            quoting=csv.QUOTE_MINIMAL if quote_char else csv.QUOTE_NONE,
                            escapechar=escape_char, doublequote=True, strict=False)
        self.skipped_rows = skipped_rows
        self.allow_comments = allow_comments

    def read_lines(self, split, cursor, max_records):
        pending: List[bytes] = []  # the raw lines of the record being read
        offset = cursor.offset  # where that record starts

        def texts():
            while cursor.peek() is not None:
                pending.append(cursor.take())
                try:
                    yield pending[-1].decode(self.codec)
                except UnicodeDecodeError as e:
                    raise RecordReadError(split, offset, b"".join(pending), e) from None

        reader = csv.reader(texts(), **self.dialect)
        skip = self.skipped_rows if offset == 0 else 0
        records, parse = [], self.parse
        while len(records) < max_records:
            try:
                fields = next(reader, None)
            except csv.Error as e:
                raise RecordReadError(split, offset, b"".join(pending), e) from None
            if fields is None:
                break
            raw = b"".join(pending)
            pending.clear()
            start, offset = offset, cursor.offset
            if skip:
                skip -= 1
            elif fields and not (self.allow_comments and fields[0].startswith("#")):
                try:
                    records.append(parse(fields))
                except Exception as e:
                    raise RecordReadError(split, start, raw.decode(self.codec, "replace"),
                                          e) from None
        return records


# --- the source ---------------------------------------------------------------------

class FileSplit(NamedTuple):
    path: str
    start: int
    end: Optional[int]  # None: the whole file, read as a stream


class FileSource(Source):
    """FileSource: the records of the files under ``paths`` in ``file_format``; bounded,
    or with ``discovery_interval_ms`` watching the paths for new files. ``split_size``
    None reads every file as one split."""

    def __init__(self, paths: Sequence[str], file_format: FileFormat,
                 discovery_interval_ms: Optional[int] = None,
                 split_size: Optional[int] = SPLIT_SIZE):
        self.paths = list(paths)
        self.file_format = file_format
        self.discovery_interval_ms = discovery_interval_ms
        self.bounded = discovery_interval_ms is None
        self.splits_change = not self.bounded
        self.split_size = split_size
        self._splits: Dict[str, FileSplit] = {}
        self._order: List[str] = []
        self._listed: set = set()
        self._line_bytes: Dict[str, float] = {}
        self._listed_at: Optional[float] = None

    def splits(self, parallelism: int) -> List[str]:
        now = time.monotonic()
        due = self._listed_at is None or (
            self.discovery_interval_ms is not None
            and (now - self._listed_at) * 1000 >= self.discovery_interval_ms)
        if due:
            self._listed_at = now
            for path in list_files(self.paths):
                if path not in self._listed:
                    self._listed.add(path)
                    self._add_splits(path)
        return list(self._order)

    def _add_splits(self, path: str) -> None:
        size = os.path.getsize(path)
        if size == 0:
            return
        if self.split_size is None or not self.file_format.splittable(path):
            bounds = [(0, None)]
        else:
            bounds = [(start, min(start + self.split_size, size))
                      for start in range(0, size, self.split_size)]
            with open(path, "rb") as f:
                sample = f.read(SAMPLE_SIZE)
            self._line_bytes[path] = len(sample) / max(1, len(_TERMINATOR.findall(sample)))
        for start, end in bounds:
            split = f"{path}@{start}"
            self._splits[split] = FileSplit(path, start, end)
            self._order.append(split)

    def start_position(self, split: str) -> int:
        return self._splits[split].start

    def plan(self, split: str, position, max_records: int, now_ms: int) -> Optional[SplitRange]:
        path, _, end = self._splits[split]
        if end is None:
            return SplitRange(split, (split, path, None, position, max_records))
        budget = max(1, int(max_records * self._line_bytes[path]))
        return SplitRange(split, (split, path, end, position, min(end, position + budget)))

    def read(self, descriptor) -> Tuple[list, Any]:
        split, path, split_end, position, limit = descriptor
        file_format = self.file_format
        if split_end is not None:
            records, after = file_format.read_range(split, path, position, limit)
            return records, None if after >= split_end else after
        if file_format.whole_file:
            return file_format.read_whole(split, path, position, limit)
        cursor = open_cursor(path, position)
        try:
            records = file_format.read_lines(split, cursor, limit)
        except BaseException:
            cursor.close()
            raise
        if cursor.peek() is None:
            cursor.close()
            return records, None
        keep_cursor(cursor)
        return records, cursor.offset


# --- the sink -----------------------------------------------------------------------

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


class FileSinkWriter(SinkWriter):
    """Writes a subtask's records of one batch into in-progress part files of the batch's
    bucket; ``part_size`` None rolls only at the end of the batch, otherwise a file rolls
    once it has grown past ``part_size`` bytes. The committable is the list of in-progress
    paths. File names: ``<prefix>-<uuid>-<part index><suffix>``, one uuid per run, sink,
    subtask and batch (Flink's uuid per writer)."""

    def __init__(self, sink: "FileSink", context: WriterContext):
        self.sink = sink
        self.context = context
        self.paths: List[str] = []
        self.file: Optional[PartFile] = None
        self.bucket_dir: Optional[str] = None

    def write(self, values: list) -> None:
        part_size = self.sink.part_size
        if part_size is None:
            if self.file is None:
                self._roll()
            self.file.write(values)
            return
        for value in values:
            if self.file is None or self.file.size() > part_size:
                self._roll()
            self.file.write([value])

    def _roll(self) -> None:
        sink, context = self.sink, self.context
        if self.file is not None:
            self.file.close()
        else:  # the batch's first file
            self.bucket_dir = os.path.join(sink.base_path,
                                           sink.bucket_id(context.processing_time))
            os.makedirs(self.bucket_dir, exist_ok=True)
        writer_id = uuid.uuid5(_PART_FILE_IDS, f"{context.run_id}/{sink.sink_token}/"
                                               f"{context.subtask}/{context.batch_id}")
        name = f"{sink.part_prefix}-{writer_id}-{len(self.paths)}{sink.part_suffix}"
        path = in_progress_file(os.path.join(self.bucket_dir, name), context.batch_id)
        self.file = sink.part_format.open(path)
        self.paths.append(path)

    def prepare_commit(self) -> Optional[List[str]]:
        if self.file is not None:
            self.file.close()
            self.file = None
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
    """FileSink: part files in buckets under ``base_path``; ``bucket_id`` maps the batch's
    processing time (ms) to the bucket (a sub-directory, "" for the base path); the
    ``sink_token`` keeps part file names of several sinks sharing a base path apart."""

    name = "FileSink"

    def __init__(self, base_path: str, part_format: PartFileFormat, part_prefix: str,
                 part_suffix: str, part_size: Optional[int], bucket_id: Callable[[int], str],
                 sink_token: str):
        self.base_path = base_path
        self.part_format = part_format
        self.part_prefix = part_prefix
        self.part_suffix = part_suffix
        self.part_size = part_size
        self.bucket_id = bucket_id
        self.sink_token = sink_token

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
