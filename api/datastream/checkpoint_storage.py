"""Checkpoint storage, as in ``pyflink.datastream.checkpoint_storage``: where checkpoints
are written. Every storage here writes files to a directory (``state.checkpoints.dir``);
without one configured, a job checkpoints to a temporary directory removed when it ends."""
from typing import Optional
from urllib.parse import urlparse

from checkpoint import storage

__all__ = ['CheckpointStorage', 'JobManagerCheckpointStorage', 'FileSystemCheckpointStorage']


class CheckpointStorage:
    """Defines where state backends store their checkpoints for fault tolerance."""

    def get_checkpoint_path(self) -> Optional[str]:
        """The base directory of the checkpoints, or None to use the configured one."""
        raise NotImplementedError

    def get_savepoint_path(self) -> Optional[str]:
        """Savepoint directories come from ``set_default_savepoint_directory`` (None here)."""
        return None


class CustomCheckpointStorage(CheckpointStorage):
    """JVM-only: wraps a Java checkpoint storage, which cannot run here."""

    def __init__(self, j_custom_checkpoint_storage):
        raise TypeError("CustomCheckpointStorage wraps a Java checkpoint storage, which needs a "
                        "JVM: use FileSystemCheckpointStorage(path) instead.")


class JobManagerCheckpointStorage(CheckpointStorage):
    """Checkpoints in Flink go to the JobManager's memory; here (no JobManager) they go to
    ``checkpoint_path`` if given, else to the configured or a temporary directory.

    Example: ``JobManagerCheckpointStorage()``.
    """

    # The default maximal size that a snapshotted state may have (5 MiBytes).
    DEFAULT_MAX_STATE_SIZE = 5 * 1024 * 1024

    def __init__(self, checkpoint_path: Optional[str] = None,
                 max_state_size: Optional[int] = None):
        if max_state_size is None:
            max_state_size = self.DEFAULT_MAX_STATE_SIZE
        if max_state_size <= 0:
            raise ValueError("maxStateSize must be > 0")
        self._checkpoint_path = _check_path(checkpoint_path) if checkpoint_path is not None \
            else None
        self._max_state_size = max_state_size

    def get_checkpoint_path(self) -> Optional[str]:
        return self._checkpoint_path

    def get_max_state_size(self) -> int:
        """The maximum size of one state, as given (recorded, not enforced)."""
        return self._max_state_size

    def __repr__(self):
        return (f"JobManagerCheckpointStorage(checkpoint_path={self._checkpoint_path!r}, "
                f"max_state_size={self._max_state_size})")


class FileSystemCheckpointStorage(CheckpointStorage):
    """Checkpoints state as files under ``checkpoint_path`` (a local or mounted path, or a
    ``file://`` URI), one ``chk-<n>`` subdirectory per checkpoint.

    Example: ``FileSystemCheckpointStorage("file:///var/checkpoints")``.
    """

    # Maximum size of state that is stored with the metadata, rather than in files (1 MiByte).
    MAX_FILE_STATE_THRESHOLD = 1024 * 1024
    _DEFAULT_FILE_STATE_THRESHOLD = 20 * 1024   # Flink's state.storage.fs.memory-threshold
    _DEFAULT_WRITE_BUFFER_SIZE = 4096           # Flink's state.storage.fs.write-buffer-size

    def __init__(self, checkpoint_path: str = None, file_state_size_threshold: int = None,
                 write_buffer_size: int = -1):
        if checkpoint_path is None:
            raise ValueError("checkpoint_path must not be None")
        if file_state_size_threshold is None:
            file_state_size_threshold = -1
        if not -1 <= file_state_size_threshold <= self.MAX_FILE_STATE_THRESHOLD:
            raise ValueError(f"The threshold for file state size must be in "
                             f"[-1, {self.MAX_FILE_STATE_THRESHOLD}], where '-1' means to use "
                             f"the value from the deployment's configuration.")
        if write_buffer_size < -1:
            raise ValueError("The write buffer size must be not less than '-1', where '-1' "
                             "means to use the value from the deployment's configuration.")
        self._checkpoint_path = _check_path(checkpoint_path)
        self._threshold = file_state_size_threshold
        self._write_buffer_size = write_buffer_size

    def get_checkpoint_path(self) -> str:
        return self._checkpoint_path

    def get_min_file_size_threshold(self) -> int:
        """State below this size would be kept in the metadata (recorded, not used here)."""
        return self._threshold if self._threshold >= 0 else self._DEFAULT_FILE_STATE_THRESHOLD

    def get_write_buffer_size(self) -> int:
        """The write buffer size of checkpoint streams (recorded, not used here)."""
        return self._write_buffer_size if self._write_buffer_size >= 0 \
            else self._DEFAULT_WRITE_BUFFER_SIZE

    def __repr__(self):
        return f"FileSystemCheckpointStorage({self._checkpoint_path!r})"


def _check_path(path) -> str:
    local_path(path)
    return path


def local_path(uri) -> str:
    """The local file system path of a directory given as a path or ``file://`` URI; a
    URL of another file system (``s3://bucket/dir``, ``gs://``, ``abfs://``, ``hdfs://``)
    as it is (``checkpoint.storage`` opens it with fsspec)."""
    if not isinstance(uri, str) or not uri:
        raise ValueError(f"A checkpoint or savepoint directory must be a non-empty string, "
                         f"got {uri!r}")
    parsed = urlparse(uri)
    if parsed.scheme == "file" and parsed.netloc in ("", "localhost"):
        return parsed.path
    if parsed.scheme == "file":
        raise ValueError(f"Directory {uri!r}: a 'file://' URI names a local path "
                         "('file:///dir' or 'file://localhost/dir')")
    if storage.is_url(uri):
        storage.check_url(uri)
    return uri
