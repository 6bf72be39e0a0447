import os
import tempfile

import pytest

from checkpoint.state_store import AmbiguousStateFilesError, StateStore

FAST_TMP = "/dev/shm" if os.path.isdir("/dev/shm") else None


@pytest.fixture
def store():
    with tempfile.TemporaryDirectory(dir=FAST_TMP) as root:
        yield StateStore(root)


def summary(files):
    return [(f.key_group_range, f.version, f.kind) for f in files]


def test_layout(store):
    written = store.write("my op/1", (0, 63), 7, "changelog", {3: "data"})
    assert written.path == os.path.join(store.root_dir, "state", "my%20op%2F1", "0-63", "7.changelog")
    assert store.operator_ids() == ["my op/1"]
    assert summary(store.list_files("my op/1")) == [((0, 63), 7, "changelog")]


def test_dot_operator_ids_stay_inside_the_state_directory(store):
    store.write("..", (0, 1), 0, "snapshot", {})
    assert store.operator_ids() == [".."]
    assert os.listdir(os.path.join(store.root_dir, "state")) == ["%2E%2E"]


def test_read_keeps_only_the_requested_key_groups(store):
    written = store.write("op", (0, 9), 0, "snapshot", {g: f"group {g}" for g in range(10)},
                          meta={"m": 1})
    content = store.read(written, (4, 5))
    assert content.groups == {4: "group 4", 5: "group 5"} and content.meta == {"m": 1}
    assert len(store.read(written).groups) == 10


def test_groups_outside_the_range_are_refused(store):
    with pytest.raises(ValueError, match=r"key group 12 is outside the range 0-9 written by operator .op."):
        store.write("op", (0, 9), 0, "changelog", {12: "x"})


def test_a_version_never_has_both_kinds(store):
    store.write("op", (0, 9), 4, "changelog", {})
    store.write("op", (0, 9), 4, "snapshot", {})
    assert summary(store.list_files("op")) == [((0, 9), 4, "snapshot")]


def test_files_to_restore_start_at_the_newest_snapshot_of_every_key_group(store):
    store.write("op", (0, 9), 0, "snapshot", {})
    store.write("op", (0, 9), 1, "changelog", {})
    # restarted at parallelism 2
    store.write("op", (0, 4), 2, "snapshot", {})
    store.write("op", (5, 9), 2, "changelog", {})
    store.write("op", (0, 4), 3, "changelog", {})
    store.write("op", (5, 9), 3, "changelog", {})
    assert summary(store.files_to_restore("op", (0, 4), 3)) == [
        ((0, 4), 2, "snapshot"), ((0, 4), 3, "changelog")]
    assert summary(store.files_to_restore("op", (3, 6), 3)) == [
        ((0, 9), 0, "snapshot"), ((0, 9), 1, "changelog"), ((0, 4), 2, "snapshot"),
        ((5, 9), 2, "changelog"), ((0, 4), 3, "changelog"), ((5, 9), 3, "changelog")]
    assert summary(store.files_to_restore("op", (5, 9), 1)) == [
        ((0, 9), 0, "snapshot"), ((0, 9), 1, "changelog")]
    assert store.files_to_restore("op", (0, 9), -1) == []


def test_overlapping_files_of_one_version_are_refused_until_discarded(store):
    store.write("op", (0, 9), 0, "snapshot", {})
    store.write("op", (0, 9), 1, "changelog", {})  # an attempt that never committed
    store.write("op", (0, 4), 1, "changelog", {})  # the retry, at another parallelism
    with pytest.raises(AmbiguousStateFilesError, match="discard_after"):
        store.files_to_restore("op", (0, 9), 1)
    store.discard_after("op", 0)
    assert summary(store.list_files("op")) == [((0, 9), 0, "snapshot")]


def test_prune_keeps_what_the_previous_version_needs(store):
    for version, kind in enumerate(["snapshot", "changelog", "snapshot", "changelog", "snapshot"]):
        store.write("op", (0, 9), version, kind, {})
    store.write("op", (0, 4), 0, "changelog", {})  # a sub-range, superseded
    store.write("op", (0, 15), 0, "changelog", {})  # a wider range: other groups may need it
    store.prune("op", (0, 9), 4)
    assert summary(store.list_files("op")) == [
        ((0, 15), 0, "changelog"), ((0, 9), 2, "snapshot"), ((0, 9), 3, "changelog"),
        ((0, 9), 4, "snapshot")]


def test_unfinished_and_foreign_files_are_ignored(store):
    written = store.write("op", (0, 9), 0, "snapshot", {})
    directory = os.path.dirname(written.path)
    for name in (".tmp-123-1.changelog", "notes.txt", "x.snapshot"):
        open(os.path.join(directory, name), "w").close()
    os.mkdir(os.path.join(os.path.dirname(directory), "misc"))
    assert summary(store.list_files("op")) == [((0, 9), 0, "snapshot")]
    assert store.list_files("missing") == [] and StateStore("/nonexistent").operator_ids() == []
