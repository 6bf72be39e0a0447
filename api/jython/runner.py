"""Runs a program of the older Python streaming guide, as its ``pyflink-stream.sh`` did::

    python -m api.jython [-D key=value ...] program.py [package ...] [- arg ...]

The program and the packages (``.py`` files or directories) are copied into one staging
directory that is put on the import path and shipped with every job, with an ``org``
package that installs the import aliases wherever the program's modules are imported
(the Spark workers unpickle its functions by importing them); the program is
imported under its file name, ``sys.argv`` becomes ``[program.py, arg ...]``, and its
``main(factory)`` is called with a PythonEnvironmentFactory whose environments get the
``-D`` settings (e.g. ``-D spark.master=spark://host:7077``).
"""
import importlib
import inspect
import os
import shutil
import sys
import tempfile
from typing import List, Optional, Sequence

import cloudpickle

from api.common import Configuration

from .aliases import install_aliases
from .environment import PythonEnvironmentFactory

USAGE = ("usage: python -m api.jython [-D key=value ...] <program.py> [<package> ...] "
         "[- <arg> ...]")

ORG_PACKAGE = '''"""The guide's org.apache.flink... modules: see api.jython.aliases."""
from api.jython.aliases import install_aliases

install_aliases()
'''


def run_program(program: str, packages: Sequence[str] = (), args: Sequence[str] = (),
                configuration: Optional[Configuration] = None, spark_session=None):
    """Loads ``program`` (with ``packages`` importable next to it) and calls its
    ``main(factory)``; returns what ``main`` returns."""
    for path in (program, *packages):
        if not os.path.exists(path):
            raise FileNotFoundError(f"Could not find file: {path}")
    staging = tempfile.mkdtemp(prefix="jython-program-")
    for path in (program, *packages):
        target = os.path.join(staging, os.path.basename(os.path.normpath(path)))
        (shutil.copytree if os.path.isdir(path) else shutil.copyfile)(path, target)
    os.mkdir(os.path.join(staging, "org"))
    with open(os.path.join(staging, "org", "__init__.py"), "w") as f:
        f.write(ORG_PACKAGE)
    install_aliases()
    sys.path.insert(0, staging)
    sys.argv = [program, *args]
    module = _load(program)
    _ship_by_value(staging)
    main = getattr(module, "main", None)
    if not callable(main) or len(inspect.signature(main).parameters) != 1:
        raise TypeError(f"{program} has no main(factory) function: a program of the older "
                        "Python streaming guide defines main(factory), which gets its "
                        "environment from factory.get_execution_environment()")
    try:
        return main(PythonEnvironmentFactory(configuration, spark_session, [staging]))
    finally:  # (each job shipped the directory when it started)
        sys.path.remove(staging)
        shutil.rmtree(staging, ignore_errors=True)


def _ship_by_value(staging: str) -> None:
    """The program's modules travel with the job's functions, by value: a worker then never
    imports them, nor the ``org.apache.flink...`` names they use (a Spark worker may have
    an ``org`` package of its own already: the namespace of Spark's jars on its path)."""
    for module in list(sys.modules.values()):
        if (getattr(module, "__file__", None) or "").startswith(staging + os.sep):
            cloudpickle.register_pickle_by_value(module)


def _load(program: str):
    name = os.path.splitext(os.path.basename(program))[0]
    sys.modules.pop(name, None)  # a program of the same name loaded before
    try:
        return importlib.import_module(name)
    except SyntaxError as e:
        raise SyntaxError(
            f"{program} is not valid Python 3 ({e.msg}, line {e.lineno}): programs of the "
            "older Python streaming guide ran on Jython (Python 2.7); Python 2-only syntax "
            "(print statements, `except E, e`, backquotes, 0777 literals, ...) must be "
            "ported to Python 3 first, e.g. with `python -m lib2to3` or by hand") from e


def main(argv: List[str]) -> None:
    """The command line: see the module docstring."""
    configuration = Configuration()
    while len(argv) >= 2 and argv[0] == "-D":
        key, sep, value = argv[1].partition("=")
        if not sep:
            raise SystemExit(f"-D expects key=value, got {argv[1]!r}\n{USAGE}")
        configuration.set_string(key, value)
        argv = argv[2:]
    if not argv or argv[0].startswith("-"):
        raise SystemExit(USAGE)
    files, args = argv, []
    if "-" in argv:
        split = argv.index("-")
        files, args = argv[:split], argv[split + 1:]
    run_program(files[0], files[1:], args, configuration)
