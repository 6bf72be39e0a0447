"""How the command line client (``cli/main.py``) finds and controls running jobs,
without a server: a status file the driver writes, request files the client writes.

In the directory of a job with a checkpoint directory (``<state.checkpoints.dir>/<job
name>/``, see ``checkpoint/job_directory.py``)::

    status.json         the driver's record of the job (JobStatusRecord as JSON, data
                        only), replaced atomically when the job starts, after each
                        committed micro-batch and when it ends; kept after the job ends
    control/<id>.json   a request of the client (ControlRequest): the driver takes it
                        after its next committed batch, and the result of a savepoint
                        request appears in status.json under ``results``

Checking for requests costs the driver one ``os.listdir`` per batch.
"""
import json
import logging
import os
import socket
import stat
import time
import uuid
from dataclasses import asdict, dataclass, field, fields
from typing import Dict, Optional

from core.private_paths import GROUP_ACCESS_OPTION, check_owned, open_private
from checkpoint.storage import is_temporary_name, is_url, makedirs, replacing
from checkpoint.job_directory import JobDirectory

from engine.errors import JobExecutionException

STATUS_FILE = "status.json"
CONTROL_DIR = "control"
SCHEMA_VERSION = 1
KEPT_RESULTS = 20  # results of savepoint requests kept in the status file
MAX_REQUEST_BYTES = 64 * 1024
REJECTED = ".rejected"  # the suffix of a request file set aside: not read again

log = logging.getLogger(__name__)

RUNNING, FINISHED, STOPPED, CANCELLED, FAILED = \
    "running", "finished", "stopped", "cancelled", "failed"
LOST = "lost"  # shown for a job whose status says running but whose driver is gone


@dataclass
class JobStatusRecord:
    """What ``status.json`` holds. Times are epoch milliseconds; ``watermark`` is the
    watermark of the last committed batch (None before any); ``results`` maps a request
    id to ``{"savepoint": path}`` or ``{"error": reason}``."""
    id: str
    name: str
    pid: int
    host: str
    start: int
    status: str = RUNNING
    last_batch: Optional[int] = None
    last_batch_time: Optional[int] = None
    watermark: Optional[int] = None
    last_checkpoint: Optional[str] = None
    error: Optional[str] = None
    results: Dict[str, Dict[str, str]] = field(default_factory=dict)
    schema: int = SCHEMA_VERSION

    def driver_alive(self) -> bool:
        """False when the driver process is known to be gone (same host, no such pid)."""
        if self.host != socket.gethostname():
            return True  # cannot tell from here
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        return True

    def shown_status(self) -> str:
        """The status, or ``lost`` for a running job whose driver is gone."""
        return LOST if self.status == RUNNING and not self.driver_alive() else self.status


@dataclass
class ControlRequest:
    """A request of the client: ``savepoint`` (into ``directory``), ``stop`` (with a
    savepoint into ``directory``, after ending event time if ``drain``) or ``cancel``."""
    id: str
    job: str
    action: str
    directory: Optional[str] = None
    drain: bool = False


def _write_json(path: str, data: dict) -> None:
    """Writes ``data`` to ``path`` atomically (a reader sees the old file or the new one),
    readable by this user only: a status holds error lines, which may quote records."""
    with replacing(path) as temporary, open_private(temporary) as f:
        json.dump(data, f)


def read_status(job_dir: str) -> Optional[JobStatusRecord]:
    """The status record in ``job_dir``, or None if there is none (or it is not one)."""
    try:
        with open(os.path.join(job_dir, STATUS_FILE)) as f:
            data = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA_VERSION:
        return None
    names = {f.name for f in fields(JobStatusRecord)}
    return JobStatusRecord(**{k: v for k, v in data.items() if k in names})


def find_jobs(checkpoint_root: str) -> Dict[str, JobStatusRecord]:
    """The jobs with a status file under ``checkpoint_root``, by job directory."""
    try:
        names = sorted(os.listdir(checkpoint_root))
    except FileNotFoundError:
        return {}
    jobs = {}
    for name in names:
        job_dir = os.path.join(checkpoint_root, name)
        status = read_status(job_dir)
        if status is not None:
            jobs[job_dir] = status
    return jobs


def send_request(job_dir: str, status: JobStatusRecord, action: str,
                 directory: Optional[str] = None, drain: bool = False) -> ControlRequest:
    """Writes a request for the job of ``status``; returns it (its id finds its result)."""
    request = ControlRequest(uuid.uuid4().hex, status.id, action, directory, drain)
    control = os.path.join(job_dir, CONTROL_DIR)
    os.makedirs(control, mode=0o700, exist_ok=True)
    _write_json(os.path.join(control, f"{request.id}.json"), asdict(request))
    return request


def withdraw_request(job_dir: str, request: ControlRequest) -> None:
    """Removes a request the job did not take (it ended first)."""
    try:
        os.remove(os.path.join(job_dir, CONTROL_DIR, f"{request.id}.json"))
    except FileNotFoundError:
        pass


class JobControl:
    """The driver's side: writes the job's status file and serves the client's requests
    through the JobRunner's own cancel and savepoint paths. Does nothing for a job
    without a checkpoint directory, or with one on an object store (``job_dir`` None):
    the status file and the requests are files on the driver's file system, where the
    command line client finds them."""

    def __init__(self, runner, directory: Optional[JobDirectory]):
        self.runner = runner
        self.directory = directory
        self.job_dir = None if directory is None or is_url(directory.root) \
            else directory.root
        self.status = JobStatusRecord(runner.job_id, runner.settings.job_name, os.getpid(),
                                      socket.gethostname(), _now())
        self._ignoring_control = False
        if self.job_dir is not None:
            # Whoever can write here can forge committed batches and requests.
            check_owned(self.job_dir, "The job directory",
                        group_may_write=runner.settings.task_settings.group_access,
                        group_hint=f"set '{GROUP_ACCESS_OPTION}: true' to trust its group")
            previous = read_status(self.job_dir)
            if previous is not None and previous.shown_status() == RUNNING:
                raise JobExecutionException(
                    f"Job {previous.name!r} is running already in {self.job_dir} (driver "
                    f"pid {previous.pid} on {previous.host}): two runs of one job would "
                    "overwrite each other's state. Stop it first, or give this run "
                    "another job name or checkpoint directory.")
            makedirs(self.job_dir)
            self._write()

    def after_batch(self, batch_id: int, watermark: int) -> None:
        """Records a committed batch and takes the requests that arrived."""
        if self.job_dir is None:
            return
        status = self.status
        status.last_batch, status.last_batch_time, status.watermark = batch_id, _now(), watermark
        checkpoints = self.directory.checkpoint_ids()
        status.last_checkpoint = self.directory.checkpoint_path(checkpoints[0]) \
            if checkpoints else None
        self._take_requests()
        self._write()

    def ended(self, outcome: str, error: Optional[BaseException]) -> None:
        """Records how the job ended: ``finished``, ``stopped``, ``cancelled`` or
        ``failed`` (with the first line of the error). A job whose consumer stopped
        reading (a collect iterator closed early) counts as cancelled."""
        if self.job_dir is None:
            return
        if isinstance(error, GeneratorExit):
            outcome, error = CANCELLED, None
        self.status.status = outcome
        if error is not None:
            self.status.error = error_line(error)
        self._write()
        try:  # (empty once its requests are taken)
            os.rmdir(os.path.join(self.job_dir, CONTROL_DIR))
        except OSError:
            pass

    def _take_requests(self) -> None:
        control = os.path.join(self.job_dir, CONTROL_DIR)
        try:
            check_owned(control, "The control directory")
            names = os.listdir(control)
        except FileNotFoundError:
            return
        except PermissionError as e:
            if not self._ignoring_control:
                log.warning("Requests are not taken: %s", e)
                self._ignoring_control = True
            return
        for name in sorted(names):
            if is_temporary_name(name) or not name.endswith(".json"):
                continue
            path = os.path.join(control, name)
            try:
                request = _read_request(path)
            except (OSError, ValueError, TypeError) as e:
                log.warning("%s is not a control request (%s): set aside as %s%s",
                            path, e, name, REJECTED)
                os.replace(path, path + REJECTED)
                continue
            os.remove(path)
            if request.job == self.status.id:  # (else: meant for an earlier run)
                self._serve(request)

    def submit(self, action: str, directory: Optional[str] = None,
               drain: bool = False) -> str:
        """Serves a request made in the driver's process (the REST API) as one the client
        left in the control directory; returns its id, under which ``result`` finds the
        outcome of a savepoint or stop."""
        request = ControlRequest(uuid.uuid4().hex, self.status.id, action, directory, drain)
        self._serve(request)
        return request.id

    def result(self, request_id: str) -> Optional[Dict[str, str]]:
        """``{"savepoint": path}`` or ``{"error": reason}`` of a request, None while it
        is pending (or unknown)."""
        return self.status.results.get(request_id)

    def _serve(self, request: ControlRequest) -> None:
        if request.action == "cancel":
            self.runner.cancel()
        elif request.action in ("savepoint", "stop"):
            future = self.runner.request_savepoint(
                request.directory, stop=request.action == "stop", drain=request.drain)
            future.add_done_callback(lambda done: self._record(
                request.id, {"savepoint": done.result()} if done.exception() is None
                else {"error": error_line(done.exception())}))
        else:
            self._record(request.id, {"error": f"unknown request {request.action!r}"})

    def _record(self, request_id: str, result: Dict[str, str]) -> None:
        results = self.status.results
        results[request_id] = result
        for old in list(results)[:-KEPT_RESULTS]:
            del results[old]

    def _write(self) -> None:
        _write_json(os.path.join(self.job_dir, STATUS_FILE), asdict(self.status))


def _now() -> int:
    return int(time.time() * 1000)


def _read_request(path: str) -> ControlRequest:
    """The request in ``path``, opened without following a link and without blocking (a
    FIFO does not hang the driver); it must be a small regular file of this user holding
    a request's fields. Raises OSError, ValueError or TypeError saying why it is not."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if info.st_uid != os.getuid():
            raise ValueError(f"written by uid {info.st_uid}")
        data = os.read(fd, MAX_REQUEST_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_REQUEST_BYTES:
        raise ValueError(f"larger than {MAX_REQUEST_BYTES} bytes")
    request = ControlRequest(**json.loads(data))
    types = {"id": str, "job": str, "action": str, "directory": (str, type(None)),
             "drain": bool}
    for name, kind in types.items():
        if not isinstance(getattr(request, name), kind):
            raise TypeError(f"its {name} is {getattr(request, name)!r}")
    return request


def error_line(error: BaseException) -> str:
    """An error in one line: its type and the first line of its message."""
    lines = str(error).strip().splitlines()
    return f"{type(error).__name__}: {lines[0] if lines else ''}"[:1000]
