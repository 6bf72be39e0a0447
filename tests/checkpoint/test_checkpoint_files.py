import os

import pytest

from checkpoint.files import CorruptFileError, FramedFile, read_checked, write_checked, \
    write_framed
from checkpoint.storage import is_temporary_name


def test_round_trip_and_overwrite(tmp_path):
    path = str(tmp_path / "1.changelog")
    write_checked(path, {"a": [1, 2]})
    write_checked(path, {"b": b"x"})
    assert read_checked(path) == {"b": b"x"}
    assert os.listdir(tmp_path) == ["1.changelog"]


@pytest.mark.parametrize("damage, reason", [
    (lambda data: data[:5], "shorter than the header"),
    (lambda data: b"NOTMAGIC" + data[8:], "bad magic"),
    (lambda data: data[:-1], "header says"),
    (lambda data: data[:-1] + bytes([data[-1] ^ 1]), "checksum mismatch"),
])
def test_damage_is_reported_with_the_file_name(tmp_path, damage, reason):
    path = str(tmp_path / "3.snapshot")
    write_checked(path, list(range(100)))
    with open(path, "rb") as f:
        data = f.read()
    with open(path, "wb") as f:
        f.write(damage(data))
    with pytest.raises(CorruptFileError, match=reason) as error:
        read_checked(path)
    assert str(error.value).startswith(f"corrupt checkpoint file {path}: ")


def test_a_failed_write_leaves_no_temporary_file(tmp_path):
    path = str(tmp_path / "1.changelog")
    write_checked(path, "old")
    with pytest.raises(Exception):
        write_checked(path, lambda: None)  # lambdas cannot be pickled
    assert read_checked(path) == "old"
    assert os.listdir(tmp_path) == ["1.changelog"]


def test_temporary_names_are_recognised(tmp_path, monkeypatch):
    seen = []
    real_replace = os.replace
    monkeypatch.setattr(os, "replace", lambda src, dst: (seen.append(src), real_replace(src, dst)))
    write_checked(str(tmp_path / "5.snapshot"), 1)
    assert is_temporary_name(os.path.basename(seen[0]))
    assert not is_temporary_name("5.snapshot")


# -- framed files ----------------------------------------------------------------

FRAMES = {7: b"seven" * 100, 0: b"", 3: bytes(range(256)) * 40}


def write_sample(path):
    write_framed(path, {"meta": "m"}, iter(FRAMES.items()))


def test_framed_round_trip(tmp_path):
    path = str(tmp_path / "1.snapshot")
    write_sample(path)
    with FramedFile(path) as framed:
        assert framed.header == {"meta": "m"}
        assert framed.frame_ids() == [0, 3, 7]
        assert {i: framed.read(i) for i in framed.frame_ids()} == FRAMES
        framed.verify()
        with pytest.raises(KeyError):
            framed.read(5)
    write_framed(path, None, [])
    with FramedFile(path) as framed:
        assert framed.header is None and framed.frame_ids() == []
        framed.verify()


def test_framed_write_replaces_atomically(tmp_path):
    path = str(tmp_path / "1.snapshot")
    write_sample(path)

    def failing():
        yield 1, b"new"
        raise RuntimeError("the state could not be read")

    with pytest.raises(RuntimeError, match="could not be read"):
        write_framed(path, "new", failing())
    with pytest.raises(ValueError, match="frame 1 is written twice"):
        write_framed(path, "new", [(1, b"a"), (1, b"b")])
    with FramedFile(path) as framed:
        assert framed.header == {"meta": "m"} and framed.read(7) == FRAMES[7]
    assert os.listdir(tmp_path) == ["1.snapshot"]


def damaged_copy(path, damage):
    with open(path, "rb") as f:
        data = bytearray(f.read())
    damage(data)
    with open(path, "wb") as f:
        f.write(data)


def flip(position):
    def damage(data):
        data[position] ^= 1
    return damage


def frame_data_position(path, frame_id):
    """Where the data of a frame starts (found by its content, not by the reader)."""
    with open(path, "rb") as f:
        return f.read().index(FRAMES[frame_id])


@pytest.mark.parametrize("cut", [0, 5, 30, 200, -1, -12, -20])
def test_a_truncated_framed_file_is_refused_on_opening(tmp_path, cut):
    path = str(tmp_path / "2.snapshot")
    write_sample(path)
    damaged_copy(path, lambda data: data.__delitem__(slice(cut, None)))
    with pytest.raises(CorruptFileError) as error:
        FramedFile(path)
    assert str(error.value).startswith(f"corrupt checkpoint file {path}: ")


def test_a_damaged_frame_fails_when_read_and_verified_others_still_read(tmp_path):
    path = str(tmp_path / "2.snapshot")
    write_sample(path)
    damaged_copy(path, flip(frame_data_position(path, 3) + 1000))
    with FramedFile(path) as framed:
        assert framed.read(7) == FRAMES[7]
        with pytest.raises(CorruptFileError, match="frame 3: checksum mismatch"):
            framed.read(3)
        with pytest.raises(CorruptFileError, match="frame 3: checksum mismatch"):
            framed.verify()


def test_a_damaged_frame_header_is_detected(tmp_path):
    path = str(tmp_path / "2.snapshot")
    write_sample(path)
    damaged_copy(path, flip(frame_data_position(path, 7) - 16))  # the frame's id
    with FramedFile(path) as framed:
        with pytest.raises(CorruptFileError, match="frame 7: altered frame header"):
            framed.read(7)


@pytest.mark.parametrize("where", ["header", "index"])
def test_a_damaged_header_or_index_is_refused_on_opening(tmp_path, where):
    path = str(tmp_path / "2.snapshot")
    write_sample(path)
    # the header object's pickle starts after 20 bytes; the index ends 20 bytes before
    # the end of the file (trailer: offset, magic, crc)
    damaged_copy(path, flip(22 if where == "header" else -30))
    with pytest.raises(CorruptFileError, match="checksum mismatch in the header or index"):
        FramedFile(path)


def test_other_files_are_not_framed_files(tmp_path):
    path = str(tmp_path / "2.snapshot")
    write_checked(path, {"groups": {}, "meta": "m" * 100})  # the unframed format
    with pytest.raises(CorruptFileError, match="not a framed checkpoint file"):
        FramedFile(path)
