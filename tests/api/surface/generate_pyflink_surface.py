"""Writes pyflink_2_3_0_surface.json: PyFlink 2.3.0's public DataStream surface, as data.

Run with the interpreter that has apache-flink 2.3.0 installed (never from the project's
venv; PyFlink is not a dependency):

    /opt/flinkvenv/bin/python tests/api/surface/generate_pyflink_surface.py

For every module of ``pyflink.common`` and ``pyflink.datastream`` it records the names
``from <module> import X`` gives: its ``__all__``, the other classes and functions it defines
(PyFlink leaves ``RowTypeInfo`` or ``AllWindowedStream`` out of ``__all__``, yet programs
import them), everything a package's ``__init__`` re-exports, and the UPPER_CASE constants
of a module without ``__all__``. For every class: its generic parameter count, enum
members, nested classes and public methods with their parameter names.
"""
import enum
import importlib
import inspect
import json
import pkgutil
import re
import sys
import typing
from pathlib import Path

ROOTS = ("pyflink.common", "pyflink.datastream")
# Internal helpers and JVM plumbing, not part of the user-facing API.
SKIPPED_MODULES = {"pyflink.common.utils", "pyflink.datastream.utils"}
PLUMBING_MODULE_PREFIXES = ("pyflink.java_gateway", "pyflink.util", "pyflink.fn_execution",
                            "py4j", "pyflink.common.utils", "pyflink.datastream.utils")
# PyFlink's own runtime helpers that its modules define outside __all__.
RUNTIME_INTERNAL = re.compile(r"^(Internal|PassThrough)|Wrapper$|^(NullByteKeySelector|Min|"
                              r"WindowOperationDescriptor|long_to_int_with_bit_mixing|mod_inverse|"
                              r"VoidNamespaceSerializer|RowDataBulkWriterFactory)$")
OUT = Path(__file__).with_name("pyflink_2_3_0_surface.json")


def modules():
    for root in ROOTS:
        package = importlib.import_module(root)
        yield root, package
        for info in pkgutil.walk_packages(package.__path__, root + "."):
            if info.name in SKIPPED_MODULES or ".tests" in info.name:
                continue
            yield info.name, importlib.import_module(info.name)


def is_pyflink_api(obj) -> bool:
    module = getattr(obj, "__module__", None) or ""
    return (inspect.isclass(obj) or inspect.isfunction(obj)) and module.startswith("pyflink.") \
        and not module.startswith(PLUMBING_MODULE_PREFIXES)


def public_names(name, module):
    is_package = hasattr(module, "__path__")
    exported = set(getattr(module, "__all__", ()))
    for attr, obj in vars(module).items():
        if attr.startswith("_"):
            continue
        if is_pyflink_api(obj):
            if attr in exported or is_package or (
                    obj.__module__ == name and not RUNTIME_INTERNAL.search(attr)):
                yield attr, describe(obj)
        elif (attr.isupper() and attr != "TYPE_CHECKING" and not hasattr(module, "__all__")
              and isinstance(obj, (int, float, str))):
            yield attr, {"kind": "constant", "value": obj}


def parameters(function, drop_first: bool):
    params = list(inspect.signature(function).parameters.values())
    if drop_first:
        params = params[1:]
    prefix = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}
    return [prefix.get(p.kind, "") + p.name for p in params]


def describe_class(cls):
    entry = {"kind": "class"}
    generic = len(getattr(cls, "__parameters__", ()))
    if generic and typing.Generic in cls.__mro__:
        entry["generic"] = generic
    if issubclass(cls, enum.Enum):
        entry["members"] = sorted(cls.__members__)
    methods, nested = {}, {}
    # vars() of the MRO rather than dir(): dir() hides an Enum's methods
    attrs = {attr for k in cls.__mro__ for attr in vars(k)}
    for attr in sorted(attrs):
        if attr.startswith("_") or (issubclass(cls, enum.Enum) and attr in cls.__members__):
            continue
        owner = next(k for k in cls.__mro__ if attr in vars(k))
        if not owner.__module__.startswith("pyflink."):
            continue
        raw = vars(owner)[attr]
        if inspect.isclass(raw):
            nested[attr] = describe_class(raw)
        elif isinstance(raw, (staticmethod, classmethod)):
            methods[attr] = parameters(getattr(cls, attr), drop_first=False)
        elif inspect.isfunction(raw):
            methods[attr] = parameters(raw, drop_first=True)
        elif isinstance(raw, property):
            methods[attr] = "property"
    if methods:
        entry["methods"] = methods
    if nested:
        entry["nested"] = nested
    return entry


def describe(obj):
    if inspect.isclass(obj):
        return describe_class(obj)
    return {"kind": "function", "params": parameters(obj, drop_first=False)}


def main():
    surface = {name: dict(sorted(public_names(name, module))) for name, module in modules()}
    surface = {"pyflink_version": importlib.import_module("pyflink.version").__version__,
               "modules": dict(sorted(surface.items()))}
    text = json.dumps(surface, indent=1, sort_keys=True)
    # one line per parameter or member list (they hold only names)
    text = re.sub(r"\[\n\s*(.*?)\n\s*\]", lambda m: "[" + re.sub(r",\n\s*", ", ", m.group(1)) + "]",
                  text, flags=re.S)
    OUT.write_text(text + "\n")
    print(f"{OUT}: {len(surface['modules'])} modules", file=sys.stderr)


if __name__ == "__main__":
    main()
