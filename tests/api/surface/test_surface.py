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
from pathlib import Path

import pytest

SURFACE = json.loads(Path(__file__).with_name("pyflink_2_3_0_surface.json").read_text())["modules"]

# Parts of the surface that other branches implement; the lead deletes this set after merging
# them. Patterns match a module name, a top-level name (also where a package re-exports it),
# or Class.method.
# Named by the reference documents (../shared/seeds, PyFlink 1.x) but dropped by PyFlink 2.3.0:
# module -> {class: {method: parameter names}} (a class with None: the class itself).
DOCUMENTED_BEFORE_2_X = {
    "pyflink.datastream.stream_execution_environment": {"StreamExecutionEnvironment": {
        "add_default_kryo_serializer": ["type_class_name", "serializer_class_name"],
        "register_type": ["type_class_name"],
        "register_type_with_kryo_serializer": ["type_class_name", "serializer_class_name"],
        "set_restart_strategy": ["restart_strategy_configuration"],
        "get_restart_strategy": [],
        "set_stream_time_characteristic": ["characteristic"],
        "get_stream_time_characteristic": [],
        "read_text_file": ["file_path", "charset_name"],
        "set_state_backend": ["state_backend"],
        "get_state_backend": [],
    }},
    "pyflink.datastream.time_characteristic": {"TimeCharacteristic": None},
    "pyflink.datastream.state_backend": {
        "MemoryStateBackend": {"get_max_state_size": [], "is_using_asynchronous_snapshots": []},
        "FsStateBackend": {"get_checkpoint_path": [], "get_min_file_size_threshold": [],
                           "get_write_buffer_size": [], "is_using_asynchronous_snapshots": []},
        "RocksDBStateBackend": {"get_checkpoint_backend": [],
                                "get_number_of_transfering_threads": [],
                                "set_number_of_transfering_threads":
                                    ["number_of_transfering_threads"]},
    },
    "pyflink.datastream.checkpoint_config": {"CheckpointConfig": {
        "enable_externalized_checkpoints": ["cleanup_mode"],
        "get_externalized_checkpoint_cleanup": [],
        "set_externalized_checkpoint_cleanup": ["cleanup_mode"],
        "get_checkpoint_storage": [], "set_checkpoint_storage": ["storage"],
        "set_checkpoint_storage_dir": ["checkpoint_path"],
    }},
}


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
        if not hasattr(ours, name):
            problems.append(f"{name}: missing")
        elif spec["kind"] == "class":
            check_class(module, name, getattr(ours, name), spec, problems)
        elif spec["kind"] == "function":
            compare_parameters(ours, name, spec["params"], name, problems)
        elif getattr(ours, name) != spec["value"]:
            problems.append(f"{name} = {getattr(ours, name)!r}, PyFlink's is {spec['value']!r}")
    return problems


@pytest.mark.parametrize("module", list(SURFACE))
def test_module_surface_matches_pyflink(module):
    problems = surface_problems(module)
    assert not problems, (f"{api_module_name(module)} differs from {module}:\n  "
                          + "\n  ".join(problems))


@pytest.mark.parametrize("module", list(DOCUMENTED_BEFORE_2_X))
def test_names_of_the_reference_documents_that_pyflink_2_dropped_exist(module):
    ours = importlib.import_module(api_module_name(module))
    problems = []
    for name, methods in DOCUMENTED_BEFORE_2_X[module].items():
        cls = getattr(ours, name, None)
        if cls is None:
            problems.append(f"{name}: missing")
            continue
        for method, params in (methods or {}).items():
            if not hasattr(cls, method):
                problems.append(f"{name}.{method}: missing method")
            else:
                compare_parameters(cls, method, params, f"{name}.{method}", problems)
    assert not problems, f"{api_module_name(module)}:\n  " + "\n  ".join(problems)


def test_surface_data_covers_the_datastream_api():
    # guards against an accidentally truncated data file
    assert {"pyflink.common", "pyflink.datastream", "pyflink.datastream.window",
            "pyflink.datastream.functions"} <= set(SURFACE)
    assert "count_window" in SURFACE["pyflink.datastream.data_stream"]["KeyedStream"]["methods"]
