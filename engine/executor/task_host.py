"""Subtask hosts: on Spark, each subtask of a job runs in one process for the whole job.

Spark hands a partition's task to whichever Python worker is free, so from one
micro-batch to the next the same subtask would run in different processes: its
keyed state restored from the store again, its functions opened again with their
in-memory fields lost, and a ``SinkFunction`` closed only in the process that ran
the final batch. Flink keeps a subtask in one slot for the life of the job; so do
we, per machine. The first Python worker to run subtask (run, stage, partition)
forks a *host* process: a copy of the worker with the job already loaded, which
owns the subtask's ``StageInstance``. Every later task of that subtask on the
machine sends its input to the host over a Unix socket, and passes on what the
host returns. With object reuse, where every stage of a partition index runs in one
task, the stages of the index share one host (``host_name``), which keeps the chunks
the index sends itself from one stage to the next. A sink subtask's commits are made in
its host too (by its next batch's task, ``engine.runtime.sink_commits``, or a commit task,
``commit_hosted``): what a committer keeps open between batches (a Kafka transactional
producer of the subtask's id) then has one owner for the run.

A host serves one task at a time, and exits when the driver removes the run's
socket directory (``remove_run``, at the end of a job on a local master), when idle
for ``HOST_IDLE_SECONDS`` (``FINISHED_IDLE_SECONDS`` after the final batch), or when
the worker daemon that started it is gone. It keeps
nothing that is not in the state store: a task that finds no host (first batch,
another machine, a host that died) starts one, which rebuilds the instance from the
batch's base version as any process would (``engine.runtime.task.run_task``).
"""
import hashlib
import os
import pickle
import select
import shutil
import socket
import stat
import struct
import sys
import tempfile
import time
import traceback
from collections import OrderedDict
from typing import Callable, Iterable, List, Optional

import cloudpickle

from core.private_paths import private_directory
from engine.batch import BatchInfo
from engine.runtime import task
from engine.runtime.sink_commits import start_commits

HOST_IDLE_SECONDS = 300
FINISHED_IDLE_SECONDS = 10  # after the final batch: Spark may run a task of it again
CONNECTION_ATTEMPTS = 3
_LENGTH = struct.Struct("!Q")
_CREDENTIALS = struct.Struct("3i")  # a peer's pid, uid, gid (SO_PEERCRED)
_inherited = []  # the forking worker's cached instances: never touched (nor freed) in a host


def hosts_supported() -> bool:
    """Hosts need fork and Unix sockets (not on Windows: tasks then run in the worker)."""
    return hasattr(os, "fork") and hasattr(socket, "AF_UNIX")


def run_directory(run_id: str) -> str:
    """The directory of a run's host sockets and exchange files on this machine, in this
    user's private directory under the temporary directory."""
    return os.path.join(private_directory(
        os.path.join(tempfile.gettempdir(), f"spark-datastream-{os.getuid()}")), run_id)


def remove_run(run_id: str) -> None:
    """Ends the run's hosts on this machine (they exit when their socket is gone)."""
    shutil.rmtree(run_directory(run_id), ignore_errors=True)


def host_name(stage_id: int, partition: int, by_partition: bool) -> str:
    """The host of a subtask: its own, or (``by_partition``: with object reuse, where
    ``BatchInfo.keeps_own_chunks``) the one its partition index's subtasks of every stage
    share."""
    return f"partition {partition}" if by_partition else f"{stage_id}/{partition}"


def run_hosted(load_job: Callable, run_id: str, stage_id: int, partition: int,
               batch: BatchInfo, inputs: Iterable) -> List:
    """``engine.runtime.task.run_task`` in the subtask's host (started here if there is none);
    returns its results. Even a job of one batch runs in a host: the worker, which forks
    the hosts, must never run a task itself, since a library that starts threads (RocksDB
    starts its background threads once per process) would be left without them in every
    host forked after, and hang there."""
    host = host_name(stage_id, partition, batch.keeps_own_chunks)
    return _in_host(load_job, run_id, host, _run_task, stage_id, partition, batch,
                    list(inputs))


def run_in_running_host(run_id: str, stage_id: int, partition: int, batch: BatchInfo,
                        inputs: Iterable) -> List:
    """``run_hosted`` from the driver of a local master, whose earlier batch's tasks
    started the subtask's host: HostGone if there is none (the driver starts no host)."""
    host = host_name(stage_id, partition, batch.keeps_own_chunks)
    return _in_host(None, run_id, host, _run_task, stage_id, partition, batch, list(inputs))


class HostGone(ConnectionError):
    """A subtask's host is not running (it ended, or was never started)."""


def commit_hosted(load_job: Callable, run_id: str, host: str, commit) -> None:
    """Makes ``commit`` (an ``engine.batch.SinkCommit``) in the host of the sink's subtask
    (``host_name``; started here if there is none): one process per machine commits a
    subtask's batches for the whole run, as the next batch's tasks do, so the
    connections it keeps (a Kafka transactional producer, whose id is the subtask's)
    have one owner, not one per worker process fencing the others."""
    _in_host(load_job, run_id, host, _commit, commit)


def _run_task(load_job, run_id, stage_id, partition, batch, inputs) -> List:
    return list(task.run_task(load_job, run_id, stage_id, partition, batch, inputs))


def _commit(load_job, run_id, commit) -> None:
    task.configure_storage(task.job_of(run_id, load_job))
    failure = start_commits([commit])()  # (in the thread of the commits of batches' tasks)
    if failure is not None:
        raise failure.error


def _in_host(load_job: Optional[Callable], run_id: str, host: str, call: Callable, *args):
    """``call(load_job, run_id, *args)`` in ``host``, started here if there is none
    (``load_job`` None: HostGone instead)."""
    path = _socket_path(run_id, host)
    # (cloudpickle, as Spark ships functions: a committer may hold the user's lambdas)
    request = cloudpickle.dumps((call, args), pickle.HIGHEST_PROTOCOL)
    for attempt in range(CONNECTION_ATTEMPTS):
        try:
            reply = _ask(path, request, load_job, run_id)
            break
        except ConnectionError:  # the host ended meanwhile: a new one runs the task afresh
            if attempt + 1 == CONNECTION_ATTEMPTS:
                raise
    status, payload = pickle.loads(reply)
    if status != "ok":
        raise RuntimeError(f"the subtask host {host!r} failed:\n{payload}")
    return payload


def _ask(path: str, request: bytes, *host) -> bytearray:
    with _host_connection(path, *host) as connection:
        _send(connection, request)
        return _receive(connection)


def _socket_path(run_id: str, host: str) -> str:
    return os.path.join(run_directory(run_id), _socket_name(host))


def _socket_name(host: str) -> str:
    # Unix socket paths are short (~100 bytes): the name is a digest.
    return hashlib.sha1(host.encode()).hexdigest()[:16]


def _host_connection(path: str, load_job, run_id) -> socket.socket:
    for _ in range(3):
        connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            connection.connect(path)
        except (FileNotFoundError, ConnectionRefusedError):
            connection.close()
            if load_job is None:
                raise HostGone(f"no subtask host listens at {path}") from None
            _start_host(path, load_job, run_id)
            continue
        if not _same_user(connection):
            connection.close()
            raise PermissionError(f"the subtask host at {path} runs as another user: "
                                  "nothing is sent to it")
        return connection
    raise RuntimeError(f"no subtask host could be started at {path}")


def _start_host(path: str, load_job, run_id) -> None:
    """Binds the host's socket here (so two workers cannot both start one) and forks."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        try:
            listener.bind(path)
        except OSError:  # a socket file left by a host that died: replace it
            os.unlink(path)
            listener.bind(path)
        listener.listen(4)
        job = task.job_of(run_id, load_job)  # loaded here, so the host inherits it
        daemon = os.getppid()
        sys.stdout.flush()
        sys.stderr.flush()
        middle = os.fork()  # forks twice, so the host is nobody's child to wait for
        if middle == 0:
            code = 0
            try:
                if os.fork() == 0:
                    _serve(listener, path, daemon, lambda: job, run_id)
            except BaseException:
                traceback.print_exc()
                code = 1
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        os.waitpid(middle, 0)
    finally:
        listener.close()


def _serve(listener: socket.socket, path: str, daemon: int, load_job, run_id) -> None:
    """The host's loop: one task per connection, until there is no more work."""
    _close_inherited_sockets(keep=listener.fileno())
    _inherited.append((task._instances, task._jobs))
    task._instances, task._jobs = OrderedDict(), {}
    idle_since, idle_seconds = time.monotonic(), HOST_IDLE_SECONDS
    while True:
        if not select.select([listener], [], [], 1.0)[0]:
            if (time.monotonic() - idle_since > idle_seconds
                    or not os.path.exists(path) or not _alive(daemon)):
                _stop_listening(listener, path)
                return
            continue
        request = _take_request(listener)
        if request is None:
            continue
        connection, (call, args) = request
        with connection:
            try:
                reply = ("ok", call(load_job, run_id, *args))
            except BaseException:
                reply = ("error", traceback.format_exc())
            try:
                _send(connection, pickle.dumps(reply, pickle.HIGHEST_PROTOCOL))
            except OSError:  # the worker was killed (a cancelled task): Spark runs it again
                pass
        idle_since = time.monotonic()
        if call is _run_task and args[2].is_final and reply[0] == "ok":
            idle_seconds = FINISHED_IDLE_SECONDS


def _take_request(listener: socket.socket):
    """The next task's connection and its request, or None for a peer that does not run
    as this user (closed unread: nothing from it is unpickled)."""
    connection, _ = listener.accept()
    if not _same_user(connection):
        connection.close()
        return None
    return connection, pickle.loads(_receive(connection))


def _same_user(connection: socket.socket) -> bool:
    """Whether the process at the other end of a Unix socket runs as this user (its
    credentials, on Linux; elsewhere the private run directory alone keeps others out)."""
    if not hasattr(socket, "SO_PEERCRED"):
        return True
    _, uid, _ = _CREDENTIALS.unpack(connection.getsockopt(
        socket.SOL_SOCKET, socket.SO_PEERCRED, _CREDENTIALS.size))
    return uid == os.getuid()


def _stop_listening(listener: socket.socket, path: str) -> None:
    """Takes the host's socket away; a task connecting meanwhile sees its connection
    reset and asks a new host (``run_hosted``)."""
    try:
        os.unlink(path)
    except FileNotFoundError:  # (the driver removed the run's directory)
        pass
    listener.close()


def _close_inherited_sockets(keep: int) -> None:
    """Closes the worker's sockets (to Spark, to external systems): they are not the
    host's to use, and Spark sees a worker end only when every copy of its socket is
    closed. Files stay open (e.g. a log file the job opened)."""
    fd_directory = "/proc/self/fd" if os.path.isdir("/proc/self/fd") else "/dev/fd"
    for fd in [int(name) for name in os.listdir(fd_directory)]:
        if fd > 2 and fd != keep:
            try:
                if stat.S_ISSOCK(os.fstat(fd).st_mode):
                    os.close(fd)
            except OSError:  # (the directory listing's own descriptor, already closed)
                pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _send(connection: socket.socket, data: bytes) -> None:
    connection.sendall(_LENGTH.pack(len(data)))
    connection.sendall(data)


def _receive(connection: socket.socket) -> bytearray:
    header = _read_exactly(connection, _LENGTH.size)
    return _read_exactly(connection, _LENGTH.unpack(header)[0])


def _read_exactly(connection: socket.socket, size: int) -> bytearray:
    data = bytearray(size)
    view = memoryview(data)
    got = 0
    while got < size:
        n = connection.recv_into(view[got:])
        if n == 0:
            raise ConnectionError("the subtask host closed the connection (did it die?)")
        got += n
    return data
