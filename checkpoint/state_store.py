"""Where keyed state versions live on disk, and which files rebuild a version.

Layout under the store's root directory::

    state/<operator id>/<first key group>-<last key group>/<version>.changelog
    state/<operator id>/<first key group>-<last key group>/<version>.snapshot
    state/<operator id>/<first key group>-<last key group>/<version>.incremental
    state/<operator id>/<first key group>-<last key group>/shared/<name>

A file holds the state of one key-group range at one version, as a full
snapshot or as the changes since the previous version: a framed file
(``checkpoint.files.write_framed``) with the writer's metadata (data) in its header
and one frame per key group, written and read one group at a time (``write`` takes
an iterator, ``iter_groups`` seeks to the groups a reader of a key-group range wants),
so neither needs the range's state in memory at once. A frame is msgpack
(``core.codec``): by default data only, written with
``serialize_data`` and read with ``deserialize_data``, so nothing in a frame is
unpickled; a writer may pass its own ``encode``, and its reader its own ``decode``
(the keyed state backends decide per state what may be pickled, see
``statebackends.base``).
The root may be a local path or a URL (``checkpoint.storage``).
Version ``v`` of key group ``g`` = the newest snapshot <= v covering g, then every
changelog covering g after it, in version order.

An ``incremental`` file is a snapshot too (it replaces the groups of its range),
kept as a small manifest (``write_checked``): the writer's metadata plus the names of
files in the range's ``shared/`` directory (a RocksDB backend's SST files, hard-linked
there -- uploaded once, under their unique names, on an object store -- so that
consecutive snapshots share the files they have in common instead of copying them).
Only a backend that understands those files can restore it; ``read`` refuses it. A
shared file is deleted once no manifest in its range directory names it.

At any version, the files of one operator cover disjoint ranges: ranges change
only when a job restarts at another parallelism, and the engine must then call
``discard_after(operator_id, committed_version)`` so that files of attempts that
never committed cannot overlap the new ones.
"""
from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, Iterator, List, Optional, Tuple, Union
from urllib.parse import quote, unquote

from checkpoint import storage
from checkpoint.files import CorruptFileError, FramedFile, read_checked, write_checked, \
    write_framed
from checkpoint.storage import is_temporary_name
from core.codec import deserialize_data, serialize_data
from core.private_paths import make_private


__all__ = ["CHANGELOG", "SNAPSHOT", "INCREMENTAL", "SNAPSHOT_KINDS", "StateFile", "StateFileContent", "StateStore",
           "AmbiguousStateFilesError", "IncrementalSnapshotError", "check_file_name"]

CHANGELOG = "changelog"
SNAPSHOT = "snapshot"
INCREMENTAL = "incremental"
SNAPSHOT_KINDS = (SNAPSHOT, INCREMENTAL)
"""Kinds that hold every entry of their key groups (a restore starts from one)."""
_KINDS = (CHANGELOG, SNAPSHOT, INCREMENTAL)
_SHARED = "shared"

KeyGroupRange = Tuple[int, int]
Groups = Union[Mapping, Iterable[Tuple[int, Any]]]


class AmbiguousStateFilesError(Exception):
    """Two files claim the same key groups at the same version."""


class IncrementalSnapshotError(Exception):
    """An incremental snapshot was read by a reader that cannot restore it."""


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
    """What a file holds: the writer's metadata and data per key group (an incremental
    manifest: no groups, and ``shared_files`` maps the writer's file names to paths)."""

    meta: Any
    groups: Dict[int, Any]
    shared_files: Dict[str, str] = field(default_factory=dict)


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

    def shared_dir(self, operator_id: str, key_group_range: KeyGroupRange) -> str:
        """The directory of the files that incremental manifests of one range share."""
        return os.path.join(self._range_dir(operator_id, key_group_range), _SHARED)

    def path_of(self, operator_id: str, key_group_range: KeyGroupRange,
                version: int, kind: str) -> str:
        """The path of one file (which need not exist)."""
        return os.path.join(self._range_dir(operator_id, key_group_range), f"{version}.{kind}")

    def operator_ids(self) -> List[str]:
        """Ids of all operators with stored state."""
        try:
            names = storage.listdir(self._state_dir)
        except FileNotFoundError:
            return []
        return sorted(unquote(name) for name in names if not is_temporary_name(name))

    def list_files(self, operator_id: str) -> List[StateFile]:
        """All files of an operator, in version order."""
        operator_dir = os.path.join(self._state_dir, _operator_dir_name(operator_id))
        try:
            range_names = storage.listdir(operator_dir)
        except FileNotFoundError:
            return []
        files = []
        for range_name in range_names:
            start, _, end = range_name.partition("-")
            if not (storage.is_number(start) and storage.is_number(end)):
                continue
            key_group_range = (int(start), int(end))
            range_dir = os.path.join(operator_dir, range_name)
            for file_name in storage.listdir(range_dir):
                version, _, kind = file_name.partition(".")
                if kind in _KINDS and storage.is_number(version.removeprefix("-")):
                    files.append(StateFile(operator_id, key_group_range, int(version), kind,
                                           os.path.join(range_dir, file_name)))
        files.sort(key=lambda f: (f.version, f.key_group_range, f.kind))
        return files

    # -- writing --------------------------------------------------------------

    def write(self, operator_id: str, key_group_range: KeyGroupRange, version: int,
              kind: str, groups: Groups, meta: Any = None,
              encode: Callable[[Any], bytes] = serialize_data) -> StateFile:
        """Writes (or overwrites) the file of one range at one version.

        ``groups`` maps key group -> data, or is an iterator of ``(key group, data)``
        pairs, consumed one pair at a time; each group's data is ``encode``d on its own
        (default: data only), ``meta`` is data. A file of the other kind at the same
        version (an earlier attempt) is removed first, so a version never has both.
        """
        if kind not in (CHANGELOG, SNAPSHOT):
            raise ValueError(f"kind must be {CHANGELOG!r} or {SNAPSHOT!r} (incremental "
                             f"snapshots: write_incremental), got {kind!r}")
        start, end = key_group_range
        pairs = groups.items() if isinstance(groups, Mapping) else groups

        def frames() -> Iterator[Tuple[int, bytes]]:
            for group, data in pairs:
                if not (isinstance(group, int) and start <= group <= end):
                    raise ValueError(f"key group {group!r} is outside the range {start}-{end} "
                                     f"written by operator {operator_id!r}")
                yield group, encode(data)

        path = self._prepare(operator_id, (start, end), version, kind)
        write_framed(path, {"operator_id": operator_id, "key_group_range": (start, end),
                            "version": version, "kind": kind, "meta": meta}, frames())
        return StateFile(operator_id, (start, end), version, kind, path)

    def share_file(self, operator_id: str, key_group_range: KeyGroupRange,
                   source_path: str, name: str) -> None:
        """Puts an immutable file of this user into the range's shared directory as
        ``name``: a hard link (a copy across file systems; an upload to an object store),
        given the mode of the store's files (a link: its source too, which a library such
        as RocksDB made with the umask's). Call before the manifest naming it is written."""
        target = os.path.join(self.shared_dir(operator_id, key_group_range), name)
        if storage.is_url(target):
            storage.copy(source_path, target)
            return
        storage.makedirs(os.path.dirname(target))
        with storage.replacing(target) as temporary:
            storage.copy(source_path, temporary)
            make_private(temporary)

    def write_incremental(self, operator_id: str, key_group_range: KeyGroupRange,
                          version: int, shared_files: Dict[str, str],
                          meta: Any = None) -> StateFile:
        """Writes (or overwrites) the incremental snapshot of one range at one version:
        ``shared_files`` maps the writer's file names to names already put into the
        shared directory with ``share_file``."""
        shared_dir = self.shared_dir(operator_id, key_group_range)
        missing = [n for n in shared_files.values()
                   if not storage.exists(os.path.join(shared_dir, n))]
        if missing:
            raise ValueError(f"operator {operator_id!r}: shared files {missing[:5]} of version "
                             f"{version} are not in {shared_dir}; call share_file() first")
        key_group_range = tuple(key_group_range)
        path = self._prepare(operator_id, key_group_range, version, INCREMENTAL)
        write_checked(path, {"operator_id": operator_id, "key_group_range": key_group_range,
                             "version": version, "kind": INCREMENTAL, "meta": meta,
                             "shared_files": dict(shared_files)})
        return StateFile(operator_id, key_group_range, version, INCREMENTAL, path)

    def _prepare(self, operator_id: str, key_group_range: KeyGroupRange, version: int,
                 kind: str) -> str:
        """The path to write a file of ``kind`` to, after removing a file of another kind
        at the same version (an earlier attempt), so that a version never has two."""
        self._remove(StateFile(operator_id, key_group_range, version, other,
                               self.path_of(operator_id, key_group_range, version, other))
                     for other in _KINDS if other != kind)
        storage.makedirs(self._range_dir(operator_id, key_group_range))
        return self.path_of(operator_id, key_group_range, version, kind)

    # -- reading --------------------------------------------------------------

    def read(self, state_file: StateFile, key_group_range: Optional[KeyGroupRange] = None,
             decode: Callable[[bytes], Any] = deserialize_data) -> StateFileContent:
        """Reads a (small) file whole, keeping only the key groups within
        ``key_group_range`` (``decode`` as ``iter_groups``). An incremental snapshot is
        refused: see ``read_incremental``. Large files: ``read_meta`` and ``iter_groups``."""
        return StateFileContent(self.read_meta(state_file),
                                dict(self.iter_groups(state_file, key_group_range, decode)))

    def read_meta(self, state_file: StateFile) -> Any:
        """The writer's metadata of a changelog or snapshot file."""
        with self._open(state_file) as framed:
            return framed.header["meta"]

    def iter_groups(self, state_file: StateFile,
                    key_group_range: Optional[KeyGroupRange] = None,
                    decode: Callable[[bytes], Any] = deserialize_data
                    ) -> Iterator[Tuple[int, Any]]:
        """``(key group, data)`` of a changelog or snapshot file in key-group order, one
        group read and ``decode``d at a time (default: data only, nothing is unpickled),
        only those within ``key_group_range``. A group that ``decode`` refuses raises
        CorruptFileError naming the file and the group."""
        with self._open(state_file) as framed:
            for group in framed.frame_ids():
                if key_group_range is None or key_group_range[0] <= group <= key_group_range[1]:
                    data = framed.read(group)
                    try:
                        value = decode(data)
                    except Exception as e:  # a valid checksum over bytes decode refuses
                        raise CorruptFileError(state_file.path, f"cannot read key group "
                                                                f"{group}: {e}") from e
                    del data  # not kept while the caller works on the group
                    yield group, value

    def _open(self, state_file: StateFile) -> FramedFile:
        if state_file.kind == INCREMENTAL:
            raise IncrementalSnapshotError(
                f"{state_file.path} is an incremental RocksDB snapshot of operator "
                f"{state_file.operator_id!r}; only the RocksDB state backend can restore it "
                "(switch backends on a version that has a full snapshot)")
        return FramedFile(state_file.path)

    def verify(self, state_file: StateFile) -> None:
        """Checks a whole file without keeping it in memory: every key group's checksum
        (an incremental manifest: its checksum, and that its shared files exist). Raises
        CorruptFileError, or OSError if the file cannot be read."""
        if state_file.kind != INCREMENTAL:
            with FramedFile(state_file.path) as framed:
                framed.verify()
            return
        for path in self.read_incremental(state_file).shared_files.values():
            if not storage.exists(path):
                raise CorruptFileError(state_file.path, f"its shared file {path} is missing")

    def read_incremental(self, state_file: StateFile) -> StateFileContent:
        """Reads an incremental snapshot: its metadata and the paths of its shared files."""
        content = read_checked(state_file.path)
        shared_dir = self.shared_dir(state_file.operator_id, state_file.key_group_range)
        shared_files = content["shared_files"]
        for name in (*shared_files, *shared_files.values()):
            check_file_name(state_file.path, name)
        return StateFileContent(content["meta"], {}, {
            local: os.path.join(shared_dir, name) for local, name in shared_files.items()})

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
            if f.kind in SNAPSHOT_KINDS:
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
        keep_from = max((f.version for f in files if f.kind in SNAPSHOT_KINDS
                         and f.key_group_range == tuple(key_group_range) and f.version < version),
                        default=None)
        if keep_from is None:
            return
        self._remove(f for f in files
                     if f.version < keep_from and _contains(key_group_range, f.key_group_range))

    def discard_after(self, operator_id: str, version: int) -> None:
        """Deletes all files of an operator newer than ``version`` (never committed).

        The engine calls this when it resumes from committed ``version``, before
        any task writes, so a restart at another parallelism cannot meet
        overlapping files of a failed attempt.
        """
        self._remove(f for f in self.list_files(operator_id) if f.version > version)

    def _remove(self, files: Iterable[StateFile]) -> None:
        """Deletes files, then the shared files that no remaining manifest names."""
        manifest_ranges = set()
        for f in files:
            try:
                storage.remove(f.path)
            except FileNotFoundError:
                continue
            if f.kind == INCREMENTAL:
                manifest_ranges.add((f.operator_id, f.key_group_range))
        for operator_id, key_group_range in manifest_ranges:
            self._delete_unshared(operator_id, key_group_range)

    def _delete_unshared(self, operator_id: str, key_group_range: KeyGroupRange) -> None:
        # Single writer per range: the engine runs one task per range at a time, which
        # shares its files and writes their manifest before it prunes.
        shared_dir = self.shared_dir(operator_id, key_group_range)
        try:
            names = storage.listdir(shared_dir)
        except FileNotFoundError:
            return
        in_use = set()
        for f in self.list_files(operator_id):
            if f.kind == INCREMENTAL and f.key_group_range == tuple(key_group_range):
                try:
                    in_use.update(read_checked(f.path)["shared_files"].values())
                except FileNotFoundError:
                    pass
        for name in names:
            if name not in in_use:
                try:
                    storage.remove(os.path.join(shared_dir, name))
                except FileNotFoundError:
                    pass


def check_file_name(path: str, name: Any) -> None:
    """Fails unless ``name``, read from the file ``path``, is a plain file name (no
    directory part), so that a stored name cannot reach outside its directory."""
    if (not isinstance(name, str) or name in ("", ".", "..") or "/" in name
            or os.sep in name or "\0" in name or (os.altsep and os.altsep in name)):
        raise CorruptFileError(path, f"{name!r} is not a plain file name")


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

