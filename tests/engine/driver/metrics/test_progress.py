"""The progress line: what it shows, that print() output stays whole above it, and that
it stays quiet off a terminal or when switched off."""
import io
import re

from rich.console import Console

from engine.driver import scheduler
from engine.driver.progress import ProgressDisplay, status_line
from tests.conftest import make_env

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _job(env):
    env.from_collection(list(range(30))).filter(lambda x: x % 3 != 0).print()


def test_print_output_stays_whole_above_the_progress_line(monkeypatch):
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=300)
    shown = []

    def on_terminal(job_name):
        shown.append(ProgressDisplay(job_name, console=console))
        return shown[-1]
    monkeypatch.setattr(scheduler, "progress_display", on_terminal)
    env = make_env("local", micro_batch_size=10)
    _job(env)
    env.execute("progressing")
    assert len(shown) == 1
    lines = [line.strip() for line in ANSI.sub("", screen.getvalue()).replace("\r", "\n")
             .split("\n") if line.strip()]
    printed = [line for line in lines if not line.startswith("progressing")]
    assert printed == [str(x) for x in range(30) if x % 3 != 0]  # whole lines, in order
    status = [line for line in lines if line.startswith("progressing")]
    assert status[-1].startswith("progressing | batch 2 | in ")
    assert "watermark end of input" in status[-1] and "late dropped 0" in status[-1]


def test_the_status_line_shows_watermark_lag_and_checkpoint():
    job = {"numRecordsInPerSecond": 1234.4, "numRecordsOutPerSecond": 10.0,
           "currentInputWatermark": 1_700_000_000_000, "watermarkLag": 2_500,
           "numLateRecordsDropped": 3, "numRecordsInErrors": 0,
           "numberOfCompletedCheckpoints": 4, "lastCheckpointDuration": 12.3,
           "lastCheckpointSize": 2048}
    assert status_line({"job_name": "j", "batch": 7, "job": job}) == (
        "j | batch 7 | in 1,234 rec/s | out 10 rec/s | "
        "watermark 2023-11-14T22:13:20.000Z (lag 2.5 s) | late dropped 3 | "
        "checkpoint 4 (12 ms, 2,048 bytes)")
    job["numRecordsInErrors"] = 1500  # shown once a source skipped unreadable records
    assert " | late dropped 3 | unreadable skipped 1,500 | checkpoint 4" in \
        status_line({"job_name": "j", "batch": 7, "job": job})


def test_quiet_when_stdout_is_not_a_terminal_or_switched_off(capfd, monkeypatch):
    for conf in ({}, {"execution.progress.enabled": "false"}):
        env = make_env("local", micro_batch_size=10, **conf)
        _job(env)
        env.execute("quiet")
        out, err = capfd.readouterr()
        assert out.split() == [str(x) for x in range(30) if x % 3 != 0] and err == ""
    monkeypatch.setattr("sys.stdout.isatty", lambda: True, raising=False)
    env = make_env("local", micro_batch_size=10, **{"execution.progress.enabled": "false"})
    _job(env)
    env.execute("quiet")
    assert "quiet |" not in capfd.readouterr().out
