"""Live progress of a running job in the terminal (``execution.progress.enabled``).

One status line, redrawn after each committed batch with rich's ``Live``: batch
number, records in and out per second, the watermark and its lag behind wall-clock
time, late records dropped, unreadable records skipped (if any), the last checkpoint
and its duration. While it is shown, everything printed to stdout (the ``print()`` sink,
the user's own ``print``) goes through rich and appears above the line, never inside it. Nothing is shown when stdout
is not a terminal.
"""
import datetime
import sys
from typing import Optional

from engine.driver.metric_reporters import MetricReporter
from engine.time.watermarks import MAX_WATERMARK, MIN_WATERMARK


class ProgressDisplay(MetricReporter):
    """The status line of one job on ``console`` (a rich Console; default: stdout)."""

    def __init__(self, job_name: str, console=None):
        from rich.console import Console
        from rich.live import Live
        from rich.text import Text
        self.job_name = job_name
        self.live = Live(Text(f"{job_name}: starting"),
                         console=console or Console(), auto_refresh=False)
        self.live.start(refresh=True)  # raises rich.errors.LiveError if one is shown already

    def report(self, snapshot: dict) -> None:
        from rich.text import Text
        self.live.update(Text(status_line(snapshot)), refresh=True)

    def close(self, discard: bool = False) -> None:
        self.live.stop()


def progress_display(job_name: str) -> Optional[ProgressDisplay]:
    """A ProgressDisplay if stdout is a terminal and no other job shows one (else None)."""
    if not sys.stdout.isatty():
        return None
    from rich.errors import LiveError
    try:
        return ProgressDisplay(job_name)
    except LiveError:  # another job of this process shows its progress
        return None


def status_line(snapshot: dict) -> str:
    job = snapshot["job"]
    parts = [f"{snapshot['job_name']}", f"batch {snapshot['batch']}",
             f"in {job['numRecordsInPerSecond']:,.0f} rec/s",
             f"out {job['numRecordsOutPerSecond']:,.0f} rec/s",
             f"watermark {_watermark(job['currentInputWatermark'])}"]
    if job.get("watermarkLag") is not None:
        parts[-1] += f" (lag {job['watermarkLag'] / 1000:,.1f} s)"
    parts.append(f"late dropped {job['numLateRecordsDropped']:,}")
    if job["numRecordsInErrors"]:
        parts.append(f"unreadable skipped {job['numRecordsInErrors']:,}")
    if job["numberOfCompletedCheckpoints"]:
        parts.append(f"checkpoint {job['numberOfCompletedCheckpoints']} "
                     f"({job['lastCheckpointDuration']:,.0f} ms, "
                     f"{job['lastCheckpointSize']:,} bytes)")
    return " | ".join(parts)


def _watermark(watermark: int) -> str:
    if watermark <= MIN_WATERMARK:
        return "none yet"
    if watermark >= MAX_WATERMARK:
        return "end of input"
    try:
        moment = datetime.datetime.fromtimestamp(watermark / 1000, datetime.timezone.utc)
    except (OverflowError, ValueError, OSError):  # not a time of this calendar: the number
        return str(watermark)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")
