"""A job's Python dependencies, as PyFlink configures them: ``python.files``,
``python.archives``, ``python.requirements``, ``python.executable`` and the files of
``register_cached_file``.

On the driver they are packed into one zip, a ``Bundle``, named by its content; the
executor ships it (Spark unpacks it on every worker) and the task side activates it
before it loads the job: the python files go onto ``sys.path`` as PyFlink puts them on
the worker's PYTHONPATH, and archives and cached files are found relative to the
working directory. Packages are never installed: requirements are checked.
"""
import atexit
import hashlib
import importlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional, Tuple

# PyFlink's configuration keys and delimiters.
PYTHON_FILES = "python.files"
PYTHON_ARCHIVES = "python.archives"
PYTHON_REQUIREMENTS = "python.requirements"
PYTHON_EXECUTABLE = "python.executable"
FILE_DELIMITER = ","
PARAM_DELIMITER = "#"

# Inside a bundle: python paths under files/<n>/, the working directory under work/.
FILES_DIR = "files"
WORK_DIR = "work"
REQUIREMENTS_FILE = "requirements.txt"
_FIXED_TIME = (1980, 1, 1, 0, 0, 0)  # zip entries' time: equal content, equal bundle name


@dataclass(frozen=True)
class CachedFile:
    """A file (or directory) of ``register_cached_file``: ``name`` is where functions find
    it, relative to their working directory."""
    name: str
    path: str
    executable: bool = False


@dataclass(frozen=True)
class PythonDependencies:
    """What a job asked for, as given (paths on the driver)."""
    files: Tuple[str, ...] = ()
    archives: Tuple[Tuple[str, Optional[str]], ...] = ()   # (zip file, target dir or None)
    requirements: Optional[str] = None
    requirements_cache_dir: Optional[str] = None
    executable: Optional[str] = None
    cached_files: Tuple[CachedFile, ...] = ()

    @staticmethod
    def from_configuration(conf: Dict[str, str],
                           cached_files: Tuple[CachedFile, ...] = ()) -> "PythonDependencies":
        """Reads PyFlink's ``python.*`` options (``python.files`` = ``a.py,dir``,
        ``python.archives`` = ``env.zip#target,data.zip``, ``python.requirements`` =
        ``requirements.txt#cache_dir``)."""
        archives = tuple((path, target or None) for path, _, target in
                         (i.partition(PARAM_DELIMITER) for i in _items(conf, PYTHON_ARCHIVES)))
        requirements, _, cache_dir = conf.get(PYTHON_REQUIREMENTS, "").partition(PARAM_DELIMITER)
        return PythonDependencies(
            files=tuple(_items(conf, PYTHON_FILES)), archives=archives,
            requirements=requirements or None, requirements_cache_dir=cache_dir or None,
            executable=conf.get(PYTHON_EXECUTABLE) or None, cached_files=tuple(cached_files))

    def pack(self, directory: str, ship_requirements: bool) -> Optional["Bundle"]:
        """Packs everything to ship into one zip under ``directory``, with the
        requirements file if ``ship_requirements`` (to check them on the workers); None if
        there is nothing to ship. Fails here, before the job runs, on a missing or
        unusable file."""
        ship_requirements = ship_requirements and self.requirements is not None
        if not (self.files or self.archives or ship_requirements or self.cached_files):
            return None
        contents = _Contents()
        python_paths = [_add_python_file(contents, path, f"{FILES_DIR}/{index}")
                        for index, path in enumerate(self.files)]
        work_names: set = set()
        for path, target in self.archives:
            name = _work_name(work_names, target or os.path.basename(path), "add_python_archive")
            contents.add_zip(_existing(path, "add_python_archive"), f"{WORK_DIR}/{name}",
                             "add_python_archive")
        executables = []
        for cached in self.cached_files:
            name = _work_name(work_names, cached.name, "register_cached_file")
            contents.add_tree(_existing(cached.path, "register_cached_file"),
                              f"{WORK_DIR}/{name}")
            if cached.executable:
                executables.append(f"{WORK_DIR}/{name}")
        if ship_requirements:
            contents.files.append((REQUIREMENTS_FILE, self.requirements_file()))
        return Bundle(contents.write(directory), tuple(python_paths), bool(work_names),
                      tuple(executables), REQUIREMENTS_FILE if ship_requirements else None)

    def requirements_file(self) -> str:
        """The local path of the requirements file (which must exist)."""
        return _existing(self.requirements, "set_python_requirements")


def _items(conf: Dict[str, str], key: str) -> List[str]:
    return [item.strip() for item in conf.get(key, "").split(FILE_DELIMITER) if item.strip()]


def _existing(path: str, method: str) -> str:
    local = path[len("file://"):] if path.startswith("file://") else path
    if "://" in local:
        raise ValueError(f"{method}: {path!r} is not a local file; only local paths (or "
                         "file:// URIs) are shipped to the workers")
    if not os.path.exists(local):
        raise FileNotFoundError(f"{method}: {path!r} does not exist")
    return local


def _work_name(taken: set, name: str, method: str) -> str:
    if not name or name in (".", "..") or "/" in name or os.sep in name:
        raise ValueError(f"{method}: {name!r} cannot name a file in the working directory")
    if name in taken:
        raise ValueError(f"{method}: the name {name!r} is already used by another archive "
                         "or cached file of this job")
    taken.add(name)
    return name


def _add_python_file(contents: "_Contents", path: str, prefix: str) -> str:
    """Adds one ``add_python_file`` path as PyFlink lays it out; returns the path (in the
    bundle) that goes onto ``sys.path``: a .py file's directory, a directory itself, a
    .zip file's extracted contents, any other file (.whl, .egg) itself."""
    local = _existing(path, "add_python_file")
    if os.path.isdir(local):
        contents.add_tree(local, prefix)
        return prefix
    if local.endswith(".py"):
        contents.add_tree(local, f"{prefix}/{os.path.basename(local)}")
        return prefix
    if local.endswith(".zip"):
        contents.add_zip(local, prefix, "add_python_file")
        return prefix
    name = f"{prefix}/{os.path.basename(local)}"
    contents.add_tree(local, name)
    return name


class _Contents:
    """What goes into a bundle: files, and zip files whose members are copied."""

    def __init__(self):
        self.files: List[Tuple[str, str]] = []   # (name in the bundle, file on the driver)
        self.zips: List[Tuple[str, str]] = []    # (directory in the bundle, zip file)

    def add_tree(self, local: str, name: str) -> None:
        if not os.path.isdir(local):
            self.files.append((name, local))
            return
        for root, dirs, files in os.walk(local):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            relative = os.path.relpath(root, local).replace(os.sep, "/")
            for file in sorted(files):
                inner = file if relative == "." else f"{relative}/{file}"
                self.files.append((f"{name}/{inner}", os.path.join(root, file)))

    def add_zip(self, local: str, name: str, method: str) -> None:
        if not zipfile.is_zipfile(local):
            raise ValueError(f"{method}: {local!r} is not a zip file (only zip archives are "
                             "supported, as in PyFlink)")
        self.zips.append((name, local))

    def write(self, directory: str) -> str:
        """Writes the bundle with fixed times and order, so that equal content gives the
        same file name (Spark ships a file name once per session)."""
        os.makedirs(directory, exist_ok=True)
        fd, temporary = tempfile.mkstemp(suffix=".zip", dir=directory)
        os.close(fd)
        try:
            with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as bundle:
                for name, local in self.files:
                    with open(local, "rb") as f:
                        _write_member(bundle, name, f.read(), os.stat(local).st_mode)
                for name, local in self.zips:
                    _copy_members(bundle, local, name)
            digest = hashlib.sha256()
            with open(temporary, "rb") as f:
                for chunk in iter(lambda: f.read(1 << 20), b""):
                    digest.update(chunk)
            path = os.path.join(directory, f"python-deps-{digest.hexdigest()[:24]}.zip")
            os.replace(temporary, path)
            return path
        except BaseException:
            os.unlink(temporary)
            raise


def _copy_members(bundle: zipfile.ZipFile, source: str, prefix: str) -> None:
    with zipfile.ZipFile(source) as archive:
        for info in sorted(archive.infolist(), key=lambda i: i.filename):
            if info.is_dir():
                continue
            if info.filename.startswith("/") or ".." in info.filename.split("/"):
                raise ValueError(f"{source!r}: member {info.filename!r} leaves the archive")
            _write_member(bundle, f"{prefix}/{info.filename}", archive.read(info),
                          info.external_attr >> 16)


def _write_member(bundle: zipfile.ZipFile, name: str, data: bytes, mode: int) -> None:
    info = zipfile.ZipInfo(name, _FIXED_TIME)
    info.external_attr = (stat.S_IFREG | (stat.S_IMODE(mode) or 0o644)) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    bundle.writestr(info, data)


_staging: List[str] = []


def staging_directory() -> str:
    """This process's directory for bundles, removed when the process ends (Spark may
    fetch a bundle again for as long as its session lives)."""
    if not _staging:
        _staging.append(tempfile.mkdtemp(prefix="spark-datastream-deps-"))
        atexit.register(shutil.rmtree, _staging[0], True)
    return _staging[0]


# --- the task side -----------------------------------------------------------------------

_active_paths: List[str] = []        # sys.path entries of the bundle activated last
_original_directory = os.getcwd()


@dataclass(frozen=True)
class Bundle:
    """The packed dependencies of a job: one zip on the driver and the layout inside it."""
    archive: str                      # the zip's path on the driver
    python_paths: Tuple[str, ...]     # onto sys.path, in PyFlink's PYTHONPATH order
    has_working_directory: bool       # archives or cached files under work/
    executables: Tuple[str, ...]      # cached files to make executable
    requirements: Optional[str]       # the requirements file, if any

    @property
    def name(self) -> str:
        return os.path.basename(self.archive)

    def extract(self, directory: str) -> str:
        """Unpacks the bundle under ``directory`` (once) and returns where."""
        root = os.path.join(directory, self.name[:-len(".zip")])
        if not os.path.isdir(root):
            temporary = tempfile.mkdtemp(dir=directory)
            with zipfile.ZipFile(self.archive) as bundle:
                bundle.extractall(temporary)
            try:
                os.rename(temporary, root)
            except OSError:  # another thread unpacked it first
                shutil.rmtree(temporary, ignore_errors=True)
        return root

    def activate(self, root: str, working_directory: bool) -> None:
        """Makes the unpacked bundle at ``root`` usable in this process: its python paths
        on sys.path (replacing those of the bundle activated before, whose modules are
        forgotten) and its requirements checked; with ``working_directory`` (a worker
        process), the archives and cached files become the working directory, as
        PyFlink's workers run in their archives' directory."""
        paths = [os.path.join(root, p) for p in self.python_paths]
        _forget_paths([p for p in _active_paths if p not in paths])
        sys.path[0:0] = [p for p in paths if p not in sys.path]
        _active_paths[:] = paths
        importlib.invalidate_caches()
        if self.requirements is not None:
            check_requirements(os.path.join(root, self.requirements), sys.executable)
        if working_directory:
            for name in self.executables:
                _make_executable(os.path.join(root, name))
            os.chdir(os.path.join(root, WORK_DIR) if self.has_working_directory
                     else _original_directory)


def restore_working_directory() -> None:
    """For a job without a bundle, in a worker process a bundle may have moved."""
    os.chdir(_original_directory)


def _forget_paths(paths: List[str]) -> None:
    if not paths:
        return
    sys.path[:] = [p for p in sys.path if p not in paths]
    prefixes = tuple(os.path.join(p, "") for p in paths)
    for name, module in list(sys.modules.items()):
        if (getattr(module, "__file__", None) or "").startswith(prefixes):
            del sys.modules[name]


def _make_executable(path: str) -> None:
    for file in [path] if os.path.isfile(path) else _files_under(path):
        os.chmod(file, os.stat(file).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def _files_under(directory: str) -> Iterator[str]:
    for root, _, files in os.walk(directory):
        for file in files:
            yield os.path.join(root, file)


def check_requirements(requirements_file: str, python: str) -> None:
    """Fails unless every requirement of the file is installed for ``python`` (pip's
    resolver, offline and ignoring pip's configuration: nothing is downloaded)."""
    command = [python, "-m", "pip", "install", "--dry-run", "--no-index", "--isolated",
               "--quiet", "--disable-pip-version-check", "-r", requirements_file]
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=300)
    except OSError as e:
        raise RuntimeError(f"set_python_requirements: cannot run pip with {python}: {e}") \
            from None
    if result.returncode != 0:
        raise RuntimeError(
            f"set_python_requirements: the requirements are not all installed for {python}, "
            "and packages are not installed for a job here (requirements_cache_dir is not "
            "used). Install them where the tasks run, or ship them with the job: "
            "'pip install --target deps -r requirements.txt' and "
            f"env.add_python_file('deps'). pip says: {(result.stderr or result.stdout).strip()}")
