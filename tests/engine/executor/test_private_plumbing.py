"""Another local user can neither receive a job's records nor run code as the job's
user through the engine's local plumbing: the run directory under the temporary
directory must be this user's own, and a subtask host and its tasks talk only to peers
of the same user. The attacker is a real other uid (``setpriv``; needs root, as CI)."""
import os
import pickle
import socket
import stat
import subprocess
import sys
import tempfile
import textwrap

import pytest

from core.private_paths import private_directory
from engine.batch import BatchInfo
from engine.executor import task_host
from tests.conftest import NOBODY, needs_another_user

pytestmark = needs_another_user


def as_nobody(script: str, *args: str) -> subprocess.Popen:
    """Runs a Python script as uid/gid 65534 (another user)."""
    return subprocess.Popen(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
         sys.executable, "-c", textwrap.dedent(script), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def run_as_nobody(script: str, *args: str) -> str:
    process = as_nobody(script, *args)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 0, err
    return out


@pytest.fixture
def shared_tmp(open_tmp, monkeypatch):
    """A temporary directory as /tmp is: everyone may create entries, each their own."""
    shared = open_tmp / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    return shared


def batch(is_final=False):
    return BatchInfo("run", 1, 0, is_final, "/nonexistent", 0, False)


LISTENER = """
    import os, socket, sys
    path = sys.argv[1]
    os.makedirs(os.path.dirname(path), mode=0o777, exist_ok=True)
    os.chmod(os.path.dirname(path), 0o777)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o777)
    listener.listen(1)
    print("listening", flush=True)
    listener.settimeout(5)
    try:
        connection, _ = listener.accept()
        connection.settimeout(2)
        print("received", len(connection.recv(1 << 20)), flush=True)
    except OSError:
        print("nothing", flush=True)
"""


def test_a_run_directory_another_user_made_first_is_refused_and_gets_no_record(shared_tmp):
    # The other user makes this user's run directory before the job runs and listens where
    # a subtask host's socket would be.
    root = shared_tmp / f"spark-datastream-{os.getuid()}"
    name = task_host._socket_name(task_host.host_name(1, 0, batch().keeps_own_chunks))
    attacker = as_nobody(LISTENER, str(root / "run" / name))
    assert attacker.stdout.readline().strip() == "listening"
    with pytest.raises(PermissionError, match=f"{root} is not a private directory of this "
                                              f"user .*owned by uid {NOBODY}"):
        task_host.run_hosted(lambda: None, "run", 1, 0, batch(), [("records", b"secret")])
    out, _ = attacker.communicate(timeout=30)
    assert out.strip() == "nothing"


def test_a_link_in_place_of_the_run_directory_is_refused(shared_tmp, open_tmp):
    target = open_tmp / "elsewhere"
    target.mkdir()
    os.chmod(target, 0o777)
    root = shared_tmp / f"spark-datastream-{os.getuid()}"
    run_as_nobody("import os, sys; os.symlink(sys.argv[1], sys.argv[2])", str(target), str(root))
    with pytest.raises(PermissionError, match="it is a symbolic link"):
        task_host.run_directory("run")
    assert os.listdir(target) == []


def test_this_users_own_directory_is_closed_to_others(tmp_path):
    path = tmp_path / "mine"
    path.mkdir(mode=0o777)
    os.chmod(path, 0o777)
    assert private_directory(str(path)) == str(path)
    assert stat.S_IMODE(os.lstat(path).st_mode) == 0o700
    made = private_directory(str(tmp_path / "new"))
    assert stat.S_IMODE(os.lstat(made).st_mode) == 0o700


PAYLOAD_SENDER = """
    import os, pickle, socket, struct, sys
    class Payload:
        def __reduce__(self):
            return (os.system, ("touch " + sys.argv[2],))
    data = pickle.dumps(Payload())
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(sys.argv[1])
    connection.sendall(struct.pack("!Q", len(data)) + data)
    connection.close()
"""


def test_a_host_does_not_unpickle_what_another_user_sends(open_tmp):
    os.chmod(open_tmp, 0o777)
    path = str(open_tmp / "host")
    marker = open_tmp / "marker"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o777)
    listener.listen(1)
    try:
        run_as_nobody(PAYLOAD_SENDER, path, str(marker))
        assert task_host._take_request(listener) is None
    finally:
        listener.close()
    assert not marker.exists()
    # The same request from this user is taken (and would be unpickled).
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    os.unlink(path)
    listener.bind(path)
    listener.listen(1)
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as own:
            own.connect(path)
            task_host._send(own, pickle.dumps(("stage", "partition", "batch", [])))
            connection, request = task_host._take_request(listener)
            connection.close()
        assert request == ("stage", "partition", "batch", [])
    finally:
        listener.close()


def test_a_task_sends_nothing_to_a_host_of_another_user(open_tmp):
    os.chmod(open_tmp, 0o777)
    path = str(open_tmp / "run" / "host")
    attacker = as_nobody(LISTENER, path)
    assert attacker.stdout.readline().strip() == "listening"
    with pytest.raises(PermissionError, match="runs as another user: nothing is sent"):
        task_host._ask(path, pickle.dumps("secret"), lambda: None, "run")
    out, _ = attacker.communicate(timeout=30)
    assert out.strip() in ("nothing", "received 0")
