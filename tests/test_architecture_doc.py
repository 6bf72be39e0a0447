"""docs/ARCHITECTURE.md matches the code: every module or folder it names exists, and
it describes every package of the product."""
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "ARCHITECTURE.md"
PRODUCT = ("core", "checkpoint", "statebackends", "engine", "api", "cli")


def named_paths(text: str):
    """Every `...` in the text that names a Python module or a folder."""
    for token in re.findall(r"`([^`\s]+)`", text):
        if "<" in token or "://" in token:
            continue  # a pattern (`<dir>/`) or a URL scheme
        if token.endswith(".py") or token.endswith("/"):
            yield token


def exists(token: str, root: pathlib.Path) -> bool:
    """Whether ``token`` names a file or folder of the tree: as a path from the root,
    or, for a name given inside its package's row or paragraph, as the end of one."""
    if (root / token).exists():
        return True
    if token.split("/")[0] in PRODUCT + ("tests", "benchmarks", "docs", "examples"):
        return False  # a path from the root that is not there
    name = token.rstrip("/")
    return any(str(p.relative_to(root)).endswith("/" + name)
               for p in root.rglob(name.split("/")[-1])
               if not any(part.startswith(".") for part in p.relative_to(root).parts))


def packages(root: pathlib.Path):
    for zone in PRODUCT:
        for init in (root / zone).rglob("__init__.py"):
            yield str(init.parent.relative_to(root))


def test_every_module_and_folder_it_names_exists():
    missing = [t for t in named_paths(DOC.read_text()) if not exists(t, ROOT)]
    assert missing == []


def test_every_package_is_described():
    text = DOC.read_text()
    described = {t.rstrip("/") for t in named_paths(text)} | set(re.findall(r"`([\w.]+)`", text))

    def mentioned(package: str) -> bool:
        parts = package.split("/")
        # by its path, its dotted name, or by its last parts inside its parent's row
        return any("/".join(parts[i:]) in described or ".".join(parts[i:]) in described
                   for i in range(len(parts)))
    assert [p for p in packages(ROOT) if not mentioned(p)] == []


def test_a_renamed_module_is_caught(tmp_path):
    (tmp_path / "engine" / "io").mkdir(parents=True)
    (tmp_path / "engine" / "io" / "sources.py").write_text("")
    assert exists("engine/io/sources.py", tmp_path) and exists("sources.py", tmp_path)
    assert not exists("engine/io/sinks.py", tmp_path) and not exists("sinks.py", tmp_path)
    assert list(named_paths("`a.py`, `engine/io/`, `<dir>/`, `x`")) == ["a.py", "engine/io/"]
