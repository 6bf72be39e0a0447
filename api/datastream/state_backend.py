"""State backends, as in ``pyflink.datastream.state_backend``: where keyed state lives
while a job runs. Either way, each micro-batch's changes are written to the state
directory, so any worker can take over a partition."""
from typing import Optional


class StateBackend:
    """Defines how keyed state is stored locally while the job runs."""

    engine_kind = ""


class HashMapStateBackend(StateBackend):
    """Keeps working state in Python dicts in the worker's memory (the default)."""

    engine_kind = "hashmap"


class EmbeddedRocksDBStateBackend(StateBackend):
    """Keeps working state in an embedded RocksDB on the worker's local disk, so state can
    exceed memory."""

    engine_kind = "rocksdb"

    def __init__(self, enable_incremental_checkpointing: Optional[bool] = None):
        # Checkpoints are per-batch changelogs plus periodic snapshots either way.
        self._incremental = bool(enable_incremental_checkpointing)

    def is_incremental_checkpointing_enabled(self) -> bool:
        return self._incremental
