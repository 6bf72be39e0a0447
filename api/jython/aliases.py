"""The ``org.apache.flink...`` import paths of the older Python streaming guide, as module
aliases: after ``install_aliases()``,
``from org.apache.flink.api.common.functions import FlatMapFunction`` gives the guide's
FlatMapFunction of ``api.jython.functions``. The runner (``python -m api.jython``)
installs them before it loads a program.
"""
import sys
import types

from api.common import Time
from api.datastream import OutputSelector, SourceFunction, WriteMode

from . import functions as fn

_TIME_FACTORIES = {name: getattr(Time, name)
                   for name in ("milliseconds", "seconds", "minutes", "hours", "days")}

# module path -> the names it holds (the Java packages and classes the guide imports from)
ALIASES = {
    "org.apache.flink.api.common.functions": {
        cls.__name__: cls for cls in (
            fn.MapFunction, fn.FlatMapFunction, fn.FilterFunction, fn.ReduceFunction,
            fn.RichMapFunction, fn.RichFlatMapFunction, fn.RichFilterFunction,
            fn.RichReduceFunction)},
    "org.apache.flink.api.java.functions": {"KeySelector": fn.KeySelector},
    "org.apache.flink.streaming.api.functions.source": {"SourceFunction": SourceFunction},
    "org.apache.flink.streaming.api.functions.windowing": {
        "WindowFunction": fn.WindowFunction, "RichWindowFunction": fn.RichWindowFunction},
    "org.apache.flink.streaming.api.collector.selector": {"OutputSelector": OutputSelector},
    "org.apache.flink.streaming.api.windowing.time": {"Time": Time},
    # Jython imports a Java class's static methods as from a module
    "org.apache.flink.streaming.api.windowing.time.Time": _TIME_FACTORIES,
    "org.apache.flink.core.fs.FileSystem": {"WriteMode": WriteMode},
    "org.apache.flink.api.common.serialization": {
        "SerializationSchema": fn.SerializationSchema},
    "org.apache.flink.streaming.util.serialization": {
        "SerializationSchema": fn.SerializationSchema},
}


def install_aliases() -> None:
    """Makes the guide's ``org.apache.flink...`` modules importable (idempotent)."""
    for path, names in ALIASES.items():
        _module(path).__dict__.update(names)
    # `from org.apache.flink.core.fs import FileSystem` then `FileSystem.WriteMode`
    _module("org.apache.flink.core.fs").FileSystem = _module("org.apache.flink.core.fs.FileSystem")


def _module(path: str) -> types.ModuleType:
    """The alias module ``path`` (and its parents), created on first use."""
    module = sys.modules.get(path)
    if module is None:
        module = types.ModuleType(path, "An alias of the older Python streaming guide "
                                        "(see api.jython.aliases).")
        module.__path__ = []  # a package, so that submodules can be imported
        sys.modules[path] = module
        parent, _, name = path.rpartition(".")
        if parent and not hasattr(_module(parent), name):
            setattr(_module(parent), name, module)
    return module
