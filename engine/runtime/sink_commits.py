"""Sink commits carried by the next batch's tasks, as Flink tells its operators that a
checkpoint completed.

Once the driver has committed a batch, the sinks whose committers commit in tasks
(``Committer.commits_in_tasks``: Kafka, JDBC) make its output visible in the next
batch: the task of each sink subtask commits what the subtask prepared (``BatchInfo.
commits``), in a thread beside the batch's own work, and the task ends when both are
done. On Spark that task runs in the subtask's host, so one process owns the subtask's
connections (a Kafka transactional producer of the subtask's id) for the whole run, and
no Spark job runs for the commits. A subtask's batches become visible in batch order;
a commit that fails fails the task (a retry or a restart commits it again, as
``Committer.commit`` is idempotent), and a crash before it is made good by
``Committer.recover``.
"""
import concurrent.futures
import os
from typing import Callable, Optional, Sequence

from engine.batch import SinkCommit, TaskFailure
from engine.errors import OperatorError

_committing = None  # (pid, the process's commit thread)


def start_commits(commits: Sequence[SinkCommit]) -> Callable[[], Optional[TaskFailure]]:
    """Starts ``commits`` in the process's commit thread; returns the call that waits for
    them, which gives a ``TaskFailure`` naming the sink if one failed. One thread makes
    every commit of the process: a client cached per thread (a Kafka transactional
    producer) is then made once, not once per batch, each fencing the one before."""
    if not commits:
        return lambda: None
    future = _commit_thread().submit(_commit, commits)
    return future.result


def _commit_thread() -> concurrent.futures.ThreadPoolExecutor:
    global _committing
    if _committing is None or _committing[0] != os.getpid():  # (none inherited over fork)
        _committing = (os.getpid(), concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="sink-commits"))
    return _committing[1]


def _commit(commits: Sequence[SinkCommit]) -> Optional[TaskFailure]:
    for commit in commits:
        try:
            commit.committer.commit(commit.batch_id, commit.subtask, commit.committable)
        except Exception as e:
            return TaskFailure(OperatorError.wrap(commit.sink, None, e,
                                                  what=f"committing batch {commit.batch_id}"))
    return None
