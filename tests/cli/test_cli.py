"""The command line client end to end: the installed ``spark-datastream`` script (and
``python -m cli``) in subprocesses, running tests/cli/stream_job.py. One test runs
on local Spark (``local[2]``); the others use the in-process executor to be quick."""
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

from engine.driver.job_control import read_status
from tests.conftest import finished_lines

JOB = os.path.join(os.path.dirname(__file__), "stream_job.py")
SCRIPT = os.path.join(os.path.dirname(sys.executable), "spark-datastream")
LOCAL = ("-D", "execution.executor=local")


def _cli(*args, timeout=120, env=None):
    return subprocess.run([SCRIPT, *args], capture_output=True, text=True, timeout=timeout,
                          env=env)


def _start(checkpoints, out, *options):
    """Starts ``run`` of the unbounded job in the background."""
    return subprocess.Popen([SCRIPT, "run", JOB, "--checkpoint-dir", str(checkpoints),
                             *options, "--", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _job_dir(checkpoints):
    return os.path.join(str(checkpoints), "cli-stream")


def _wait_for_batch(process, checkpoints, batch_id, timeout=180):
    """Waits until the running job has committed ``batch_id``; returns its status."""
    deadline = time.monotonic() + timeout
    while True:
        assert process.poll() is None, process.communicate()[1][-3000:]
        status = read_status(_job_dir(checkpoints))
        if status is not None and status.last_batch is not None and \
                status.last_batch >= batch_id and status.status == "running":
            return status
        assert time.monotonic() < deadline, "the job committed no batch in time"
        time.sleep(0.05)


def _ended(process, timeout=120):
    out, err = process.communicate(timeout=timeout)
    return process.returncode, out, err


def _table(output):
    """``list``'s rows as dicts by column header."""
    header, *rows = output.splitlines()
    starts = [header.index(column) for column in
              ("ID", "NAME", "START", "LAST BATCH", "WATERMARK", "STATUS")]
    names = ["id", "name", "start", "last_batch", "watermark", "status"]
    return [{name: row[start:end].strip() for name, start, end in
             zip(names, starts, starts[1:] + [None])} for row in rows]


def _failure_free_lines(tmp_path, count):
    """The output of a run of ``count`` records without stops or restarts."""
    out = tmp_path / "failure-free"
    result = _cli("run", JOB, *LOCAL, "--checkpoint-dir", str(tmp_path / "ff-checkpoints"),
                  "--", str(out), "--count", str(count), "--rate", "100000")
    assert result.returncode == 0, result.stderr
    return finished_lines(out)


def test_stop_with_savepoint_restart_and_cancel_on_local_spark(tmp_path):
    checkpoints, out, savepoints = tmp_path / "checkpoints", tmp_path / "out", tmp_path / "sp"
    spark = ("--master", "local[2]", "--parallelism", "2")
    first = _start(checkpoints, out, *spark)
    status = _wait_for_batch(first, checkpoints, 2)

    rows = _table(_cli("list", "--checkpoint-dir", str(checkpoints)).stdout)
    assert [(r["id"], r["name"], r["status"]) for r in rows] == \
        [(status.id, "cli-stream", "running")]
    assert rows[0]["watermark"].isdigit()  # event time is i seconds: a watermark moved

    taken = _cli("savepoint", "cli-stream", str(savepoints), "--checkpoint-dir", str(checkpoints))
    assert taken.returncode == 0, taken.stderr
    assert os.path.isfile(os.path.join(taken.stdout.strip(), "_metadata"))

    stopped = _cli("stop", status.id, "--savepoint-dir", str(savepoints),
                   "--checkpoint-dir", str(checkpoints))
    assert stopped.returncode == 0, stopped.stderr
    stop_savepoint = stopped.stdout.strip()
    assert os.path.isfile(os.path.join(stop_savepoint, "_metadata"))
    returncode, _, err = _ended(first)
    assert returncode == 0, err[-3000:]
    assert read_status(_job_dir(checkpoints)).status == "stopped"
    lines_before_restart = len(finished_lines(out))

    # restart from the stop's savepoint, at another parallelism of the sums
    second = _start(checkpoints, out, "--master", "local[2]", "--parallelism", "3",
                    "--from-savepoint", stop_savepoint)
    restarted = _wait_for_batch(second, checkpoints, 2)
    assert restarted.id != status.id
    cancelled = _cli("cancel", "cli-stream", "--checkpoint-dir", str(checkpoints))
    assert cancelled.returncode == 0, cancelled.stderr
    assert "Cancelled job 'cli-stream'" in cancelled.stdout
    returncode, _, err = _ended(second)
    assert returncode == 0, err[-3000:]
    rows = _table(_cli("list", "--checkpoint-dir", str(checkpoints)).stdout)
    assert [(r["id"], r["status"]) for r in rows] == [(restarted.id, "cancelled")]

    lines = finished_lines(out)
    assert len(lines) > lines_before_restart  # the restarted job went on
    assert Counter(lines) == Counter(_failure_free_lines(tmp_path, len(lines)))


def test_run_of_a_bounded_job_finishes_and_list_shows_it(tmp_path):
    checkpoints = tmp_path / "checkpoints"
    result = _cli("run", JOB, *LOCAL, "--checkpoint-dir", str(checkpoints), "-p", "2",
                  "--", str(tmp_path / "out"), "--count", "40", "--rate", "100000")
    assert result.returncode == 0, result.stderr
    assert len(finished_lines(tmp_path / "out")) == 40
    status = read_status(_job_dir(checkpoints))
    # a finished job's state is gone; its status stays for ``list``
    assert os.listdir(_job_dir(checkpoints)) == ["status.json"]
    assert status.pid != os.getpid() and status.last_batch >= 0
    rows = _table(_cli("list", "--checkpoint-dir", str(checkpoints)).stdout)
    assert [(r["id"], r["name"], r["watermark"], r["status"]) for r in rows] == \
        [(status.id, "cli-stream", "end", "finished")]
    assert rows[0]["last_batch"].startswith(f"{status.last_batch} at ")


def test_a_failed_job_exits_with_its_reason_in_one_line(tmp_path):
    checkpoints = tmp_path / "checkpoints"
    result = _cli("run", JOB, *LOCAL, "--checkpoint-dir", str(checkpoints),
                  "--", str(tmp_path / "out"), "--count", "40", "--fail-at", "7")
    assert result.returncode == 1
    reason = result.stderr.strip().splitlines()[-1]
    assert reason.startswith("spark-datastream: ") and "Reduce" in reason
    assert "injected failure at record 7" in reason
    [row] = _table(_cli("list", "--checkpoint-dir", str(checkpoints)).stdout)
    assert row["status"].startswith("failed: JobExecutionException: ")
    assert "injected failure at record 7" in row["status"]
    refused = _cli("savepoint", "cli-stream", str(tmp_path / "sp"),
                   "--checkpoint-dir", str(checkpoints))
    assert refused.returncode == 1
    assert "is not running (failed: " in refused.stderr


def test_stop_without_a_savepoint_directory_fails_and_the_job_runs_on(tmp_path):
    checkpoints = tmp_path / "checkpoints"
    job = _start(checkpoints, tmp_path / "out", *LOCAL)
    try:
        _wait_for_batch(job, checkpoints, 1)
        refused = _cli("stop", "cli-stream", "--checkpoint-dir", str(checkpoints))
        assert refused.returncode == 1
        assert "No savepoint directory configured" in refused.stderr
        assert len(refused.stderr.strip().splitlines()) == 1
        # a second run of the same job is refused while the first runs
        again = _cli("run", JOB, *LOCAL, "--checkpoint-dir", str(checkpoints),
                     "--", str(tmp_path / "out2"))
        assert again.returncode == 1 and "is running already" in again.stderr
        assert job.poll() is None
        assert read_status(_job_dir(checkpoints)).status == "running"
        assert _cli("cancel", "cli-stream", "--checkpoint-dir",
                    str(checkpoints)).returncode == 0
        code = _ended(job)[0]  # (the job may still be ending when cancel returns)
    finally:
        if job.poll() is None:
            job.kill()
    assert code == 0
    assert read_status(_job_dir(checkpoints)).status == "cancelled"


def test_a_job_whose_driver_died_is_lost(tmp_path):
    checkpoints = tmp_path / "checkpoints"
    job = _start(checkpoints, tmp_path / "out", *LOCAL)
    _wait_for_batch(job, checkpoints, 1)
    job.send_signal(signal.SIGKILL)
    job.wait()
    [row] = _table(_cli("list", "--checkpoint-dir", str(checkpoints)).stdout)
    assert row["status"] == f"lost: its driver, pid {job.pid} on {os.uname().nodename}, is gone"
    refused = _cli("cancel", "cli-stream", "--checkpoint-dir", str(checkpoints))
    assert refused.returncode == 1 and "is not running (lost: " in refused.stderr
    # the job can be run again: it resumes from its last committed batch
    rerun = _cli("run", JOB, *LOCAL, "--checkpoint-dir", str(checkpoints),
                 "--", str(tmp_path / "out"), "--count", "300", "--rate", "100000")
    assert rerun.returncode == 0, rerun.stderr
    assert Counter(finished_lines(tmp_path / "out")) == Counter(_failure_free_lines(tmp_path, 300))


def test_plan_prints_the_plan_without_running_the_job(tmp_path):
    result = _cli("plan", JOB, "-p", "3", "--checkpoint-dir", str(tmp_path / "checkpoints"),
                  "--", str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    nodes = {node["type"]: node for node in json.loads(result.stdout)["nodes"]}
    assert nodes["Source: events"]["parallelism"] == 1
    assert nodes["Reduce, Map"]["parallelism"] == 3  # (chained)
    assert not (tmp_path / "out").exists() and not (tmp_path / "checkpoints").exists()


def test_plan_draws_the_readme_example_with_graphviz(tmp_path):
    example = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
                           "examples", "word_count.py")
    picture = tmp_path / "plan.svg"
    result = _cli("plan", example, "--picture", str(picture))
    assert result.returncode == 0, result.stderr
    svg = picture.read_text()
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg
    for text in ("Source: Collection Source", "FlatMap", "Reduce", "Parallelism: 1", "HASH"):
        assert text in svg, text


SETTINGS_PROGRAM = """
import sys
from api.common import Configuration
from api.datastream import StreamExecutionEnvironment

own = Configuration()
if sys.argv[1:] == ["--own-parallelism"]:
    own.set_string("parallelism.default", "5")
env = StreamExecutionEnvironment.get_execution_environment(own)
print(env.get_parallelism(), env.get_config().get_global_job_parameters(),
      env.get_checkpoint_config().get_checkpoint_storage().get_checkpoint_path())
"""


def test_command_line_settings_are_the_base_of_the_programs_environments(tmp_path):
    program = tmp_path / "settings.py"
    program.write_text(SETTINGS_PROGRAM)
    options = ("-p", "4", "-D", "pipeline.global-job-parameters=a:1",
               "--checkpoint-dir", str(tmp_path / "ck"))
    result = _cli("run", str(program), *options)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[0] == f"4 {{'a': '1'}} {tmp_path / 'ck'}"
    own = _cli("run", str(program), *options, "--", "--own-parallelism")
    assert own.returncode == 0, own.stderr
    assert own.stdout.startswith("5 ")  # what the program configures wins, as in Flink


def test_python_m_and_the_checkpoint_dir_variable(tmp_path):
    env = dict(os.environ, SPARK_DATASTREAM_CHECKPOINT_DIR=str(tmp_path / "ck"))
    command = [sys.executable, "-m", "cli"]
    empty = subprocess.run([*command, "list"], capture_output=True, text=True, env=env)
    assert empty.returncode == 0 and empty.stdout.strip() == f"No jobs under {tmp_path / 'ck'}."
    ran = subprocess.run([*command, "run", JOB, *LOCAL, "--", str(tmp_path / "out"),
                          "--count", "5"], capture_output=True, text=True, env=env)
    assert ran.returncode == 0, ran.stderr
    [row] = _table(_cli("list", env=env).stdout)
    assert (row["name"], row["status"]) == ("cli-stream", "finished")


@pytest.mark.parametrize("args,reason", [
    (("run", "missing.py"), "missing.py: no such file"),
    (("run", JOB, "-D", "novalue"), "-D 'novalue': expected KEY=VALUE"),
    (("savepoint", "nope", "sp"), "no job 'nope' under "),
])
def test_mistakes_exit_with_a_one_line_reason(tmp_path, args, reason):
    result = _cli(*args, "--checkpoint-dir", str(tmp_path))
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"spark-datastream: {reason}")
