"""Every public name, method and parameter of PyFlink 2.3.0's DataStream API exists under ``api``.

The reference is data: ``pyflink_2_3_0_surface.json``, written from an installed PyFlink by
``generate_pyflink_surface.py``. ``pyflink.X.Y`` must import as ``api.X.Y`` with the same
names; classes have the same methods with the same parameter names in the same order (ours
may add optional ones at the end), the same enum members, and are subscriptable with as
many type parameters where PyFlink's are generic.
"""
import enum
import importlib
import inspect
import json
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

SURFACE = json.loads(Path(__file__).with_name("pyflink_2_3_0_surface.json").read_text())["modules"]

# Parts of the surface that other branches implement; the lead deletes this set after merging
# them. Patterns match a module name, a top-level name (also where a package re-exports it),
# or Class.method.
OWNED_BY_OTHER_BRANCHES = {
    "pyflink.datastream.connectors*", "pyflink.datastream.formats*", "pyflink.common.serialization",
    "pyflink.datastream.async_data_stream", "pyflink.datastream.async_retry_strategies",
    "pyflink.datastream.async_retry_predicates",
    "ConnectedStreams", "BroadcastStream", "BroadcastConnectedStream", "AsyncDataStream",
    "AsyncFunction", "AsyncRetryStrategy", "AsyncRetryPredicate", "AsyncFunctionDescriptor",
    "ResultFuture",
    "DataStream.connect", "DataStream.broadcast", "KeyedStream.connect",
    "CachedDataStream.connect", "CachedDataStream.broadcast",
    "StreamExecutionEnvironment.add_python_file", "StreamExecutionEnvironment.add_python_archive",
    "StreamExecutionEnvironment.set_python_requirements",
    "StreamExecutionEnvironment.set_python_executable",
    "StreamExecutionEnvironment.register_cached_file",
    # re-exported by pyflink.common from pyflink.common.serialization and pyflink.datastream.formats
    "SerializationSchema", "DeserializationSchema", "SimpleStringSchema", "ByteArraySchema",
    "Encoder", "*Row*SerializationSchema", "*Row*DeserializationSchema",
}


def owned_elsewhere(module: str, path: str) -> bool:
    return any(fnmatchcase(module, p) or fnmatchcase(path, p) for p in OWNED_BY_OTHER_BRANCHES)


def api_module_name(pyflink_module: str) -> str:
    return "api" + pyflink_module[len("pyflink"):]


def parameter_names(owner, name):
    """Our method's parameter names as the generator writes them (no self/cls, * and ** marked)."""
    raw = inspect.getattr_static(owner, name)
    function = getattr(owner, name)
    params = list(inspect.signature(function).parameters.values())
    if not isinstance(raw, (staticmethod, classmethod)) and inspect.isclass(owner):
        params = params[1:]
    prefix = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
    return params, [prefix.get(p.kind, "") + p.name for p in params]


def compare_parameters(owner, name, expected, where, problems):
    try:
        params, names = parameter_names(owner, name)
    except (TypeError, ValueError) as e:
        problems.append(f"{where}: no signature ({e})")
        return
    extra = params[len(expected):]
    if names[:len(expected)] != expected or any(
            p.default is inspect.Parameter.empty and p.kind not in
            (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD) for p in extra):
        problems.append(f"{where}: parameters {names}, PyFlink has {expected}")


def check_class(module, path, ours, spec, problems):
    if not inspect.isclass(ours):
        problems.append(f"{path}: is {type(ours).__name__}, PyFlink's is a class")
        return
    generic = spec.get("generic")
    if generic:
        try:
            ours[tuple([int] * generic) if generic > 1 else int]
        except TypeError as e:
            problems.append(f"{path}: not subscriptable with {generic} type parameter(s) ({e})")
    for member in spec.get("members", ()):
        if not (issubclass(ours, enum.Enum) and member in ours.__members__) \
                and not hasattr(ours, member):
            problems.append(f"{path}.{member}: missing enum member")
    for name, expected in spec.get("methods", {}).items():
        where = f"{path}.{name}"
        if owned_elsewhere(module, where):
            continue
        if not hasattr(ours, name):
            problems.append(f"{where}: missing method")
        elif expected == "property":
            if not isinstance(inspect.getattr_static(ours, name), property):
                problems.append(f"{where}: not a property")
        else:
            compare_parameters(ours, name, expected, where, problems)
    for name, nested in spec.get("nested", {}).items():
        if not hasattr(ours, name):
            problems.append(f"{path}.{name}: missing nested class")
        else:
            check_class(module, f"{path}.{name}", getattr(ours, name), nested, problems)


def surface_problems(module: str):
    try:
        ours = importlib.import_module(api_module_name(module))
    except ImportError as e:
        return [f"cannot import {api_module_name(module)}: {e}"]
    problems = []
    for name, spec in SURFACE[module].items():
        if owned_elsewhere(module, name):
            continue
        if not hasattr(ours, name):
            problems.append(f"{name}: missing")
        elif spec["kind"] == "class":
            check_class(module, name, getattr(ours, name), spec, problems)
        elif spec["kind"] == "function":
            compare_parameters(ours, name, spec["params"], name, problems)
        elif getattr(ours, name) != spec["value"]:
            problems.append(f"{name} = {getattr(ours, name)!r}, PyFlink's is {spec['value']!r}")
    return problems


@pytest.mark.parametrize("module", [m for m in SURFACE if not owned_elsewhere(m, "")])
def test_module_surface_matches_pyflink(module):
    problems = surface_problems(module)
    assert not problems, f"{api_module_name(module)} differs from {module}:\n  " + "\n  ".join(problems)


def test_surface_data_covers_the_datastream_api():
    # guards against an accidentally truncated data file
    assert {"pyflink.common", "pyflink.datastream", "pyflink.datastream.window",
            "pyflink.datastream.functions"} <= set(SURFACE)
    assert "count_window" in SURFACE["pyflink.datastream.data_stream"]["KeyedStream"]["methods"]
