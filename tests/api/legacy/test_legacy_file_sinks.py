"""write_as_text with WriteMode, and write_as_csv (the older Python streaming guide, "Data
Sinks": "write_as_text() - Writes elements line-wise as Strings. The Strings are obtained
by calling the str() method of each element"; "write DataStream to a file and overwrite
the file if it exists: write_as_text(path, WriteMode.OVERWRITE)"; tuples are written in
the text formatting "(a, b, c)", rather than as CSV lines)."""
import os

import pytest

from api.common import Types
from api.datastream import WriteMode

from tests.conftest import make_env


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def test_write_as_text_and_its_write_modes(tmp_path, env_factory):
    path = tmp_path / "result.txt"
    env = env_factory(parallelism=1, micro_batch_size=2)   # several batches append
    values = env.from_collection([("a", 1), ("b", 2), ("c", 3)])
    values.write_as_text(f"file://{path}")
    env.execute()
    assert read(path) == "('a', 1)\n('b', 2)\n('c', 3)\n"

    # NO_OVERWRITE (the default): an existing file fails the job as it starts
    env.from_collection(["x"]).write_as_text(str(path))
    with pytest.raises(FileExistsError, match="NO_OVERWRITE"):
        env.execute()
    assert read(path) == "('a', 1)\n('b', 2)\n('c', 3)\n"

    env.from_collection(["x", "y"]).write_as_text(str(path), WriteMode.OVERWRITE)
    env.execute()
    assert read(path) == "x\ny\n"


def test_write_as_text_at_parallelism_above_one_writes_a_file_per_subtask(tmp_path):
    path = tmp_path / "out"
    env = make_env("local", parallelism=2)
    env.from_collection(list(range(10))).map(lambda v: v, Types.INT()).write_as_text(str(path))
    env.execute()
    assert sorted(os.listdir(path)) == ["1", "2"]
    lines = [line for name in ("1", "2") for line in read(path / name).splitlines()]
    assert sorted(lines, key=int) == [str(v) for v in range(10)]


def test_write_as_csv(tmp_path):
    env = make_env("local")
    rows = env.from_collection([("a", 1, 1.5), ("b c", 2, 2.0)],
                               type_info=Types.TUPLE([Types.STRING(), Types.INT(), Types.DOUBLE()]))
    rows.write_as_csv(str(tmp_path / "plain.csv"))
    rows.write_as_csv(str(tmp_path / "custom.csv"), WriteMode.OVERWRITE, row_delimiter=";",
                      field_delimiter="|")
    env.execute()
    assert read(tmp_path / "plain.csv") == "a,1,1.5\nb c,2,2.0\n"   # no quoting
    assert read(tmp_path / "custom.csv") == "a|1|1.5;b c|2|2.0;"
    with pytest.raises(TypeError, match="streams of tuples typed with Types.TUPLE"):
        env.from_collection([("a", 1)]).write_as_csv(str(tmp_path / "untyped.csv"))
