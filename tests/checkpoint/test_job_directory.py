"""The job directory: metadata log, checkpoints, restore points and their damage."""
import logging
import os

import pytest

from checkpoint.files import CorruptFileError, write_checked
from checkpoint.job_directory import (JobDirectory, NoValidRestorePointError, export_checkpoint,
                                      read_restore_point)
from checkpoint.metadata import CommitRecord, IncompatibleCheckpointError, OperatorInfo
from engine.driver.state_reader import read_keyed_state
from statebackends.hashmap import HashMapKeyedStateBackend
from core.state_spec import StateKind, StateSpec

MAX_PARALLELISM = 8
COUNT = StateSpec("count", StateKind.VALUE)


def _record(batch_id: int, offset: int = 0) -> CommitRecord:
    return CommitRecord("job", batch_id, "hashmap",
                        {"counter": OperatorInfo("Counter", 1, MAX_PARALLELISM)},
                        {"source": {"0": offset}}, watermark=batch_id)


def _run_batches(directory: JobDirectory, counts_per_batch, checkpoint_every=None,
                 num_retained=1):
    """Writes and commits one state version per batch: key -> count so far."""
    backend = HashMapKeyedStateBackend("counter", (0, MAX_PARALLELISM - 1), MAX_PARALLELISM,
                                       snapshot_interval=3)
    state = backend.state(COUNT)
    for batch_id, keys in enumerate(counts_per_batch):
        for key in keys:
            backend.set_current_key(key)
            state.update((state.value() or 0) + 1)
        backend.write_version(directory.store, batch_id)
        directory.commit(_record(batch_id, offset=batch_id + 1))
        if checkpoint_every and batch_id % checkpoint_every == checkpoint_every - 1:
            directory.write_checkpoint(batch_id // checkpoint_every + 1, _record(batch_id),
                                       num_retained)


def _counts(path):
    return {row.key: row.value for row in read_keyed_state(path, "counter", "count")}


def test_newest_commit_is_the_restore_point(tmp_path):
    directory = JobDirectory(str(tmp_path / "job"))
    assert directory.find_restore_point() is None
    _run_batches(directory, [["a"], ["a", "b"], ["b"], ["c"], ["a"]])
    point = directory.find_restore_point()
    assert point.record.batch_id == 4
    assert point.record.source_offsets == {"source": {"0": 5}}
    assert _counts(directory.root) == {"a": 3, "b": 2, "c": 1}


def test_a_corrupt_newest_commit_falls_back_with_a_warning_naming_it(tmp_path, caplog):
    directory = JobDirectory(str(tmp_path / "job"))
    _run_batches(directory, [["a"], ["a", "b"], ["b"]])
    newest = os.path.join(directory.root, "metadata", "2")
    with open(newest, "r+b") as f:
        f.seek(30)
        f.write(b"garbage")
    with caplog.at_level(logging.WARNING):
        point = directory.find_restore_point()
    assert point.record.batch_id == 1
    assert newest in caplog.text


def test_corrupt_state_of_the_newest_checkpoint_uses_the_previous_one(tmp_path, caplog):
    directory = JobDirectory(str(tmp_path / "job"))
    _run_batches(directory, [["a"], ["a"], ["b"], ["b"]], checkpoint_every=2, num_retained=2)
    assert directory.checkpoint_ids() == [2, 1]
    # The live state and both commits are lost, and chk-2's newest state file is damaged
    # (overwriting a hard link's content would damage all links: replace it instead).
    for batch_id in directory.committed_batches():
        os.remove(os.path.join(directory.root, "metadata", str(batch_id)))
    chk2 = read_restore_point(directory.checkpoint_path(2))
    damaged = [f for f in chk2.store.list_files("counter") if f.version == 3][0]
    os.remove(damaged.path)
    with open(damaged.path, "wb") as f:
        f.write(b"not a state file")
    with caplog.at_level(logging.WARNING):
        point = directory.find_restore_point()
    assert point.path.startswith(directory.checkpoint_path(1))
    assert "chk-2" in caplog.text
    directory.restore(point)
    assert directory.committed_batches() == [1]
    assert _counts(directory.root) == {"a": 2}


def test_an_unfinished_checkpoint_directory_is_invisible(tmp_path):
    directory = JobDirectory(str(tmp_path / "job"))
    _run_batches(directory, [["a"], ["b"]], checkpoint_every=1)
    os.makedirs(directory.checkpoint_path(7) + "/state")  # no _metadata: never completed
    assert directory.checkpoint_ids() == [2]


def test_retention_keeps_the_newest_checkpoints_and_they_stay_readable(tmp_path):
    directory = JobDirectory(str(tmp_path / "job"))
    _run_batches(directory, [["a"]] * 8, checkpoint_every=2, num_retained=2)
    assert directory.checkpoint_ids() == [4, 3]
    assert _counts(directory.checkpoint_path(3)) == {"a": 6}
    assert _counts(directory.checkpoint_path(4)) == {"a": 8}


def test_a_savepoint_survives_the_job_directory_and_restores_elsewhere(tmp_path):
    directory = JobDirectory(str(tmp_path / "job"))
    _run_batches(directory, [["a"], ["a", "b"], ["c"], ["c"]])
    point = directory.find_restore_point()
    savepoint = export_checkpoint(directory.store, point.record, str(tmp_path / "sp" / "s1"))
    directory.clear()
    assert not os.path.exists(directory.root)
    other = JobDirectory(str(tmp_path / "other"))
    other.restore(read_restore_point(savepoint))
    assert other.committed_batches() == [3]
    assert _counts(other.root) == {"a": 2, "b": 1, "c": 2}


def test_restore_rejects_a_directory_that_is_not_a_checkpoint(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(IncompatibleCheckpointError, match="no _metadata"):
        read_restore_point(str(tmp_path / "empty"))
    write_checked(str(tmp_path / "empty" / "_metadata"), {"not": "a record"})
    with pytest.raises(IncompatibleCheckpointError, match="not checkpoint metadata"):
        read_restore_point(str(tmp_path / "empty"))


def test_compatibility_check_names_the_problem():
    record = _record(3)
    ok = {"counter": OperatorInfo("Counter", 4, MAX_PARALLELISM)}
    record.check_restorable_by("p", ok, {"source": ["0"]}, False)  # parallelism may change
    with pytest.raises(IncompatibleCheckpointError, match="'counter'.*does not have"):
        record.check_restorable_by("p", {}, {"source": ["0"]}, False)
    record.check_restorable_by("p", {}, {"source": ["0"]}, True)
    with pytest.raises(IncompatibleCheckpointError, match="max parallelism 8 and now has 16"):
        record.check_restorable_by("p", {"counter": OperatorInfo("C", 1, 16)}, {"source": ["0"]},
                                   False)
    with pytest.raises(IncompatibleCheckpointError, match="1 splits .* now has 2"):
        record.check_restorable_by("p", ok, {"source": ["0", "1"]}, False)


def test_clear_removes_checkpoints_a_crash_left_half_deleted(tmp_path):
    directory = JobDirectory(str(tmp_path / "job"))
    _run_batches(directory, [["a"], ["b"]], checkpoint_every=1, num_retained=2)
    # a crash while an old checkpoint was deleted file by file: its _metadata went first
    os.remove(os.path.join(directory.checkpoint_path(1), "_metadata"))
    assert directory.checkpoint_ids() == [2]
    directory.clear()
    assert not os.path.exists(directory.root)


@pytest.mark.parametrize("change, message", [
    (lambda d: d["operators"]["counter"].__setitem__(2, 2 ** 40),
     r"operators\['counter'\].max_parallelism is 1099511627776, not a whole number from 1 "
     "to 32768"),
    (lambda d: d["operators"]["counter"].__setitem__(1, 0),
     r"operators\['counter'\]\.parallelism is 0"),
    (lambda d: d.__setitem__("watermark", 2 ** 70), "watermark is 1180591620717411303424"),
    (lambda d: d.__setitem__("batch_id", -5), "batch_id is -5"),
    (lambda d: d.__setitem__("batch_id", True), "batch_id is True"),
    (lambda d: d["source_offsets"]["source"].__setitem__("0", {"a": 1}),
     r"source_offsets\['source'\]\['0'\] is \{'a': 1\}, not a position"),
    (lambda d: d.__setitem__("source_offsets", {"source": [1]}),
     r"source_offsets\['source'\] is \[1\], not a map"),
    (lambda d: d.__setitem__("job_name", 7), "job_name is 7, not a string"),
])
def test_absurd_numbers_in_stored_metadata_are_errors_naming_file_and_field(tmp_path, change,
                                                                          message):
    data = _record(3).to_data()
    change(data)
    path = tmp_path / "_metadata"
    write_checked(str(path), data)
    with pytest.raises(IncompatibleCheckpointError, match=f"{path} is not checkpoint "
                                                          f"metadata of this engine: {message}"):
        read_restore_point(str(tmp_path))


def test_every_restore_point_damaged_is_an_error_naming_the_directory(tmp_path, caplog):
    directory = JobDirectory(str(tmp_path / "job"))
    _run_batches(directory, [["a"], ["b"], ["c"]], checkpoint_every=2)
    for path in [*(tmp_path / "job" / "metadata").iterdir(), *(tmp_path / "job").glob(
            "chk-*/_metadata")]:
        path.write_bytes(path.read_bytes()[:-1])
    with pytest.raises(NoValidRestorePointError, match=f"No restore point in {directory.root} "
                                                       r"can be restored \(4 found"):
        directory.find_restore_point()


def test_only_ascii_digits_name_batches_and_checkpoints(tmp_path):
    directory = JobDirectory(str(tmp_path / "job"))
    _run_batches(directory, [["a"], ["b"]], checkpoint_every=1)
    for stray in ["²", "٣", "1²"]:
        (tmp_path / "job" / "metadata" / stray).write_bytes(b"x")
        (tmp_path / "job" / f"chk-{stray}").mkdir()
        (tmp_path / "job" / f"chk-{stray}" / "_metadata").write_bytes(b"x")
    assert directory.committed_batches() == [1, 0]
    assert directory.checkpoint_ids() == [2]
    assert directory.find_restore_point().record.batch_id == 1


def test_a_fifo_in_place_of_a_stored_file_is_damage_not_a_hang(tmp_path, caplog):
    # Opened for reading, a FIFO would wait forever for a writer.
    directory = JobDirectory(str(tmp_path / "job"))
    _run_batches(directory, [["a"], ["a", "b"], ["b"]])
    newest = os.path.join(directory.root, "metadata", "2")
    os.remove(newest)
    os.mkfifo(newest)
    with caplog.at_level(logging.WARNING):
        point = directory.find_restore_point()
    assert point.record.batch_id == 1
    assert f"{newest}: not a regular file (prw" in caplog.text
    state_file = [f for f in point.store.list_files("counter") if f.version == 1][0]
    os.remove(state_file.path)
    os.mkfifo(state_file.path)
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        point = directory.find_restore_point()
    assert point.record.batch_id == 0
    assert f"{state_file.path}: not a regular file (prw" in caplog.text
    with pytest.raises(CorruptFileError, match=f"{state_file.path}: not a regular file"):
        point.store.read_meta(state_file)


def test_a_crash_while_clearing_leaves_the_job_marked_finished(tmp_path, monkeypatch):
    directory = JobDirectory(str(tmp_path / "job"))
    _run_batches(directory, [["a"], ["b"], ["c"]], checkpoint_every=1, num_retained=2)
    assert not directory.finished_while_clearing()

    def crash(path):
        raise KeyboardInterrupt("killed")
    with monkeypatch.context() as patch:  # killed after the log went, checkpoints still there
        patch.setattr("checkpoint.job_directory.storage.rmtree", crash)
        with pytest.raises(KeyboardInterrupt):
            directory.clear()
    again = JobDirectory(directory.root)
    assert sorted(again.checkpoint_ids()) == [2, 3]  # restorable, yet the job had finished
    assert again.finished_while_clearing()
    again.clear()
    assert not os.path.exists(directory.root)
    assert not JobDirectory(directory.root).finished_while_clearing()
