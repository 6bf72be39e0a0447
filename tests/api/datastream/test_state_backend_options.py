"""EmbeddedRocksDBStateBackend's options and PredefinedOptions. Expected values observed on
PyFlink 2.3.0 (where ``get_db_storage_paths`` fails before any path is set; here it is
empty)."""
import pytest

from api.datastream import EmbeddedRocksDBStateBackend, PredefinedOptions
from tests.conftest import make_env


def test_options_read_back():
    backend = EmbeddedRocksDBStateBackend()
    assert (backend.get_db_storage_paths(), backend.get_predefined_options(),
            backend.get_options()) == ([], PredefinedOptions.DEFAULT, None)
    backend.set_db_storage_paths("/tmp/a", "file:///tmp/b")
    assert backend.get_db_storage_paths() == ["/tmp/a", "/tmp/b"]
    backend.set_db_storage_paths()
    assert backend.get_db_storage_paths() == []
    backend.set_predefined_options(PredefinedOptions.FLASH_SSD_OPTIMIZED)
    assert backend.get_predefined_options() is PredefinedOptions.FLASH_SSD_OPTIMIZED
    assert [o.value for o in PredefinedOptions] == [0, 1, 2, 3]


@pytest.mark.parametrize("path, message", [("rel/dir", "Relative paths are not supported"),
                                           ("hdfs://x/y", "Path hdfs://x/y has a non-local "
                                                          "scheme")])
def test_storage_paths_must_be_local_and_absolute(path, message):
    with pytest.raises(ValueError, match=message):
        EmbeddedRocksDBStateBackend().set_db_storage_paths(path)


def test_a_job_keeps_its_rocksdb_files_under_the_storage_path(tmp_path):
    backend = EmbeddedRocksDBStateBackend()
    backend.set_db_storage_paths(str(tmp_path))
    assert backend.engine_options()["local_dir"] == str(tmp_path)
    env = make_env("local")
    env.set_state_backend(backend)
    stream = env.from_collection([("a", 1), ("b", 2), ("a", 3)]).key_by(lambda r: r[0]).sum(1)
    assert stream.execute_and_collect(limit=10) == [("a", 1), ("b", 2), ("a", 4)]
