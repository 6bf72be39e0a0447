"""Programs written for the older (Jython) Python streaming guide, run on this engine.

Such a program defines ``main(factory)``, imports its function classes from
``org.apache.flink...`` and implements their camelCase methods
(``flatMap(value, collector)``, ``getKey``, ``apply(key, window, values, collector)``).
Run it with ``python -m api.jython program.py`` (``runner``), which installs the import
aliases (``aliases``) and calls ``main`` with a ``PythonEnvironmentFactory``
(``environment``); the streams (``data_stream``) wrap this project's DataStream API and
the functions (``functions``) are adapted to it. Python 2-only syntax is not supported.
"""
from .aliases import install_aliases
from .environment import PythonEnvironmentFactory, PythonStreamExecutionEnvironment
from .runner import run_program

__all__ = ["PythonEnvironmentFactory", "PythonStreamExecutionEnvironment", "install_aliases",
           "run_program"]
