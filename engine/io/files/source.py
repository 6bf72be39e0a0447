"""Reading files: the engine side of FileSource.

``FileSource`` lists the files under its paths (directories recursively; names starting
with ``.`` or ``_`` are hidden and skipped) and cuts them into splits:

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
"""
import codecs
import csv
import gzip
import os
import re
import time
from collections import OrderedDict
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple

from engine.errors import RecordReadError
from engine.io.sources import Source, SplitRange


SPLIT_SIZE = 32 * 1024 * 1024
SAMPLE_SIZE = 64 * 1024
_BLOCK = 64 * 1024
_TERMINATOR = re.compile(rb"\r\n|\r|\n")
_TEXT_TERMINATOR = re.compile(r"\r\n|\r|\n")


# --- listing ------------------------------------------------------------------------

def is_hidden(name: str) -> bool:
    """Whether a file or directory name is hidden (starts with ``.`` or ``_``)."""
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
    """A line without its terminator."""
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
    """A cursor on ``path`` at ``position``: the one kept open there, else a new one."""
    cursor = _CURSORS.pop(path, None)
    if cursor is not None and cursor.offset == position:
        return cursor
    if cursor is not None:
        cursor.close()
    return LineCursor(path, position)


def keep_cursor(cursor: LineCursor) -> None:
    """Keeps a cursor open for the split's next batch (the least recent ones close)."""
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


class ParquetFileFormat(FileFormat):
    """Parquet files, one split each, read whole: ``to_record(values)`` makes a record
    of a row's values of ``columns`` (by name; a column the file lacks is null). The
    position is the number of rows read."""

    whole_file = True

    def __init__(self, columns: Sequence[str], to_record: Callable[[list], Any]):
        self.columns = list(columns)
        self.to_record = to_record

    def read_whole(self, split, path, position, max_records):
        import pyarrow.parquet as pq
        with open_file(path) as f:
            table = pq.read_table(f)
        rows = table.slice(position, max_records).to_pylist()
        after = position + len(rows)
        return ([self.to_record([row.get(c) for c in self.columns]) for row in rows],
                None if after >= table.num_rows else after)


class WithPathFormat(FileFormat):
    """The records of the ``inner`` format as (record, the path of its file) pairs: for
    what a path says of its records (a partitioned table's ``key=value`` directories)."""

    def __init__(self, inner: FileFormat):
        self.inner = inner
        self.whole_file = inner.whole_file

    def splittable(self, path: str) -> bool:
        return self.inner.splittable(path)

    def read_range(self, split, path, position, end):
        records, after = self.inner.read_range(split, path, position, end)
        return [(r, path) for r in records], after

    def read_lines(self, split, cursor, max_records):
        return [(r, cursor.path) for r in self.inner.read_lines(split, cursor, max_records)]

    def read_whole(self, split, path, position, max_records):
        records, after = self.inner.read_whole(split, path, position, max_records)
        return [(r, path) for r in records], after


class FileSplit(NamedTuple):
    """A split: the byte range ``[start, end)`` of a file."""
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
