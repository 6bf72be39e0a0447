"""Keyed state of one operator instance in Python dicts (Flink's HashMapStateBackend).

One backend holds every state of one operator over one key-group range (see
``statebackends.base``). After a batch, ``write_version`` persists the batch's
changes (or, every ``snapshot_interval`` versions, all state) through a
``checkpoint.state_store.StateStore``; ``restore`` rebuilds a backend at any
committed version, from files of any key-group ranges.

    backend = HashMapKeyedStateBackend("counter", (0, 63), 128)
    count = backend.state(StateSpec("count", StateKind.VALUE))
    backend.set_current_key("a")
    count.update((count.value() or 0) + 1)
    backend.write_version(store, 0)
"""
from __future__ import annotations

from typing import Any, Dict, Hashable, Optional, Set, Tuple

from checkpoint.state_store import CHANGELOG, SNAPSHOT, StateStore
from statebackends.base import (
    DEFAULT_SNAPSHOT_INTERVAL, GroupChanges, KeyedStateBackend, KeyGroupMismatchError, Slot,
)
from core.codec import user_key
from core.keygroups import KeyType

__all__ = ["HashMapKeyedStateBackend"]


class HashMapKeyedStateBackend(KeyedStateBackend):
    """Keyed state of one operator instance over key groups ``start..end`` (inclusive),
    in dicts ``(key identity, namespace) -> value``, one per state name."""

    def _table_of(self, name: str) -> Tuple[Dict[Slot, Any], Set[Slot]]:
        table = self._tables.get(name)
        if table is None:
            table = self._tables[name] = {}
            self._dirty[name] = set()
        return table, self._dirty[name]

    # -- persistence -------------------------------------------------------------

    def write_version(self, store: StateStore, version: int) -> None:
        """Persists this version: the changes since the last write, or a snapshot.

        A file is always written (even without changes) so that it replaces a
        stale file of a failed attempt at the same version. Versions divisible
        by ``snapshot_interval`` are full snapshots, after which older files of
        this range are pruned. If writing fails, discard this backend.
        """
        is_snapshot = self._is_snapshot(version)
        groups = self._grouped_entries(everything=is_snapshot)  # encoded one at a time
        store.write(self.operator_id, self.key_group_range, version,
                    SNAPSHOT if is_snapshot else CHANGELOG, groups,
                    meta=self._file_meta(), encode=self._encode_group)
        if is_snapshot:
            store.prune(self.operator_id, self.key_group_range, version)
        for dirty in self._dirty.values():
            dirty.clear()
        self.version = version

    def _grouped_entries(self, everything: bool) -> Dict[int, GroupChanges]:
        """Changed (or all) entries per key group; each key's group is computed once."""
        start, end = self.key_group_range
        key_group_of: Dict[Hashable, int] = {}
        groups: Dict[int, GroupChanges] = {}
        for name, table in self._tables.items():
            for slot in (table if everything else self._dirty[name]):
                key = slot[0]
                group = key_group_of.get(key)
                if group is None:
                    group = key_group_of[key] = self.key_grouping.key_group(user_key(key))
                    if not start <= group <= end:
                        raise KeyGroupMismatchError(
                            f"operator {self.operator_id!r} holds state for key {key!r} of key "
                            f"group {group}, outside its key groups {start}-{end}")
                changes = groups.get(group)
                if changes is None:
                    changes = groups[group] = {}
                puts_and_deletes = changes.get(name)
                if puts_and_deletes is None:
                    puts_and_deletes = changes[name] = ({}, [])
                if slot in table:
                    puts_and_deletes[0][slot] = table[slot]
                else:
                    puts_and_deletes[1].append(slot)
        return groups

    @classmethod
    def _restore(cls, store: StateStore, operator_id: str, key_group_range: Tuple[int, int],
                 max_parallelism: int, version: int,
                 snapshot_interval: int = DEFAULT_SNAPSHOT_INTERVAL,
                 allow_pickled: bool = True, pickled_keys: bool = True,
                 key_type: Optional[KeyType] = None) -> "HashMapKeyedStateBackend":
        """A backend holding ``key_group_range`` at ``version`` (empty at -1).

        Reads the newest snapshot <= version and the changelogs after it, from
        every stored key-group range that overlaps the requested one, one key group
        at a time; pickled values stay ``Pickled`` placeholders until the job registers
        their state (``statebackends.base``).
        """
        backend = cls(operator_id, key_group_range, max_parallelism, snapshot_interval,
                      allow_pickled, pickled_keys, key_type)
        start, end = backend.key_group_range
        by_group: Dict[int, Dict[str, Dict[Slot, Any]]] = {}
        for state_file in store.files_to_restore(operator_id, backend.key_group_range, version):
            backend._kinds.update(store.read_meta(state_file)["state_kinds"])
            if state_file.kind == SNAPSHOT:
                file_start, file_end = state_file.key_group_range
                for group in range(max(start, file_start), min(end, file_end) + 1):
                    by_group.pop(group, None)
            for group, changes in backend._read_groups(store, state_file, backend.key_group_range):
                group_entries = by_group.setdefault(group, {})
                for name, (puts, deletes) in changes.items():
                    entries = group_entries.setdefault(name, {})
                    for slot in deletes:
                        entries.pop(slot, None)
                    entries.update(puts)
        for group_entries in by_group.values():
            for name, entries in group_entries.items():
                backend._table_of(name)[0].update(entries)
        backend.version = version
        return backend
