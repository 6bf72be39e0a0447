"""The checkpoint directory of one job: metadata log, live state, checkpoints.

Layout (ARCHITECTURE.md, "Checkpoints and recovery")::

    <checkpoint dir>/<job name>/
      metadata/<batch>      one CommitRecord per committed batch: the commit point
      state/...             the live StateStore (changelogs and snapshots per version)
      chk-<n>/_metadata     a complete checkpoint: its CommitRecord, written last
      chk-<n>/state/...     hard links to the state files its version needs

A savepoint is a directory of the same shape as ``chk-<n>`` anywhere else. Hard
links make checkpoints and savepoints self-contained without copying: deleting
an old checkpoint, or pruning the live state, frees exactly the files nobody
else links (files are never modified in place, only replaced by rename). Where a
link is impossible (another file system), the file is copied.

Locally, every file is written under a temporary name and renamed; a checkpoint
directory is built under a temporary name and counts only once renamed with its
``_metadata`` inside. On an object store (a URL, see ``checkpoint.storage``)
nothing is renamed or linked: a checkpoint's files are copied into ``chk-<n>/``
(server-side), then its ``_metadata`` is created last, only if it does not exist;
a directory without ``_metadata`` is not a checkpoint, and it is deleted
``_metadata`` first.
"""
from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from typing import Iterable, List, Optional

from checkpoint import storage
from checkpoint.files import CorruptFileError, UnknownFormatError, read_checked, write_checked
from checkpoint.storage import is_temporary_name, temporary_path
from checkpoint.metadata import CommitRecord, IncompatibleCheckpointError
from checkpoint.state_store import INCREMENTAL, StateFile, StateStore

__all__ = ["JobDirectory", "RestorePoint", "export_checkpoint", "read_restore_point",
           "METADATA_FILE"]

METADATA_FILE = "_metadata"
KEPT_COMMITS = 3  # metadata log entries kept: the newest, and two to fall back on
_CHECKPOINT_NAME = re.compile(r"^chk-([0-9]+)$")

log = logging.getLogger(__name__)


class InvalidRestorePointError(Exception):
    """A commit, checkpoint or savepoint cannot be restored (missing or corrupt files)."""


class NoValidRestorePointError(InvalidRestorePointError):
    """A job directory holds restore points, and none of them can be restored."""


@dataclass
class RestorePoint:
    """A verified place to continue from: its record and the store holding its state."""

    path: str
    record: CommitRecord
    store: StateStore


def _needed_files(store: StateStore, record: CommitRecord) -> List[StateFile]:
    """Every state file a restore of ``record``'s version reads, all operators."""
    files = []
    for uid, info in record.operators.items():
        files.extend(store.files_to_restore(uid, (0, info.max_parallelism - 1),
                                            record.batch_id))
    return files


def _physical_paths(store: StateStore, state_file: StateFile) -> List[str]:
    """The file itself, and for an incremental snapshot the shared files it names."""
    if state_file.kind == INCREMENTAL:
        return [state_file.path, *store.read_incremental(state_file).shared_files.values()]
    return [state_file.path]


def _verify(store: StateStore, record: CommitRecord, path: str) -> None:
    """Raises InvalidRestorePointError unless every operator has a file at exactly the
    record's version and every file of the restore chain reads back intact (shared
    RocksDB files: exist; RocksDB checks their own checksums when it opens them)."""
    for uid in record.operators:
        if not any(f.version == record.batch_id for f in store.list_files(uid)):
            raise InvalidRestorePointError(
                f"{path}: no state file of operator {uid!r} at version {record.batch_id}")
    for state_file in _needed_files(store, record):
        try:
            store.verify(state_file)
        except (CorruptFileError, OSError) as e:
            raise InvalidRestorePointError(f"{path}: {e}") from e


def _link_files(store: StateStore, files: Iterable[StateFile], target_root: str) -> None:
    """Links (copies, on an object store) the files (and the shared files of incremental
    snapshots) into a store at ``target_root``, at the same relative paths."""
    root = store.root_dir.rstrip("/") + "/"
    for state_file in files:
        for source in _physical_paths(store, state_file):
            target = os.path.join(target_root, source[len(root):])
            if not storage.exists(target):  # (a shared file linked for an earlier file)
                storage.makedirs(os.path.dirname(target))
                storage.copy(source, target)


def export_checkpoint(store: StateStore, record: CommitRecord, target: str) -> str:
    """Writes a self-contained checkpoint/savepoint of ``record``'s version at ``target``
    (which must not exist): the state files it needs, then ``_metadata``, then the
    rename that makes it visible (on an object store: ``_metadata``, created last)."""
    if storage.is_url(target):
        metadata = os.path.join(target, METADATA_FILE)
        if storage.exists(metadata):
            raise FileExistsError(f"checkpoint target {target} exists already")
        storage.rmtree(target)  # what an interrupted export left: never a checkpoint
        _link_files(store, _needed_files(store, record), target)
        write_checked(metadata, record.to_data(), exclusive=True)
        return target
    storage.makedirs(os.path.dirname(os.path.abspath(target)))
    if os.path.exists(target):
        raise FileExistsError(f"checkpoint target {target} exists already")
    building = temporary_path(target)
    try:
        storage.makedirs(building)  # (a job without keyed state links no files into it)
        _link_files(store, _needed_files(store, record), building)
        write_checked(os.path.join(building, METADATA_FILE), record.to_data())
        os.rename(building, target)
    except BaseException:
        storage.rmtree(building)
        raise
    return target


def read_restore_point(path: str) -> RestorePoint:
    """Opens a checkpoint or savepoint directory (or its ``_metadata`` file), verifying
    its metadata and files."""
    path = path.rstrip("/") if storage.is_url(path) else os.path.normpath(path)
    if os.path.basename(path) == METADATA_FILE:
        path = os.path.dirname(path)
    metadata = os.path.join(path, METADATA_FILE)
    if not storage.isdir(path):
        raise IncompatibleCheckpointError(f"{path} is not a directory, so not a checkpoint "
                                          "or savepoint")
    if not storage.exists(metadata):
        raise IncompatibleCheckpointError(
            f"{path} has no {METADATA_FILE} file: it is not a complete checkpoint or savepoint")
    try:
        record = CommitRecord.from_data(metadata, read_checked(metadata))
    except CorruptFileError as e:
        raise InvalidRestorePointError(str(e)) from e
    store = StateStore(path)
    _verify(store, record, path)
    return RestorePoint(path, record, store)


class JobDirectory:
    """The metadata log, live state and checkpoints of one job under ``root``."""

    def __init__(self, root: str):
        self.root = root
        self.store = StateStore(root)
        self._metadata_dir = os.path.join(root, "metadata")
        self._finished_mark = os.path.join(root, "_finished")

    # -- metadata log -----------------------------------------------------------

    def commit(self, record: CommitRecord) -> None:
        """Commits a batch: once this returns, the batch survives any crash."""
        storage.makedirs(self._metadata_dir)
        write_checked(os.path.join(self._metadata_dir, str(record.batch_id)), record.to_data())
        for old in self.committed_batches()[KEPT_COMMITS:]:
            self._remove_commit(old)

    def committed_batches(self) -> List[int]:
        """Batch ids in the metadata log, newest first."""
        try:
            names = storage.listdir(self._metadata_dir)
        except FileNotFoundError:
            return []
        return sorted((int(n) for n in names if storage.is_number(n)), reverse=True)

    def _remove_commit(self, batch_id: int) -> None:
        try:
            storage.remove(os.path.join(self._metadata_dir, str(batch_id)))
        except FileNotFoundError:
            pass

    # -- checkpoints ------------------------------------------------------------

    def checkpoint_ids(self) -> List[int]:
        """Ids of complete checkpoints, newest first."""
        try:
            names = storage.listdir(self.root)
        except FileNotFoundError:
            return []
        ids = []
        for name in names:
            match = _CHECKPOINT_NAME.match(name)
            if match and storage.exists(os.path.join(self.root, name, METADATA_FILE)):
                ids.append(int(match.group(1)))
        return sorted(ids, reverse=True)

    def checkpoint_path(self, checkpoint_id: int) -> str:
        return os.path.join(self.root, f"chk-{checkpoint_id}")

    def write_checkpoint(self, checkpoint_id: int, record: CommitRecord,
                         num_retained: int) -> str:
        """Completes checkpoint ``checkpoint_id`` of the committed ``record``, then deletes
        all but the newest ``num_retained`` checkpoints."""
        path = export_checkpoint(self.store, record, self.checkpoint_path(checkpoint_id))
        for old in self.checkpoint_ids()[num_retained:]:
            _discard(self.checkpoint_path(old))
        return path

    # -- restoring --------------------------------------------------------------

    def find_restore_point(self) -> Optional[RestorePoint]:
        """The newest committed batch or complete checkpoint that verifies; None where
        there is none.

        Candidates are tried newest version first (a commit before a checkpoint of the
        same version); each corrupt or incomplete one is skipped with a warning naming it.
        If none verifies, NoValidRestorePointError: starting afresh would repeat the output
        the job has committed. A file of another format version, or metadata of another
        engine, raises.
        """
        candidates = []
        paths = ([os.path.join(self._metadata_dir, str(b)) for b in self.committed_batches()]
                 + [os.path.join(self.checkpoint_path(c), METADATA_FILE)
                    for c in self.checkpoint_ids()])
        for path in paths:
            try:
                record = CommitRecord.from_data(path, read_checked(path))
            except UnknownFormatError:  # another version's: not to be skipped silently
                raise
            except (CorruptFileError, OSError) as e:
                log.warning("Skipping a damaged restore point: %s", e)
                continue
            in_place = os.path.dirname(path) == self._metadata_dir
            store = self.store if in_place else StateStore(os.path.dirname(path))
            candidates.append((record.batch_id, in_place, RestorePoint(path, record, store)))
        candidates.sort(key=lambda c: (c[0], c[1]), reverse=True)
        for _, _, point in candidates:
            try:
                _verify(point.store, point.record, point.path)
            except InvalidRestorePointError as e:
                log.warning("Skipping a damaged restore point: %s", e)
                continue
            return point
        if paths:
            raise NoValidRestorePointError(
                f"No restore point in {self.root} can be restored ({len(paths)} found, each "
                "damaged: see the warnings naming them). Starting afresh would repeat what "
                "the job has already committed to its sinks. Restore from a savepoint "
                "('execution.savepoint.path'), or move the job directory away to start "
                "from scratch.")
        return None

    def restore(self, point: RestorePoint, explicit: bool = False) -> None:
        """Makes ``point`` the newest committed batch: state and metadata of later
        (never committed, or abandoned) batches are discarded; state of a checkpoint or
        savepoint elsewhere is linked into the live store first. ``explicit``: the user
        chose the point (``execution.savepoint.path``), which abandons the job's own
        checkpoints too."""
        record = point.record
        if point.store.root_dir != self.store.root_dir:
            _discard(os.path.join(self.root, "state"))
            _link_files(point.store, _needed_files(point.store, record), self.root)
            if explicit:
                # A new line of batches starts: checkpoints of the abandoned one must
                # not be mistaken for restore points of this one.
                for checkpoint_id in self.checkpoint_ids():
                    path = self.checkpoint_path(checkpoint_id)
                    if not _same_path(path, point.store.root_dir):
                        _discard(path)
        else:
            for uid in self.store.operator_ids():
                self.store.discard_after(uid, record.batch_id)
        for batch_id in self.committed_batches():
            if batch_id != record.batch_id:
                self._remove_commit(batch_id)
        self.commit(record)

    def finished_while_clearing(self) -> bool:
        """Whether a run of the job finished and crashed while ``clear`` deleted its
        directory: the job has nothing left to do (``clear`` again to end it)."""
        return storage.exists(self._finished_mark)

    def clear(self) -> None:
        """Deletes everything of the job (it finished): log, state and checkpoints.

        A ``_finished`` mark, written first and deleted last, tells a run that starts
        after a crash midway that the job had finished (``finished_while_clearing``):
        without it, that run would find an older checkpoint, or nothing, and write again
        what the job had written."""
        if storage.exists(self.root):
            write_checked(self._finished_mark, {"finished": True})
        _discard(self._metadata_dir)  # from here on, nothing is restorable
        try:
            names = storage.listdir(self.root)
        except FileNotFoundError:
            return
        for name in names:  # state, checkpoints, and what crashed writers left
            if name == "state" or _CHECKPOINT_NAME.match(name) or is_temporary_name(name):
                storage.rmtree(os.path.join(self.root, name))
        try:
            storage.remove(self._finished_mark)
        except FileNotFoundError:
            pass
        if not storage.is_url(self.root):
            try:
                os.rmdir(self.root)
            except OSError:
                pass


def _same_path(a: str, b: str) -> bool:
    if storage.is_url(a) or storage.is_url(b):
        return a.rstrip("/") == b.rstrip("/")
    return os.path.abspath(a) == os.path.abspath(b)


def _discard(path: str) -> None:
    """Deletes a directory so that a crash midway leaves no part of it under its name:
    it is renamed to a temporary name first (which ``clear`` removes). On an object
    store a checkpoint's ``_metadata`` is deleted first: what a crash leaves is no
    checkpoint (and the next export of that id, or ``clear``, deletes it)."""
    if storage.is_url(path):
        try:
            storage.remove(os.path.join(path, METADATA_FILE))
        except FileNotFoundError:
            pass
        storage.rmtree(path)
        return
    doomed = temporary_path(path)
    try:
        os.rename(path, doomed)
    except FileNotFoundError:
        return
    storage.rmtree(doomed)
