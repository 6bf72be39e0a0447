import os

import pytest

from checkpoint.files import CorruptFileError, is_temporary_name, read_checked, write_checked


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
