"""Where keyed state versions live on disk, and which files rebuild a version.

Layout under the store's root directory::

    state/<operator id>/<first key group>-<last key group>/<version>.changelog
    state/<operator id>/<first key group>-<last key group>/<version>.snapshot

A file holds the state of one key-group range at one version, as a full
snapshot or as the changes since the previous version, stored per key group so
that a reader of another key-group range (another parallelism) unpickles only
its own groups. Version ``v`` of key group ``g`` = the newest snapshot <= v
covering g, then every changelog covering g after it, in version order.

At any version, the files of one operator cover disjoint ranges: ranges change
only when a job restarts at another parallelism, and the engine must then call
``discard_after(operator_id, committed_version)`` so that files of attempts that
never committed cannot overlap the new ones.
"""
from __future__ import annotations

import os
import pickle
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Tuple
from urllib.parse import quote, unquote

from checkpoint.files import is_temporary_name, read_checked, write_checked

__all__ = ["CHANGELOG", "SNAPSHOT", "StateFile", "StateFileContent", "StateStore",
           "AmbiguousStateFilesError"]

CHANGELOG = "changelog"
SNAPSHOT = "snapshot"
_KINDS = (CHANGELOG, SNAPSHOT)

KeyGroupRange = Tuple[int, int]


class AmbiguousStateFilesError(Exception):
    """Two files claim the same key groups at the same version."""


@dataclass(frozen=True)
class StateFile:
    """One stored file: a key-group range (inclusive) of an operator at a version."""

    operator_id: str
    key_group_range: KeyGroupRange
    version: int
    kind: str
    path: str


@dataclass(frozen=True)
class StateFileContent:
    """What a file holds: the writer's metadata and data per key group."""

    meta: Any
    groups: Dict[int, Any]


def _overlaps(a: KeyGroupRange, b: KeyGroupRange) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def _contains(outer: KeyGroupRange, inner: KeyGroupRange) -> bool:
    return outer[0] <= inner[0] and inner[1] <= outer[1]


def _operator_dir_name(operator_id: str) -> str:
    name = quote(operator_id, safe="")
    # quote() keeps dots, so "." and ".." would name the wrong directories.
    return name.replace(".", "%2E") if set(name) == {"."} else name


class StateStore:
    """Versioned keyed-state files of all operators of a job under ``root_dir``."""

    def __init__(self, root_dir: str):
        self.root_dir = root_dir
        self._state_dir = os.path.join(root_dir, "state")

    # -- layout ---------------------------------------------------------------

    def _range_dir(self, operator_id: str, key_group_range: KeyGroupRange) -> str:
        start, end = key_group_range
        return os.path.join(self._state_dir, _operator_dir_name(operator_id), f"{start}-{end}")

    def path_of(self, operator_id: str, key_group_range: KeyGroupRange,
                version: int, kind: str) -> str:
        """The path of one file (which need not exist)."""
        return os.path.join(self._range_dir(operator_id, key_group_range), f"{version}.{kind}")

    def operator_ids(self) -> List[str]:
        """Ids of all operators with stored state."""
        try:
            names = os.listdir(self._state_dir)
        except FileNotFoundError:
            return []
        return sorted(unquote(name) for name in names if not is_temporary_name(name))

    def list_files(self, operator_id: str) -> List[StateFile]:
        """All files of an operator, in version order."""
        operator_dir = os.path.join(self._state_dir, _operator_dir_name(operator_id))
        try:
            range_names = os.listdir(operator_dir)
        except FileNotFoundError:
            return []
        files = []
        for range_name in range_names:
            start, _, end = range_name.partition("-")
            if not (start.isdigit() and end.isdigit()):
                continue
            key_group_range = (int(start), int(end))
            range_dir = os.path.join(operator_dir, range_name)
            for file_name in os.listdir(range_dir):
                version, _, kind = file_name.partition(".")
                if kind in _KINDS and version.lstrip("-").isdigit():
                    files.append(StateFile(operator_id, key_group_range, int(version), kind,
                                           os.path.join(range_dir, file_name)))
        files.sort(key=lambda f: (f.version, f.key_group_range, f.kind))
        return files

    # -- writing --------------------------------------------------------------

    def write(self, operator_id: str, key_group_range: KeyGroupRange, version: int,
              kind: str, groups: Dict[int, Any], meta: Any = None) -> StateFile:
        """Writes (or overwrites) the file of one range at one version.

        ``groups`` maps key group -> data; each group is pickled on its own.
        A file of the other kind at the same version (an earlier attempt) is
        removed first, so a version never has both.
        """
        if kind not in _KINDS:
            raise ValueError(f"kind must be one of {_KINDS}, got {kind!r}")
        start, end = key_group_range
        outside = [g for g in groups if not start <= g <= end]
        if outside:
            raise ValueError(f"key groups {sorted(outside)[:5]} are outside the range "
                             f"{start}-{end} written by operator {operator_id!r}")
        other_kind = SNAPSHOT if kind == CHANGELOG else CHANGELOG
        try:
            os.remove(self.path_of(operator_id, key_group_range, version, other_kind))
        except FileNotFoundError:
            pass
        os.makedirs(self._range_dir(operator_id, key_group_range), exist_ok=True)
        path = self.path_of(operator_id, key_group_range, version, kind)
        write_checked(path, {
            "operator_id": operator_id,
            "key_group_range": (start, end),
            "version": version,
            "kind": kind,
            "meta": meta,
            "groups": {g: pickle.dumps(data, protocol=5) for g, data in groups.items()},
        })
        return StateFile(operator_id, (start, end), version, kind, path)

    # -- reading --------------------------------------------------------------

    def read(self, state_file: StateFile,
             key_group_range: Optional[KeyGroupRange] = None) -> StateFileContent:
        """Reads a file, keeping only the key groups within ``key_group_range``."""
        content = read_checked(state_file.path)
        if key_group_range is None:
            wanted = content["groups"].items()
        else:
            start, end = key_group_range
            wanted = ((g, data) for g, data in content["groups"].items() if start <= g <= end)
        return StateFileContent(content["meta"], {g: pickle.loads(data) for g, data in wanted})

    def files_to_restore(self, operator_id: str, key_group_range: KeyGroupRange,
                         version: int) -> List[StateFile]:
        """The files to apply, in version order, to rebuild ``key_group_range`` at ``version``.

        They may come from any stored range overlapping the requested one. A
        snapshot replaces the groups it covers; a changelog updates them.
        Raises AmbiguousStateFilesError if overlapping files share a version.
        """
        files = [f for f in self.list_files(operator_id)
                 if f.version <= version and _overlaps(f.key_group_range, key_group_range)]
        _check_unambiguous(files)
        start, end = key_group_range
        base_version = {}
        for f in reversed(files):
            if f.kind == SNAPSHOT:
                for g in range(max(start, f.key_group_range[0]), min(end, f.key_group_range[1]) + 1):
                    base_version.setdefault(g, f.version)
        oldest_base = min(base_version.get(g, -1) for g in range(start, end + 1))
        return [f for f in files if f.version >= oldest_base]

    # -- deleting -------------------------------------------------------------

    def prune(self, operator_id: str, key_group_range: KeyGroupRange, version: int) -> None:
        """Deletes files no restore at ``version - 1`` or later needs.

        Call after writing a snapshot of ``key_group_range`` at ``version``: the
        newest snapshot of the range at or before ``version - 1`` still serves a
        restore of ``version - 1`` (batch ``version`` may never commit), and
        everything older within the range is deleted.
        """
        files = self.list_files(operator_id)
        keep_from = max((f.version for f in files if f.kind == SNAPSHOT
                         and f.key_group_range == tuple(key_group_range) and f.version < version),
                        default=None)
        if keep_from is None:
            return
        _remove(f for f in files
                if f.version < keep_from and _contains(key_group_range, f.key_group_range))

    def discard_after(self, operator_id: str, version: int) -> None:
        """Deletes all files of an operator newer than ``version`` (never committed).

        The engine calls this when it resumes from committed ``version``, before
        any task writes, so a restart at another parallelism cannot meet
        overlapping files of a failed attempt.
        """
        _remove(f for f in self.list_files(operator_id) if f.version > version)


def _check_unambiguous(files: List[StateFile]) -> None:
    by_version: Dict[int, List[StateFile]] = {}
    for f in files:
        by_version.setdefault(f.version, []).append(f)
    for same_version in by_version.values():
        same_version.sort(key=lambda f: f.key_group_range)
        for a, b in zip(same_version, same_version[1:]):
            if _overlaps(a.key_group_range, b.key_group_range):
                raise AmbiguousStateFilesError(
                    f"{a.path} and {b.path} both hold key groups of version {a.version}; "
                    f"files of uncommitted attempts must be removed with discard_after()")


def _remove(files: Iterable[StateFile]) -> None:
    for f in files:
        try:
            os.remove(f.path)
        except FileNotFoundError:
            pass
