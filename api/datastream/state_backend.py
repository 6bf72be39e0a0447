"""State backends, as in ``pyflink.datastream.state_backend``: where keyed state lives
while a job runs. Either way, each micro-batch's changes are written to the state
directory, so any worker can take over a partition."""
import os
import random
from enum import Enum
from typing import Any, Dict, List, Optional
from urllib.parse import urlparse


class StateBackend:
    """Defines how keyed state is stored locally while the job runs."""

    engine_kind = ""

    def engine_options(self) -> Dict[str, Any]:
        """Keyword arguments of the engine's keyed backend."""
        return {}


class CustomStateBackend(StateBackend):
    """JVM-only: wraps a Java state backend, which cannot run here."""

    def __init__(self, j_custom_state_backend):
        raise TypeError("CustomStateBackend wraps a Java state backend, which needs a JVM: use "
                        "HashMapStateBackend() or EmbeddedRocksDBStateBackend() instead.")


class PredefinedOptions(Enum):
    """Flink's RocksDB tuning profiles. Recorded only: this engine's RocksDB options
    (``statebackends.rocksdb``) are tuned for its micro-batch writes."""
    DEFAULT = 0
    SPINNING_DISK_OPTIMIZED = 1
    SPINNING_DISK_OPTIMIZED_HIGH_MEM = 2
    FLASH_SSD_OPTIMIZED = 3


class HashMapStateBackend(StateBackend):
    """Keeps working state in Python dicts in the worker's memory (the default)."""

    engine_kind = "hashmap"


class EmbeddedRocksDBStateBackend(StateBackend):
    """Keeps working state in an embedded RocksDB on the worker's local disk, so state can
    exceed memory.

    Each micro-batch writes a changelog of its changes; every few batches a snapshot.
    With ``enable_incremental_checkpointing=True`` a snapshot is a RocksDB checkpoint
    whose SST files consecutive snapshots share (only new files are written); otherwise
    it is a full copy of the state, in the same format as HashMapStateBackend's, so a job
    can switch between the two backends. Incremental snapshots are read by this backend
    only. Incremental checkpointing is off by default, as in Flink."""

    engine_kind = "rocksdb"

    def __init__(self, enable_incremental_checkpointing: Optional[bool] = None):
        self._incremental = bool(enable_incremental_checkpointing)
        self._transfer_threads = 4
        self._db_storage_paths: List[str] = []
        self._predefined_options = PredefinedOptions.DEFAULT
        self._options_factory: Optional[str] = None

    def set_db_storage_paths(self, *paths: str):
        """Local directories for the RocksDB files of the workers (by default a temporary
        directory). With several, each run of the job uses one of them, chosen at random;
        no argument restores the default."""
        local = []
        for path in paths:
            parsed = urlparse(path)
            if parsed.scheme not in ("", "file"):
                raise ValueError(f"Path {path} has a non-local scheme")
            if not os.path.isabs(parsed.path):
                raise ValueError("Relative paths are not supported")
            local.append(parsed.path)
        self._db_storage_paths = local

    def get_db_storage_paths(self) -> List[str]:
        """The configured local directories; empty if none (a temporary directory)."""
        return list(self._db_storage_paths)

    def set_predefined_options(self, options: PredefinedOptions):
        """Recorded only (see PredefinedOptions)."""
        self._predefined_options = options

    def get_predefined_options(self) -> PredefinedOptions:
        return self._predefined_options

    def set_options(self, options_factory_class_name: str):
        """JVM-only, recorded with no effect: a Java RocksDBOptionsFactory cannot run here."""
        self._options_factory = options_factory_class_name

    def get_options(self) -> Optional[str]:
        """The options factory class name given to ``set_options``, or None."""
        return self._options_factory

    def is_incremental_checkpoints_enabled(self) -> bool:
        """Whether snapshots are incremental RocksDB checkpoints."""
        return self._incremental

    def get_number_of_transfer_threads(self) -> int:
        """Threads Flink uses to move state files; recorded only (files are linked here)."""
        return self._transfer_threads

    def set_number_of_transfer_threads(self, number_of_transfering_threads: int):
        """Recorded only: state files are hard-linked, not transferred, here."""
        if number_of_transfering_threads <= 0:
            raise ValueError("The number of threads must be positive")
        self._transfer_threads = number_of_transfering_threads

    def engine_options(self) -> Dict[str, Any]:
        """Keyword arguments of the engine's keyed backend (RocksDBKeyedStateBackend)."""
        options = {"incremental": self._incremental}
        if self._db_storage_paths:
            options["local_dir"] = random.choice(self._db_storage_paths)
        return options


# --- Deprecated state backends (PyFlink 1.x; removed in PyFlink 2.x) ----------------------
# Each stands for a working-state backend plus a checkpoint storage, as PyFlink documents;
# ``StreamExecutionEnvironment.set_state_backend`` applies both. PyFlink itself does not warn
# when they are used, so neither do we.
from .checkpoint_storage import (CheckpointStorage, FileSystemCheckpointStorage,  # noqa: E402
                                 JobManagerCheckpointStorage)


class _LegacyStateBackend:
    """A pre-1.13 state backend: also carries where checkpoints (and savepoints) go."""

    _checkpoint_storage: CheckpointStorage
    _savepoint_path: Optional[str] = None
    _asynchronous_snapshots: Optional[bool] = None

    def _set_asynchronous_snapshots(self, using_asynchronous_snapshots: Optional[bool]):
        if using_asynchronous_snapshots not in (None, True, False):
            raise TypeError(f"Unsupported input for 'using_asynchronous_snapshots': "
                            f"{using_asynchronous_snapshots!r}, the value of the parameter "
                            f"should be None or True or False.")
        self._asynchronous_snapshots = using_asynchronous_snapshots

    def is_using_asynchronous_snapshots(self) -> bool:
        """Snapshots are always taken between micro-batches; True unless set to False."""
        return self._asynchronous_snapshots is not False


class MemoryStateBackend(HashMapStateBackend, _LegacyStateBackend):
    """Deprecated: ``HashMapStateBackend`` plus ``JobManagerCheckpointStorage(checkpoint_path,
    max_state_size)``; ``savepoint_path`` becomes the default savepoint directory.

    Instead use ``env.set_state_backend(HashMapStateBackend())`` and
    ``env.get_checkpoint_config().set_checkpoint_storage(JobManagerCheckpointStorage())``.
    """

    DEFAULT_MAX_STATE_SIZE = JobManagerCheckpointStorage.DEFAULT_MAX_STATE_SIZE

    def __init__(self, checkpoint_path: Optional[str] = None,
                 savepoint_path: Optional[str] = None, max_state_size: Optional[int] = None,
                 using_asynchronous_snapshots: Optional[bool] = None):
        self._set_asynchronous_snapshots(using_asynchronous_snapshots)
        self._checkpoint_storage = JobManagerCheckpointStorage(checkpoint_path, max_state_size)
        self._savepoint_path = savepoint_path

    def get_max_state_size(self) -> int:
        return self._checkpoint_storage.get_max_state_size()


class FsStateBackend(HashMapStateBackend, _LegacyStateBackend):
    """Deprecated: ``HashMapStateBackend`` plus
    ``FileSystemCheckpointStorage(checkpoint_directory_uri)``;
    ``default_savepoint_directory_uri`` becomes the default savepoint directory.

    Instead use ``env.set_state_backend(HashMapStateBackend())`` and
    ``env.get_checkpoint_config().set_checkpoint_storage_dir("file:///checkpoints")``.
    """

    def __init__(self, checkpoint_directory_uri: str = None,
                 default_savepoint_directory_uri: Optional[str] = None,
                 file_state_size_threshold: Optional[int] = None,
                 write_buffer_size: Optional[int] = None,
                 using_asynchronous_snapshots: Optional[bool] = None):
        if checkpoint_directory_uri is None:
            raise ValueError("The parameter 'checkpoint_directory_uri' is required!")
        self._set_asynchronous_snapshots(using_asynchronous_snapshots)
        self._checkpoint_storage = FileSystemCheckpointStorage(
            checkpoint_directory_uri, file_state_size_threshold,
            -1 if write_buffer_size is None else write_buffer_size)
        self._savepoint_path = default_savepoint_directory_uri

    def get_checkpoint_path(self) -> str:
        return self._checkpoint_storage.get_checkpoint_path()

    def get_min_file_size_threshold(self) -> int:
        return self._checkpoint_storage.get_min_file_size_threshold()

    def get_write_buffer_size(self) -> int:
        return self._checkpoint_storage.get_write_buffer_size()


class RocksDBStateBackend(EmbeddedRocksDBStateBackend, _LegacyStateBackend):
    """Deprecated: ``EmbeddedRocksDBStateBackend(enable_incremental_checkpointing)`` plus
    ``FileSystemCheckpointStorage(checkpoint_data_uri)``, or plus the checkpoint storage of
    ``checkpoint_stream_backend`` (e.g. an ``FsStateBackend``).

    Instead use ``env.set_state_backend(EmbeddedRocksDBStateBackend())`` and
    ``env.get_checkpoint_config().set_checkpoint_storage_dir("file:///checkpoints")``.
    """

    def __init__(self, checkpoint_data_uri: Optional[str] = None,
                 enable_incremental_checkpointing: Optional[bool] = None,
                 checkpoint_stream_backend: Optional[StateBackend] = None):
        if enable_incremental_checkpointing not in (None, True, False):
            raise TypeError(f"Unsupported input for 'enable_incremental_checkpointing': "
                            f"{enable_incremental_checkpointing!r}, the value of the "
                            f"parameter should be None or True or False.")
        if checkpoint_data_uri is not None:
            checkpoint_stream_backend = FsStateBackend(checkpoint_data_uri)
        elif not isinstance(checkpoint_stream_backend, (MemoryStateBackend, FsStateBackend)):
            raise ValueError(f"RocksDBStateBackend needs a checkpoint_data_uri or a "
                             f"checkpoint_stream_backend (FsStateBackend or "
                             f"MemoryStateBackend) to write its checkpoints to, got "
                             f"{checkpoint_stream_backend!r}")
        super().__init__(enable_incremental_checkpointing)
        self._checkpoint_backend = checkpoint_stream_backend
        self._checkpoint_storage = checkpoint_stream_backend._checkpoint_storage
        self._savepoint_path = checkpoint_stream_backend._savepoint_path

    def get_checkpoint_backend(self) -> StateBackend:
        """The backend that checkpoints are written with (``FsStateBackend(checkpoint_data_uri)``
        or the given ``checkpoint_stream_backend``)."""
        return self._checkpoint_backend

    def get_number_of_transfering_threads(self) -> int:
        """PyFlink 1.x name of ``get_number_of_transfer_threads``."""
        return self.get_number_of_transfer_threads()

    def set_number_of_transfering_threads(self, number_of_transfering_threads: int):
        """PyFlink 1.x name of ``set_number_of_transfer_threads``."""
        self.set_number_of_transfer_threads(number_of_transfering_threads)
