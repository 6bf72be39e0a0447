"""Python dependencies shipped with a job, as PyFlink's add_python_file,
add_python_archive, register_cached_file, set_python_requirements and
set_python_executable (and the python.* options) configure them.

The modules live in pytest's tmp_path, which is not on the driver's sys.path (nor on the
PYTHONPATH the Spark workers were started with): they reach the tasks only through the
job's dependencies. How PyFlink 2.3.0 lays the files out was observed on it: a .py file's
module, a directory's contents and a zip's contents become importable (the directory's
name does not); the last add_python_file comes first on the path.
"""
import os
import sys
import zipfile

import pytest

from api.common import Configuration
from api.datastream.job_settings import job_settings
from engine.executor.python_dependencies import PythonDependencies, staging_directory

from tests.conftest import make_env


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


def importable(name):
    try:
        __import__(name)
        return True
    except ImportError:
        return False


def test_a_module_outside_the_project_reaches_the_spark_workers(spark, tmp_path):
    module = write(tmp_path / "mods" / "shipped_udfs.py",
                   "def triple(x):\n    return 3 * x\n")
    assert not importable("shipped_udfs")

    def use_module(x):
        import shipped_udfs
        from pyspark import SparkFiles
        return (shipped_udfs.triple(x),
                shipped_udfs.__file__.startswith(SparkFiles.getRootDirectory()),
                os.path.dirname(module) in sys.path)

    env = make_env("spark", parallelism=2)
    env.add_python_file(module)
    got = sorted(env.from_collection([1, 2, 3]).map(use_module).execute_and_collect())
    # imported from the files Spark shipped, not from where the driver has it
    assert got == [(3, True, False), (6, True, False), (9, True, False)]
    assert not importable("shipped_udfs")


def test_functions_defined_in_a_shipped_module_are_loaded_after_it_arrives(spark, tmp_path):
    write(tmp_path / "mods" / "shipped_functions.py",
          "from api.datastream import MapFunction\n"
          "class Label(MapFunction):\n"
          "    def map(self, value):\n"
          "        return 'label-%s' % value\n")
    # The driver imports the module to build the job, so the function is pickled by
    # reference: a worker can only unpickle it once the module is importable there.
    sys.path.insert(0, str(tmp_path / "mods"))
    try:
        import shipped_functions
        env = make_env("spark", parallelism=2)
        stream = env.from_collection([1, 2]).map(shipped_functions.Label())
    finally:
        sys.path.remove(str(tmp_path / "mods"))
        del sys.modules["shipped_functions"]
    env.add_python_file(str(tmp_path / "mods" / "shipped_functions.py"))
    assert sorted(stream.execute_and_collect()) == ["label-1", "label-2"]


def test_python_files_layout_as_in_pyflink(env_factory, tmp_path):
    package_dir = tmp_path / "dirdep" / "layout_pkg"
    write(package_dir / "__init__.py", "X = 'pkg'\n")
    write(package_dir / "layout_inner.py", "Y = 'inner'\n")
    write(tmp_path / "plaindir" / "layout_plain.py", "Z = 'plain'\n")
    with zipfile.ZipFile(tmp_path / "zipped.zip", "w") as z:
        z.writestr("layout_zipped.py", "W = 'zipped'\n")

    def probe(name):
        try:
            module = __import__(name)
        except ImportError:
            return name, None
        return name, [getattr(module, v) for v in "XYZW" if hasattr(module, v)][0]

    config_files = f"{package_dir},{tmp_path / 'plaindir'}"
    env = env_factory(**{"python.files": config_files})
    env.add_python_file(str(tmp_path / "zipped.zip"))
    names = ["layout_pkg", "layout_inner", "layout_plain", "plaindir", "layout_zipped"]
    got = dict(env.from_collection(names).map(probe).execute_and_collect())
    assert got == {"layout_pkg": None, "layout_inner": "inner", "layout_plain": "plain",
                   "plaindir": None, "layout_zipped": "zipped"}


def test_the_last_added_python_file_comes_first(env_factory, tmp_path):
    first = write(tmp_path / "a" / "order_mod.py", "WHO = 'first'\n")
    second = write(tmp_path / "b" / "order_mod.py", "WHO = 'second'\n")

    def who(_):
        import order_mod
        return order_mod.WHO

    env = env_factory(**{"python.files": first})
    env.add_python_file(second)
    assert list(env.from_collection([0]).map(who).execute_and_collect()) == ["second"]


def test_a_later_job_sees_its_own_version_of_a_module(env_factory, tmp_path):
    def version(_):
        import versioned_mod
        return versioned_mod.VERSION

    for v in (1, 2):
        env = env_factory(parallelism=2)
        env.add_python_file(write(tmp_path / f"v{v}" / "versioned_mod.py", f"VERSION = {v}\n"))
        assert set(env.from_collection([0, 1, 2, 3]).map(version).execute_and_collect()) == {v}


def test_archives_and_cached_files_are_read_by_relative_paths_on_spark(spark, tmp_path):
    with zipfile.ZipFile(tmp_path / "arch.zip", "w") as z:
        z.writestr("inner/a.txt", "in-archive")
    with zipfile.ZipFile(tmp_path / "plain.zip", "w") as z:
        z.writestr("b.txt", "default-name")
    data = write(tmp_path / "data.txt", "hello-cache")

    def read(path):
        with open(path) as f:
            return f.read()

    env = make_env("spark", parallelism=2)
    env.add_python_archive(str(tmp_path / "arch.zip"), "myarch")
    env.add_python_archive(str(tmp_path / "plain.zip"))
    env.register_cached_file(data, "mydata")
    paths = ["myarch/inner/a.txt", "plain.zip/b.txt", "mydata"]
    got = sorted(env.from_collection(paths).map(read).execute_and_collect())
    assert got == ["default-name", "hello-cache", "in-archive"]


def test_the_in_process_executor_cannot_offer_a_working_directory(tmp_path):
    env = make_env("local")
    env.register_cached_file(write(tmp_path / "data.txt", "x"), "mydata")
    env.from_collection([1]).print()
    with pytest.raises(ValueError, match="register_cached_file.*'local' executor"):
        env.execute()


@pytest.mark.parametrize("method, args", [
    ("add_python_file", ("/no/such/module.py",)),
    ("add_python_archive", ("/no/such/archive.zip",)),
    ("register_cached_file", ("/no/such/file", "name")),
    ("set_python_requirements", ("/no/such/requirements.txt",))])
def test_a_missing_file_fails_before_the_job_runs(method, args, capsys):
    env = make_env("local")
    getattr(env, method)(*args)
    env.from_collection([1]).print()
    with pytest.raises(FileNotFoundError, match=f"{method}: '{args[0]}' does not exist"):
        env.execute()
    assert capsys.readouterr().out == ""


def test_an_archive_must_be_a_zip(spark, tmp_path):
    env = make_env("spark")
    env.add_python_archive(write(tmp_path / "env.tar.gz", "not a zip"))
    env.from_collection([1]).print()
    with pytest.raises(ValueError, match="add_python_archive: .* is not a zip file"):
        env.execute()


def test_requirements_are_checked_where_the_tasks_run(executor, tmp_path, capsys):
    env = make_env(executor)
    env.set_python_requirements(write(tmp_path / "ok.txt", "cloudpickle>=2.0\n"),
                                str(tmp_path / "cache"))
    env.from_collection([1]).print()
    env.execute()
    assert capsys.readouterr().out == "1\n"

    env = make_env(executor)
    env.set_python_requirements(write(tmp_path / "bad.txt", "no-such-package-xyz==1.0\n"))
    env.from_collection([1]).print()
    with pytest.raises(RuntimeError, match="(?s)not all installed.*no-such-package-xyz"):
        env.execute()
    assert capsys.readouterr().out == ""


def test_requirements_shipped_to_cluster_workers_are_checked_there(tmp_path):
    dependencies = PythonDependencies.from_configuration(
        {"python.requirements": write(tmp_path / "bad.txt", "no-such-package-xyz==1.0\n")})
    bundle = dependencies.pack(staging_directory(), ship_requirements=True)
    with pytest.raises(RuntimeError, match="no-such-package-xyz"):
        bundle.activate(bundle.extract(str(tmp_path)), working_directory=False)


def test_python_executable(spark):
    env = make_env("local")
    env.set_python_executable(sys.executable)
    env.from_collection([1]).print()
    env.execute()
    for executor, executable, message in [
            ("local", "/opt/other/bin/python3", "runs the tasks in this process"),
            ("spark", "/opt/other/bin/python3", "already runs its Python workers with"),
            ("spark", "venv.zip/venv/bin/python", "is a relative path")]:
        env = make_env(executor)
        env.set_python_executable(executable)
        env.from_collection([1]).print()
        with pytest.raises(ValueError, match=message):
            env.execute()


def test_python_options_in_the_configuration_are_pyflinks():
    # The values PyFlink 2.3.0 stores for the same calls (observed in its configuration).
    config = Configuration()
    config.set_string("python.files", "/c.py")
    env = make_env("local")
    env.configure(config)
    env.add_python_file("/a.zip")
    env.add_python_file("/b")
    env.set_python_requirements("/req.txt", "/cache")
    env.add_python_archive("/a.zip", "t")
    env.add_python_archive("/b.zip")
    env.set_python_executable("/usr/bin/python3")
    settings = job_settings(env, []).python_dependencies
    assert settings == PythonDependencies(
        files=("/b", "/a.zip", "/c.py"), archives=(("/a.zip", "t"), ("/b.zip", None)),
        requirements="/req.txt", requirements_cache_dir="/cache",
        executable="/usr/bin/python3")
