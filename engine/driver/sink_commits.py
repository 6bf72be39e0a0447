"""Sink commits that run in tasks (``Committer.commits_in_tasks``: Kafka, JDBC) overlap
the next batches: once the driver has committed a batch, its sinks' commit tasks run in
a thread of their own, one batch after another, while the next batch runs (as Flink
tells its sinks of a completed checkpoint while the job goes on).

A batch's output becomes visible in batch order, and a crash anywhere loses nothing: a
committed batch whose sinks had not finished committing is committed again by
``Committer.recover`` when the job resumes. A commit that fails fails the job at the
driver's next look (``check``), and a restart commits it again the same way.
"""
import concurrent.futures
from collections import deque
from typing import Callable, Deque

__all__ = ["SinkCommits"]


class SinkCommits:
    """The sink commits of one run of a job, in a background thread, in the order they
    are submitted. ``close`` waits for them all."""

    def __init__(self):
        self._thread = concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="sink-commits")
        self._pending: Deque[concurrent.futures.Future] = deque()

    def submit(self, commit: Callable[[], None]) -> None:
        """Runs ``commit()`` after the commits submitted before it; raises the error of
        one of those that failed."""
        self.check()
        self._pending.append(self._thread.submit(commit))

    def check(self) -> None:
        """Raises the error of a finished commit that failed."""
        while self._pending and self._pending[0].done():
            self._pending.popleft().result()

    def wait(self) -> None:
        """Waits for every commit submitted; raises the error of the first that failed."""
        while self._pending:
            self._pending.popleft().result()

    def close(self) -> None:
        """Waits for the commits submitted, whatever becomes of them: the run ends (a
        restart's ``Committer.recover`` commits again what failed)."""
        self._pending.clear()
        self._thread.shutdown(wait=True)
