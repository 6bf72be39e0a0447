"""The keyed state backends a job can use, by the name its settings give them
(``TaskSettings.state_backend``), and how a task or a tool restores one."""
from typing import Dict, Tuple, Type

from checkpoint.state_store import StateStore
from statebackends.base import KeyedStateBackend
from statebackends.hashmap import HashMapKeyedStateBackend
from statebackends.rocksdb import RocksDBKeyedStateBackend

__all__ = ["STATE_BACKENDS", "check_state_backend", "restore_backend"]

STATE_BACKENDS: Dict[str, Type[KeyedStateBackend]] = {
    "hashmap": HashMapKeyedStateBackend, "rocksdb": RocksDBKeyedStateBackend}


def check_state_backend(name: str) -> None:
    """Fails unless ``name`` is a state backend's name."""
    if name not in STATE_BACKENDS:
        raise ValueError(f"unknown state backend {name!r}: use "
                         + " or ".join(repr(known) for known in STATE_BACKENDS))


def restore_backend(name: str, store: StateStore, operator_id: str,
                    key_group_range: Tuple[int, int], max_parallelism: int, version: int,
                    **options) -> KeyedStateBackend:
    """Backend ``name`` of operator ``operator_id`` over ``key_group_range`` at
    ``version`` (empty at -1), read from ``store``; ``options`` are the backend's own
    (e.g. RocksDB's ``incremental``)."""
    check_state_backend(name)
    return STATE_BACKENDS[name].restore(store, operator_id, key_group_range, max_parallelism,
                                        version, **options)
