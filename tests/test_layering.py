"""Every import points down the layers of docs/ARCHITECTURE.md: a module imports only
from its own zone and the zones below it, so each zone can be read, tested and replaced
without the ones above it."""
import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

# Lowest first: a zone may import itself and every zone before it.
ZONES = [
    "core",
    "checkpoint",
    "statebackends",
    "engine",  # the shared contracts: engine.graph, engine.batch, engine.errors, engine.time
    "engine.io",
    "engine.runtime",
    "engine.executor",
    "engine.driver",
    "api",
    "cli",
    "benchmarks",
]
PRODUCT = ("core", "checkpoint", "statebackends", "engine", "api", "cli", "tests")


def zone_of(module: str) -> str:
    """The most specific zone that holds ``module``."""
    found = [z for z in ZONES if module == z or module.startswith(z + ".")]
    return max(found, key=len) if found else ""


def module_name(path: pathlib.Path, root: pathlib.Path = ROOT) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: pathlib.Path, root: pathlib.Path):
    """(line, module) of every import in the file, relative ones resolved; each name of
    ``from package import name`` counts as ``package.name``, since it may be a module."""
    package = module_name(path, root).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package[:len(package) - node.level + 1] + ([base] if base else []))
            yield node.lineno, base
            for alias in node.names:
                yield node.lineno, f"{base}.{alias.name}"


def upward_imports(root: pathlib.Path = ROOT):
    """'file:line imports module' for every import of a zone above the importer's."""
    found = []
    for zone in ZONES:
        for path in sorted((root / zone.replace(".", "/")).rglob("*.py")):
            importer = zone_of(module_name(path, root))
            if importer != zone:
                continue  # a deeper zone's file, checked under that zone
            allowed = ZONES[:ZONES.index(importer) + 1]
            for line, module in imported_modules(path, root):
                if module.split(".")[0] not in PRODUCT:
                    continue
                target = zone_of(module)
                if target not in allowed:
                    found.append(f"{path.relative_to(root)}:{line} imports {module}")
    return found


def test_every_import_points_down():
    assert upward_imports() == []


@pytest.mark.parametrize("module, zone", [
    ("core.codec", "core"), ("engine.graph", "engine"), ("engine.time.windows", "engine"),
    ("engine.io.kafka.sink", "engine.io"), ("engine.runtime.operators.udf", "engine.runtime"),
    ("engine.driver.scheduler", "engine.driver"), ("api.datastream", "api"),
    ("tests.kafka_broker", ""),
])
def test_zone_of(module, zone):
    assert zone_of(module) == zone


def test_an_upward_import_is_found(tmp_path):
    (tmp_path / "engine" / "io").mkdir(parents=True)
    (tmp_path / "engine" / "io" / "kafka.py").write_text(
        "import json\nfrom engine.graph import Transformation\nfrom engine.runtime import task\n")
    (tmp_path / "benchmarks").mkdir()
    (tmp_path / "benchmarks" / "run.py").write_text(
        "from api.datastream import DataStream\nfrom ..tests import kafka_broker\n")
    assert upward_imports(tmp_path) == [
        "engine/io/kafka.py:3 imports engine.runtime",
        "engine/io/kafka.py:3 imports engine.runtime.task",
        "benchmarks/run.py:2 imports tests",
        "benchmarks/run.py:2 imports tests.kafka_broker",
    ]


@pytest.mark.parametrize("module", sorted(
    f"api.datastream.formats.{p.stem}" for p in (ROOT / "api/datastream/formats").glob("*.py")
    if not p.stem.startswith("_")))
def test_a_format_module_imported_first_imports(module):
    """The DataStream formats read their types from api.table.types, whose package's SQL
    connectors use the formats: a program that imports a format first must not meet the
    cycle half-way."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", f"import {module}"], cwd=ROOT,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
