"""Atomic, checksummed files holding one pickled object.

A file is written under a hidden temporary name in its directory and renamed
into place, so readers see either the old file or the complete new one, and a
retried writer simply replaces it. Layout: magic, crc32 of the payload, payload
length, payload (pickle protocol 5).
"""
from __future__ import annotations

import errno
import os
import pickle
import shutil
import struct
import uuid
from typing import Any
from zlib import crc32

__all__ = ["CorruptFileError", "write_checked", "read_checked", "is_temporary_name",
           "link_or_copy"]

_MAGIC = b"SDSCHK1\n"
_HEADER = struct.Struct("<8sIQ")
_TEMPORARY_PREFIX = ".tmp-"


class CorruptFileError(Exception):
    """A checkpoint file is truncated, altered or not a checkpoint file."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"corrupt checkpoint file {path}: {reason}")
        self.path = path
        self.reason = reason


def is_temporary_name(file_name: str) -> bool:
    """Whether ``file_name`` is an unfinished write of ``write_checked``."""
    return file_name.startswith(_TEMPORARY_PREFIX)


def write_checked(path: str, obj: Any) -> None:
    """Atomically writes ``obj`` to ``path``, replacing any existing file."""
    payload = pickle.dumps(obj, protocol=5)
    directory, name = os.path.split(path)
    temporary = os.path.join(directory, f"{_TEMPORARY_PREFIX}{uuid.uuid4().hex}-{name}")
    try:
        with open(temporary, "wb") as f:
            f.write(_HEADER.pack(_MAGIC, crc32(payload), len(payload)))
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        try:
            os.remove(temporary)
        except FileNotFoundError:
            pass
        raise


def read_checked(path: str) -> Any:
    """Reads an object written by ``write_checked``; raises CorruptFileError if damaged."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < _HEADER.size:
        raise CorruptFileError(path, f"only {len(data)} bytes, shorter than the header")
    magic, checksum, length = _HEADER.unpack_from(data)
    if magic != _MAGIC:
        raise CorruptFileError(path, "not a checkpoint file (bad magic bytes)")
    payload = memoryview(data)[_HEADER.size:]
    if len(payload) != length:
        raise CorruptFileError(path, f"payload is {len(payload)} bytes, header says {length}")
    if crc32(payload) != checksum:
        raise CorruptFileError(path, "checksum mismatch")
    try:
        return pickle.loads(payload)
    except Exception as e:  # a valid checksum over an unreadable pickle
        raise CorruptFileError(path, f"cannot unpickle: {e!r}") from e


def link_or_copy(source: str, target: str) -> None:
    """Makes ``target`` a hard link to the immutable file ``source`` (no bytes copied),
    or a durable copy where a link is impossible (another file system)."""
    try:
        os.link(source, target)
    except OSError as e:
        if e.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
            raise
        shutil.copyfile(source, target)
        with open(target, "rb") as f:
            os.fsync(f.fileno())
