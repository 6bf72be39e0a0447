"""Atomic, checksummed files: one object of data, or a framed file of many parts.

A file appears whole or not at all (``checkpoint.storage.writing``: locally written
under a hidden temporary name and renamed into place; on an object store one
upload), so readers see either the old file or the complete new one, and a
retried writer simply replaces it.

Nothing read from a checkpoint file is unpickled: objects here (a commit record, a
file's header) are data, written with ``core.codec.serialize_data``
and read with ``deserialize_data``, which raises instead of unpickling. (A frame's
bytes are decoded by its reader: see ``checkpoint.state_store``.)

``write_checked``/``read_checked`` (small files; all integers little-endian)::

    magic "SDSCHK\0\n", format version (u32), crc32 of the payload (u32),
    payload length (u64), payload (msgpack data)

``write_framed``/``FramedFile`` (files larger than memory, written and read one
frame at a time; all integers little-endian)::

    header   magic "SDSFRM1\n", format version (u32), length (u64), header object (data)
    frames   per frame: id (u32), length (u64), crc32 of id+length+data (u32), data
    index    per frame: id (u32), offset of its frame (u64)
    trailer  index offset (u64), magic "SDSFRMEN", crc32 of header+index (u32)

A reader opens the header and index (checked by the trailer's crc), seeks to the
frames it wants and checks each frame's crc as it reads it. A format version this
code does not know raises UnknownFormatError.
"""
from __future__ import annotations

import struct
from typing import Any, Dict, Iterable, List, Tuple
from zlib import crc32

from checkpoint import storage
from core.codec import deserialize_data, serialize_data

__all__ = ["CorruptFileError", "UnknownFormatError", "write_checked", "read_checked",
           "write_framed", "FramedFile"]

_MAGIC = b"SDSCHK\0\n"
_VERSION = 2  # 1: a pickle payload, with no version field
_HEADER = struct.Struct("<8sIIQ")  # magic, format version, crc32 of the payload, its length

_FRAMED_MAGIC = b"SDSFRM1\n"
_FRAMED_END = b"SDSFRMEN"
_FRAMED_VERSION = 2  # 1: a pickled header object
_FRAMED_HEADER = struct.Struct("<8sIQ")  # magic, format version, header object length
_FRAME_ID = struct.Struct("<IQ")  # frame id, data length (crc32 covers these and the data)
_FRAME = struct.Struct("<IQI")  # frame id, data length, crc32
_INDEX_ENTRY = struct.Struct("<IQ")  # frame id, offset of the frame
_TRAILER = struct.Struct("<Q8sI")  # index offset, end magic, crc32 of header and index
_CHUNK = 1 << 20  # bytes read at a time when checking a frame without keeping it


class CorruptFileError(Exception):
    """A checkpoint file is truncated, altered or not a checkpoint file."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"corrupt checkpoint file {path}: {reason}")
        self.path = path
        self.reason = reason


class UnknownFormatError(CorruptFileError):
    """A checkpoint file of a format version this version of spark-datastream cannot read
    (written by another version)."""

    def __init__(self, path: str, kind: str, version: int, known: int):
        super().__init__(path, f"{kind} format version {version}; this version of "
                               f"spark-datastream reads only version {known}")


def _encoded(path: str, obj: Any, what: str) -> bytes:
    try:
        return serialize_data(obj)
    except (TypeError, ValueError) as e:
        raise TypeError(f"cannot write {what} of checkpoint file {path}: {e}") from e


def _decoded(path: str, payload, what: str) -> Any:
    try:
        return deserialize_data(payload)
    except Exception as e:  # a valid checksum over bytes that are not data
        raise CorruptFileError(path, f"cannot read {what}: {e}") from e


def write_checked(path: str, obj: Any, exclusive: bool = False) -> None:
    """Atomically writes ``obj`` to ``path``, replacing any existing file (``exclusive``:
    FileExistsError instead, see ``storage.writing``)."""
    payload = _encoded(path, obj, "the object")
    with storage.writing(path, exclusive) as f:
        f.write(_HEADER.pack(_MAGIC, _VERSION, crc32(payload), len(payload)))
        f.write(payload)


def _open_stored(path: str):
    """``storage.open_read(path)``; CorruptFileError if something else than a file is
    there."""
    try:
        return storage.open_read(path)
    except storage.NotAFileError as e:
        raise CorruptFileError(path, e.strerror) from None


def read_checked(path: str) -> Any:
    """Reads an object written by ``write_checked``; raises CorruptFileError if damaged
    or not data (nothing is unpickled)."""
    with _open_stored(path) as f:
        data = f.read()
    if len(data) < _HEADER.size:
        raise CorruptFileError(path, f"only {len(data)} bytes, shorter than the header")
    magic, version, checksum, length = _HEADER.unpack_from(data)
    if magic != _MAGIC:
        raise CorruptFileError(path, "not a checkpoint file (bad magic bytes)")
    if version != _VERSION:
        raise UnknownFormatError(path, "checkpoint file", version, _VERSION)
    payload = memoryview(data)[_HEADER.size:]
    if len(payload) != length:
        raise CorruptFileError(path, f"payload is {len(payload)} bytes, header says {length}")
    if crc32(payload) != checksum:
        raise CorruptFileError(path, "checksum mismatch")
    return _decoded(path, payload, "its object")


def write_framed(path: str, header: Any, frames: Iterable[Tuple[int, bytes]]) -> None:
    """Atomically writes a framed file to ``path`` (replacing any existing file): the
    ``header`` object (data), then each ``(id, data)`` of ``frames`` as it comes, so
    that memory holds one frame at a time. Ids are distinct integers in [0, 2**32)."""
    payload = _encoded(path, header, "the header")
    head = _FRAMED_HEADER.pack(_FRAMED_MAGIC, _FRAMED_VERSION, len(payload)) + payload
    offsets: Dict[int, int] = {}
    with storage.writing(path) as f:
        f.write(head)
        offset = len(head)
        for frame_id, data in frames:
            if frame_id in offsets:
                raise ValueError(f"{path}: frame {frame_id} is written twice")
            prefix = _FRAME_ID.pack(frame_id, len(data))
            f.write(_FRAME.pack(frame_id, len(data), crc32(data, crc32(prefix))))
            f.write(data)
            offsets[frame_id] = offset
            offset += _FRAME.size + len(data)
        index = b"".join(_INDEX_ENTRY.pack(i, o) for i, o in offsets.items())
        f.write(index)
        f.write(_TRAILER.pack(offset, _FRAMED_END, crc32(index, crc32(head))))


class FramedFile:
    """A file written by ``write_framed``, open for reading: ``header`` is its header
    object, ``frame_ids()`` its frames; ``read(id)`` returns one frame's data. Opening
    checks the header and index, reading a frame checks its crc; damage raises
    CorruptFileError. Use as a context manager (or call ``close``)."""

    def __init__(self, path: str):
        self.path = path
        self._file = _open_stored(path)
        try:
            self.header = self._read_head()
        except BaseException:
            self._file.close()
            raise

    def _read_head(self) -> Any:
        f = self._file
        size = f.seek(0, 2)
        f.seek(0)
        if size < _FRAMED_HEADER.size + _TRAILER.size:
            raise CorruptFileError(self.path, f"only {size} bytes, shorter than the header "
                                              "and trailer of a framed file")
        magic, version, length = _FRAMED_HEADER.unpack(f.read(_FRAMED_HEADER.size))
        if magic != _FRAMED_MAGIC:
            raise CorruptFileError(self.path, "not a framed checkpoint file (bad magic bytes)")
        if version != _FRAMED_VERSION:
            raise UnknownFormatError(self.path, "framed file", version, _FRAMED_VERSION)
        f.seek(size - _TRAILER.size)
        index_offset, end, checksum = _TRAILER.unpack(f.read(_TRAILER.size))
        self._frames_end = index_offset
        self._frames_start = _FRAMED_HEADER.size + length
        index_length = size - _TRAILER.size - index_offset
        if (end != _FRAMED_END or not self._frames_start <= index_offset <= size - _TRAILER.size
                or index_length % _INDEX_ENTRY.size):
            raise CorruptFileError(self.path, "truncated or altered (bad trailer)")
        f.seek(0)
        head = f.read(self._frames_start)
        f.seek(index_offset)
        index = f.read(index_length)
        if crc32(index, crc32(head)) != checksum:
            raise CorruptFileError(self.path, "checksum mismatch in the header or index")
        self._offsets = {i: o for i, o in _INDEX_ENTRY.iter_unpack(index)}
        return _decoded(self.path, memoryview(head)[_FRAMED_HEADER.size:], "the header")

    def frame_ids(self) -> List[int]:
        """The ids of the frames, in increasing order."""
        return sorted(self._offsets)

    def _frame_at(self, offset: int, frame_id: int) -> Tuple[int, int]:
        """Checks the frame at ``offset`` is ``frame_id`` and within the frames; returns its
        data length and crc, the file positioned at its data."""
        if not self._frames_start <= offset <= self._frames_end - _FRAME.size:
            raise CorruptFileError(self.path, f"frame {frame_id}: bad offset {offset}")
        self._file.seek(offset)
        found_id, length, checksum = _FRAME.unpack(self._file.read(_FRAME.size))
        if found_id != frame_id or offset + _FRAME.size + length > self._frames_end:
            raise CorruptFileError(self.path, f"frame {frame_id}: altered frame header")
        return length, checksum

    def read(self, frame_id: int) -> bytes:
        """The data of frame ``frame_id`` (KeyError if the file has none), crc checked."""
        length, checksum = self._frame_at(self._offsets[frame_id], frame_id)
        data = self._file.read(length)
        if crc32(data, crc32(_FRAME_ID.pack(frame_id, length))) != checksum:
            raise CorruptFileError(self.path, f"frame {frame_id}: checksum mismatch")
        return data

    def verify(self) -> None:
        """Checks every frame's crc, and that the frames fill the file between header and
        index, reading a bounded chunk at a time."""
        expected = self._frames_start
        for offset, frame_id in sorted((o, i) for i, o in self._offsets.items()):
            if offset != expected:
                raise CorruptFileError(self.path, f"frame {frame_id} at offset {offset}, "
                                                  f"expected {expected}")
            length, checksum = self._frame_at(offset, frame_id)
            running = crc32(_FRAME_ID.pack(frame_id, length))
            remaining = length
            while remaining:
                chunk = self._file.read(min(remaining, _CHUNK))
                if not chunk:
                    raise CorruptFileError(self.path, f"frame {frame_id}: truncated")
                running = crc32(chunk, running)
                remaining -= len(chunk)
            if running != checksum:
                raise CorruptFileError(self.path, f"frame {frame_id}: checksum mismatch")
            expected = offset + _FRAME.size + length
        if expected != self._frames_end:
            raise CorruptFileError(self.path, f"{self._frames_end - expected} bytes between "
                                              "the last frame and the index")

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> "FramedFile":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
