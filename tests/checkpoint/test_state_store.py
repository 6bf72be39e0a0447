import os
import tempfile
import tracemalloc

import pytest

from checkpoint.files import CorruptFileError
from checkpoint.state_store import AmbiguousStateFilesError, IncrementalSnapshotError, StateStore
from core.codec import deserialize, serialize_value

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
    with pytest.raises(ValueError, match="key group 12 is outside the range 0-9 written by operator"):
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


# -- streaming files -------------------------------------------------------------

UNPICKLED = []


class Recorded:
    """Data that records each unpickling of itself."""

    def __init__(self, name):
        self.name = name
        self.label = f"group {name} data"

    def __setstate__(self, state):
        self.__dict__.update(state)
        UNPICKLED.append(self.name)


def test_an_iterator_of_groups_is_written_and_read_back_in_group_order(store):
    written = store.write("op", (0, 9), 3, "changelog",
                          ((g, [g] * g) for g in (9, 2, 5)), meta={"m": 1})
    assert list(store.iter_groups(written)) == [(2, [2, 2]), (5, [5] * 5), (9, [9] * 9)]
    assert store.read_meta(written) == {"m": 1}
    assert store.read(written).groups == {2: [2, 2], 5: [5] * 5, 9: [9] * 9}


def test_a_reader_of_some_key_groups_reads_and_unpickles_only_those(store):
    written = store.write("op", (0, 9), 0, "snapshot", {g: Recorded(g) for g in range(10)},
                          encode=serialize_value)
    with open(written.path, "r+b") as f:  # damage group 8's data: never read below
        f.seek(f.read().index(b"group 8 data"))
        f.write(b"GROUP")
    UNPICKLED.clear()
    assert [(g, d.name) for g, d in store.iter_groups(written, (4, 5), deserialize)] == [
        (4, 4), (5, 5)]
    assert UNPICKLED == [4, 5]
    with pytest.raises(CorruptFileError, match="frame 8: checksum mismatch"):
        store.read(written, decode=deserialize)


def test_by_default_groups_are_data_and_nothing_is_unpickled(store):
    with pytest.raises(TypeError, match="Recorded is not data"):
        store.write("op", (0, 9), 0, "snapshot", {1: Recorded(1)})
    written = store.write("op", (0, 9), 0, "snapshot", {1: Recorded(1)}, encode=serialize_value)
    UNPICKLED.clear()
    with pytest.raises(CorruptFileError, match=f"{written.path}: cannot read key group 1: "
                                               "the stored bytes hold a pickled object"):
        list(store.iter_groups(written))
    assert UNPICKLED == []


def test_writing_holds_one_key_group_at_a_time(store):
    group_bytes = 1 << 20

    def groups():
        for g in range(32):
            yield g, bytes([g]) * group_bytes

    tracemalloc.start()
    try:
        written = store.write("op", (0, 31), 0, "snapshot", groups())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # One group, its encoding and msgpack's buffer at a time; the 32 groups: 32 MiB.
    assert peak < 8 * group_bytes
    assert os.path.getsize(written.path) > 32 * group_bytes
    assert [g for g, _ in store.iter_groups(written)] == list(range(32))


def test_a_group_outside_the_range_from_an_iterator_leaves_no_file(store):
    with pytest.raises(ValueError, match="key group 12 is outside the range 0-9"):
        store.write("op", (0, 9), 0, "snapshot", iter([(1, "a"), (12, "b")]))
    assert store.list_files("op") == []
    assert os.listdir(os.path.join(store.root_dir, "state", "op", "0-9")) == []


def test_verify_checks_every_group_and_truncation(store):
    written = store.write("op", (0, 9), 0, "snapshot", {g: "x" * 1000 for g in range(10)})
    store.verify(written)
    with open(written.path, "rb") as f:
        data = f.read()
    position = data.rindex(b"x" * 1000) + 10  # inside the last group's data
    with open(written.path, "wb") as f:
        f.write(data[:position] + b"y" + data[position + 1:])
    with pytest.raises(CorruptFileError, match="frame 9: checksum mismatch"):
        store.verify(written)
    assert [g for g, _ in store.iter_groups(written, (0, 8))] == list(range(9))
    with open(written.path, "wb") as f:
        f.write(data[:-1])
    with pytest.raises(CorruptFileError, match="truncated"):
        store.verify(written)
    with pytest.raises(CorruptFileError, match="truncated"):
        store.read_meta(written)


def test_verify_of_an_incremental_manifest_checks_its_shared_files(store, tmp_path):
    sst = tmp_path / "000009.sst"
    sst.write_bytes(b"sst")
    store.share_file("op", (0, 9), str(sst), "a-000009.sst")
    written = store.write_incremental("op", (0, 9), 0, {"000009.sst": "a-000009.sst"})
    store.verify(written)
    with pytest.raises(IncrementalSnapshotError):
        next(store.iter_groups(written))
    os.remove(os.path.join(store.shared_dir("op", (0, 9)), "a-000009.sst"))
    with pytest.raises(CorruptFileError, match="shared file .*a-000009.sst is missing"):
        store.verify(written)
    with open(written.path, "r+b") as f:
        f.seek(-2, os.SEEK_END)
        f.write(b"??")
    with pytest.raises(CorruptFileError, match="checksum mismatch"):
        store.verify(written)
