"""The driver trusts a job directory and its control requests only when they are the
user's own: a job directory another user made is refused, requests in a control
directory another user owns are not read, and a control file that is not a request (a
FIFO, a link, garbage) neither hangs the driver nor is read again. The other user is a
real uid (``setpriv``; needs root, as CI)."""
import logging
import os
import stat
import subprocess
import threading

import pytest

from engine.driver.job_control import CONTROL_DIR, REJECTED
from tests.conftest import NOBODY, make_env, needs_another_user

JOB = "guarded"


def run_job(checkpoints, timeout_s: float = 120, **conf):
    """Runs a bounded job of several batches in a thread; returns its sorted output or
    raises its error (fails if it does not end within ``timeout_s``)."""
    env = make_env("local", micro_batch_size=2, **{"state.checkpoints.dir": str(checkpoints)},
                   **conf)
    outcome = {}

    def run():
        try:
            with env.from_collection(list(range(10))).map(lambda x: x * 2) \
                    .execute_and_collect(JOB) as results:
                outcome["out"] = sorted(results)
        except BaseException as e:
            outcome["error"] = e
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(timeout_s)
    assert not thread.is_alive(), "the job hangs"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["out"]


def as_nobody(*command: str) -> None:
    subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                    *command], check=True, timeout=30)


@needs_another_user
def test_a_job_directory_another_user_made_is_refused(open_tmp):
    checkpoints = open_tmp / "checkpoints"  # a shared root, as /tmp is
    checkpoints.mkdir()
    os.chmod(checkpoints, 0o1777)
    as_nobody("mkdir", str(checkpoints / JOB))
    with pytest.raises(PermissionError, match=f"The job directory {checkpoints / JOB} is not "
                                              f"this user's own .*owned by uid {NOBODY}"):
        run_job(checkpoints)


def test_a_world_writable_job_directory_is_refused(tmp_path):
    (tmp_path / JOB).mkdir()
    os.chmod(tmp_path / JOB, 0o777)
    with pytest.raises(PermissionError, match=r"writable by others \(mode 777\)"):
        run_job(tmp_path)


def test_a_group_writable_job_directory_is_trusted_only_where_the_group_is(tmp_path):
    (tmp_path / JOB).mkdir()
    os.chmod(tmp_path / JOB, 0o770)
    with pytest.raises(PermissionError, match=r"writable by others \(mode 770\).*set "
                                              r"'state.checkpoints.group-access: true'"):
        run_job(tmp_path)
    assert run_job(tmp_path, **{"state.checkpoints.group-access": "true"}) == \
        [2 * x for x in range(10)]


@needs_another_user
def test_requests_in_a_control_directory_of_another_user_are_not_read(tmp_path, caplog):
    control = tmp_path / JOB / CONTROL_DIR
    control.mkdir(parents=True)
    os.mkfifo(control / "a.json")  # read, it would hang the driver
    (control / "b.json").write_text("not a request")
    os.chown(control, NOBODY, NOBODY)
    with caplog.at_level(logging.WARNING, logger="engine.driver.job_control"):
        assert run_job(tmp_path) == [2 * x for x in range(10)]
    assert sorted(os.listdir(control)) == ["a.json", "b.json"]  # untouched
    assert f"Requests are not taken: The control directory {control}" in caplog.text


def test_a_fifo_a_link_and_garbage_in_control_are_set_aside_without_hanging(tmp_path, caplog):
    control = tmp_path / JOB / CONTROL_DIR
    control.mkdir(parents=True)
    os.mkfifo(control / "fifo.json")
    (tmp_path / "elsewhere.json").write_text('{"id": "x", "job": "y", "action": "cancel"}')
    os.symlink(tmp_path / "elsewhere.json", control / "link.json")
    (control / "garbage.json").write_text("{not json")
    (control / "wrong.json").write_text('{"id": 1, "job": "y", "action": "cancel"}')
    with caplog.at_level(logging.WARNING, logger="engine.driver.job_control"):
        assert run_job(tmp_path) == [2 * x for x in range(10)]
    names = ["fifo.json", "garbage.json", "link.json", "wrong.json"]
    assert sorted(os.listdir(control)) == [n + REJECTED for n in names]
    assert "fifo.json is not a control request (not a regular file)" in caplog.text
    assert "wrong.json is not a control request (its id is 1)" in caplog.text


def test_the_status_and_metrics_files_are_readable_by_this_user_only(tmp_path):
    # They quote records (error lines, gauges): others may not read them, whatever umask.
    old = os.umask(0o022)
    try:
        env = make_env("local", micro_batch_size=1, **{"state.checkpoints.dir": str(tmp_path)})
        env.from_collection([1, 0]).map(lambda x: 1 // x).print()
        with pytest.raises(Exception, match="ZeroDivisionError"):
            env.execute(JOB)
    finally:
        os.umask(old)
    for name in ("status.json", "metrics.jsonl"):
        path = tmp_path / JOB / name
        assert path.exists() and stat.S_IMODE(os.stat(path).st_mode) == 0o600, name
    assert "ZeroDivisionError" in (tmp_path / JOB / "status.json").read_text()
