"""The file systems checkpoints and savepoints live on: a local path, or a URL.

A plain path (or a ``file://`` URI, which callers strip) is a local or mounted
POSIX directory: files are written under a temporary name, made durable and
renamed into place, and checkpoints hard-link the files they share. Directories
are made 0700 and files 0600 whatever the umask, or 0770 and 0660 with the job's
``state.checkpoints.group-access`` (``core.private_paths``): they hold the job's
keys and values. Object stores have no modes.

A URL with a scheme (``s3://``, ``gs://``, ``abfs://``, ``hdfs://``, ``memory://``)
goes through fsspec (the ``s3`` extra installs fsspec and s3fs; other schemes
need their fsspec package: gcsfs, adlfs, pyarrow). On such a store nothing is
renamed and nothing is linked: every file is written once, in one upload that
readers see whole or not at all, and what makes a set of files count (a
checkpoint's ``_metadata``, a batch's commit record) is written last. A
checkpoint copies the files it needs (a server-side copy where the store has
one, as S3 does) instead of linking them.

Credentials and endpoints come from the job's configuration, in Flink's keys
(``s3.endpoint``, ``s3.access-key``, ``s3.secret-key``, ``s3.path.style.access``;
see ``options_from_configuration``); ``configure`` installs them, and the modes of
local files, in a process -- the driver, and each task from its job's settings --
before any file is touched.
Without them a store uses its library's defaults (environment, instance roles).
"""
from __future__ import annotations

import errno
import os
import shutil
import stat
import uuid
from contextlib import contextmanager
from typing import Any, BinaryIO, Dict, Iterator, List
from urllib.parse import urlparse

from core.private_paths import make_directories, open_private, set_group_access

__all__ = ["is_url", "configure", "options_from_configuration", "listdir", "exists",
           "isdir", "makedirs", "remove", "rmtree", "open_read", "writing", "copy",
           "size", "is_number", "StorageError", "NotAFileError"]

_TEMPORARY_PREFIX = ".tmp-"

_options: Dict[str, Dict[str, Any]] = {}  # scheme -> fsspec storage options
_CONDITIONAL_CREATE = ("s3", "s3a")  # s3fs's mode "xb": a PUT with If-None-Match: *


class StorageError(ValueError):
    """A checkpoint or savepoint URL that cannot be used (unknown scheme, missing
    library)."""


def is_url(path: str) -> bool:
    """Whether ``path`` names a file system by a scheme (``s3://bucket/dir``), as opposed
    to a local path."""
    scheme = urlparse(path).scheme
    return len(scheme) > 1 and path.startswith(scheme + "://")


def options_from_configuration(conf: Dict[str, str]) -> Dict[str, Dict[str, Any]]:
    """fsspec storage options per scheme from a job configuration's Flink keys:
    ``s3.endpoint``, ``s3.access-key``, ``s3.secret-key``, ``s3.path.style.access``
    (``s3a://`` URLs use the same)."""
    s3: Dict[str, Any] = {}
    if conf.get("s3.access-key"):
        s3["key"] = conf["s3.access-key"]
    if conf.get("s3.secret-key"):
        s3["secret"] = conf["s3.secret-key"]
    if conf.get("s3.endpoint"):
        s3["client_kwargs"] = {"endpoint_url": conf["s3.endpoint"]}
    if str(conf.get("s3.path.style.access", "")).strip().lower() == "true":
        s3["config_kwargs"] = {"s3": {"addressing_style": "path"}}
    return {"s3": s3, "s3a": s3} if s3 else {}


def configure(options: Dict[str, Dict[str, Any]], group_access: bool = False) -> None:
    """Installs storage options per scheme for this process (see
    ``options_from_configuration``), and whether the local directories and files it
    creates are open to their group (``state.checkpoints.group-access``)."""
    _options.update(options)
    set_group_access(group_access)


def _filesystem_class(url: str):
    scheme = urlparse(url).scheme
    try:
        import fsspec
    except ImportError:
        raise StorageError(f"{url}: checkpoints on '{scheme}://' need fsspec and its "
                           f"library for the scheme (pip install 'spark-datastream[s3]' "
                           "for S3)") from None
    try:
        return fsspec.get_filesystem_class("s3" if scheme == "s3a" else scheme)
    except (ImportError, ValueError) as e:
        raise StorageError(f"{url}: no file system for '{scheme}://': {e}") from e


def _filesystem(url: str):
    fs_class = _filesystem_class(url)
    return fs_class(**_options.get(urlparse(url).scheme, {}))


def check_url(url: str) -> None:
    """Fails (StorageError) unless fsspec and the library of ``url``'s scheme are
    installed here (nothing is contacted)."""
    _filesystem_class(url)


def listdir(path: str) -> List[str]:
    """The names in a directory; FileNotFoundError if it does not exist (on an object
    store: nothing is stored under it)."""
    if not is_url(path):
        return os.listdir(path)
    entries = _filesystem(path).ls(path, detail=False, refresh=True)
    if not entries:
        raise FileNotFoundError(errno.ENOENT, "no such directory", path)
    return [e.rstrip("/").rsplit("/", 1)[-1] for e in entries]


def exists(path: str) -> bool:
    return _filesystem(path).exists(path) if is_url(path) else os.path.exists(path)


def isdir(path: str) -> bool:
    return _filesystem(path).isdir(path) if is_url(path) else os.path.isdir(path)


def makedirs(path: str) -> None:
    """Creates a local directory and its missing parents, private to this user (or its
    group, see ``configure``); object stores have none to create."""
    if not is_url(path):
        make_directories(path)


def remove(path: str) -> None:
    """Deletes a file; FileNotFoundError if there is none."""
    if not is_url(path):
        os.remove(path)
        return
    fs = _filesystem(path)
    if not fs.exists(path):
        raise FileNotFoundError(errno.ENOENT, "no such file", path)
    fs.rm_file(path)


def rmtree(path: str) -> None:
    """Deletes a directory and everything in it, if it exists."""
    if not is_url(path):
        shutil.rmtree(path, ignore_errors=True)
        return
    fs = _filesystem(path)
    try:
        fs.rm(path, recursive=True)
    except FileNotFoundError:
        pass


def size(path: str) -> int:
    return _filesystem(path).size(path) if is_url(path) else os.path.getsize(path)


class NotAFileError(OSError):
    """A stored file's name holds something else (a FIFO, a device, a directory)."""


def open_read(path: str) -> BinaryIO:
    """A file opened for reading (seekable); a local one must be a regular file
    (NotAFileError, instead of waiting forever on a FIFO put in its place)."""
    if is_url(path):
        return _filesystem(path).open(path, "rb")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise NotAFileError(errno.EINVAL, f"not a regular file ({stat.filemode(mode)})", path)
    return os.fdopen(fd, "rb")


def temporary_path(path: str) -> str:
    """A fresh hidden name beside the local ``path`` for a file or directory being built
    or removed: readers ignore it, ``is_temporary_name`` recognizes it."""
    directory, name = os.path.split(path)
    return os.path.join(directory, f"{_TEMPORARY_PREFIX}{uuid.uuid4().hex}-{name}")


def is_number(name: str) -> bool:
    """Whether a stored file's name part is a number: ASCII digits only (``str.isdigit``
    also takes ``²``, which ``int`` refuses, and other scripts' digits)."""
    return name.isascii() and name.isdigit()


def is_temporary_name(file_name: str) -> bool:
    """Whether ``file_name`` is an unfinished local write (see ``temporary_path``)."""
    return file_name.startswith(_TEMPORARY_PREFIX)


@contextmanager
def replacing(path: str) -> Iterator[str]:
    """A temporary local path to build the file ``path`` at, renamed to ``path`` at the
    end of the block (removed instead if the block raises): readers see the old file or
    the complete new one."""
    temporary = temporary_path(path)
    try:
        yield temporary
        os.replace(temporary, path)
    except BaseException:
        try:
            os.remove(temporary)
        except FileNotFoundError:
            pass
        raise


@contextmanager
def writing(path: str, exclusive: bool = False) -> Iterator[BinaryIO]:
    """A new file to write; at the end of the block it appears at ``path`` whole (a
    local file: made durable and renamed into place; on an object store: one upload,
    completed at the end of the block and abandoned if it raises). ``exclusive``: fail
    with FileExistsError if ``path`` exists (a conditional create where the store
    offers one, else a check just before the upload)."""
    if not is_url(path):
        if exclusive and os.path.exists(path):
            raise FileExistsError(errno.EEXIST, "file exists", path)
        with replacing(path) as temporary, open_private(temporary, "wb") as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        return
    fs = _filesystem(path)
    mode = "wb"
    if exclusive:
        if fs.exists(path):
            raise FileExistsError(errno.EEXIST, "file exists", path)
        mode = "xb" if urlparse(path).scheme in _CONDITIONAL_CREATE else "wb"
    f = fs.open(path, mode)
    try:
        yield f
    except BaseException:
        f.discard()  # the upload is abandoned: nothing appears at path
        f.closed = True  # (else closing it later would complete the upload)
        raise
    f.close()


def copy(source: str, target: str) -> None:
    """Puts a copy of the immutable file ``source`` at ``target`` (a new name): locally
    a hard link (a durable copy across file systems); on the same object store a
    server-side copy; else the bytes, streamed (a local copy gets the mode of new files;
    a link keeps its source's)."""
    if not is_url(source) and not is_url(target):
        try:
            os.link(source, target)
            return
        except OSError as e:
            if e.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK):
                raise
        with open(source, "rb") as src, open_private(target, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
            dst.flush()
            os.fsync(dst.fileno())
        return
    if is_url(source) and is_url(target) and urlparse(source).scheme == urlparse(target).scheme:
        _filesystem(source).copy(source, target)
        return
    with open_read(source) as src, writing(target) as dst:
        shutil.copyfileobj(src, dst, 1 << 20)
