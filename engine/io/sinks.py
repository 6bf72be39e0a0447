"""Sinks: the engine's two-phase sink protocol.

A sink runs where the records are, in the tasks, as Flink's do:

1. In a task, for each micro-batch, the sink's ``SinkWriter`` receives the batch's
   records of its subtask (``write``) and, at the end of the batch, *prepares* them
   (``prepare_commit``): hidden part files, a staged file of serialized records, ...
   It returns a small *committable* that names what it prepared.
2. The driver commits the batch to the job's metadata log. Only then does it hand
   each committable to the sink's ``Committer`` (``commit``): files are renamed to
   their finished names, staged records are produced to Kafka or written to a
   database. A committer with ``commits_in_tasks`` commits in parallel tasks, so
   records never pass through the driver; others commit in the driver (print,
   collect, renames).
3. After a crash, ``recover`` finishes the commits of batches the metadata log has
   committed and discards what was prepared for later batches (they run again).

A commit may run more than once (a retried commit task, a recovery after a crash
during the commit): ``commit`` must be idempotent.

``StagingWriter`` and ``StagedCommitter`` are the pattern the Kafka and JDBC sinks
use: the writer stages a batch's items in one file under the job's directory; the
committer delivers a staged file's items to the external system idempotently (a
Kafka header naming job, sink, subtask and batch; a database row with the batch id
written in the same transaction) and then deletes it. A staged file lies in the job's
checkpoint directory and is read back after a restart, so, like the checkpoint files,
it holds data and nothing in it is unpickled: it is a ``checkpoint.files.write_checked``
file (format version, checksum, msgpack). The items staged are what a connector sends
out -- a Kafka record's topic and bytes, a row's SQL parameters -- so they are data; an
item that is not data fails the batch when it is staged.
"""
import os
import re
from typing import Any, Callable, Iterable, List, NamedTuple, Optional

from checkpoint.files import read_checked, write_checked
from checkpoint.storage import is_temporary_name, makedirs

from engine.errors import RecordWriteError


class WriterContext(NamedTuple):
    """Where a ``SinkWriter`` runs: which sink, subtask and batch."""
    job_name: str
    run_id: str       # this run of the job (a new one after each restart)
    sink_id: str      # the sink's uid: stable across restarts
    subtask: int
    parallelism: int
    batch_id: int
    staging_dir: str  # this sink's directory under the job's directory
    processing_time: int = 0
    """The batch's processing time (ms), the same in every task and attempt of the batch
    (e.g. FileSink's date-time buckets)."""


class CommitterContext(NamedTuple):
    """Where a ``Committer`` runs: which job and sink, and the sink's parallelism."""
    job_name: str
    sink_id: str
    staging_dir: str
    parallelism: int = 1


class SinkWriter:
    """Task side of a sink: one writer per subtask and batch."""

    def write(self, values: list) -> None:
        """Receives a chunk of the batch's records (values, without timestamps)."""
        raise NotImplementedError

    def prepare_commit(self) -> Any:
        """The end of the batch: make the batch's output durable but invisible; return a
        small picklable committable naming it (None: nothing to commit)."""
        return None


class Committer:
    """The commit side of a sink. It is pickled into commit tasks when
    ``commits_in_tasks``; open connections lazily, in ``commit``."""

    commits_in_tasks: bool = False

    def open(self, context: CommitterContext) -> None:
        """Driver, before the first batch."""
        self.context = context

    def recover(self, committed_batch: int) -> None:
        """Driver, after ``open``, with the batch the job resumes from (-1: a fresh
        start): finish committing batches up to ``committed_batch`` that a crash
        interrupted; discard what was prepared for later batches."""

    def commit(self, batch_id: int, subtask: int, committable: Any) -> None:
        """Makes a committed batch's prepared output of one subtask visible; idempotent."""
        raise NotImplementedError

    def close(self) -> None:
        """Driver, when the job ends."""


class Sink:
    """What a connector gives the engine (``engine_sink()`` of a ``sink_to`` argument).
    One copy lives in each subtask for the whole job (``open_subtask`` .. ``close_subtask``);
    it creates a writer per batch. ``stages_in_job_directory``: its writers stage batches
    in local files under the job's checkpoint directory (``WriterContext.staging_dir``)."""

    stages_in_job_directory = False

    def open_subtask(self, runtime_context) -> None:
        """Task: the subtask starts (e.g. a SinkFunction's ``open``)."""

    def close_subtask(self) -> None:
        """Task: the input has ended."""

    def create_writer(self, context: WriterContext) -> SinkWriter:
        raise NotImplementedError

    def create_committer(self) -> Committer:
        raise NotImplementedError


# --- staged sinks ---------------------------------------------------------------------

_STAGED = re.compile(r"^(?P<batch>\d+)-(?P<subtask>\d+)\.staged$")


def staged_file(staging_dir: str, batch_id: int, subtask: int) -> str:
    """The file a subtask stages a batch's items in."""
    return os.path.join(staging_dir, f"{batch_id}-{subtask}.staged")


def read_staged(path: str) -> list:
    """The items of a staged file (CorruptFileError if it is damaged or not data)."""
    return read_checked(path)


def convert_each(to_item: Optional[Callable], values: list) -> list:
    """``to_item`` of each value (the values themselves when None); a value that fails
    raises ``RecordWriteError`` naming it. Sink writers and a task's conversion to an
    operator's declared output type use it."""
    if to_item is None:
        return values
    out = []
    append = out.append
    value = None
    try:
        for value in values:
            append(to_item(value))
    except Exception as e:
        raise RecordWriteError(value, e) from None
    return out


class ListWriter(SinkWriter):
    """Gathers the batch's items (``to_item(value)``); the committable is their list,
    shipped to the driver (print, collect)."""

    def __init__(self, to_item: Optional[Callable] = None):
        self.to_item = to_item
        self.items: list = []

    def write(self, values: list) -> None:
        self.items.extend(convert_each(self.to_item, values))

    def prepare_commit(self) -> Optional[list]:
        return self.items or None


class StagingWriter(ListWriter):
    """Stages the batch's items (``to_item(value)``, data) in one file; the committable is
    its path. The file is written under a temporary name and renamed, so a staged file is
    complete or absent."""

    def __init__(self, context: WriterContext, to_item: Optional[Callable] = None):
        super().__init__(to_item)
        self.context = context

    def prepare_commit(self) -> Optional[str]:
        if not self.items:
            return None
        context = self.context
        makedirs(context.staging_dir)
        path = staged_file(context.staging_dir, context.batch_id, context.subtask)
        write_checked(path, self.items)
        return path


class StagedCommitter(Committer):
    """Commits staged files: ``deliver`` their items idempotently, then delete them.
    Subclasses implement ``deliver``."""

    commits_in_tasks = True

    def deliver(self, batch_id: int, subtask: int, items: list) -> None:
        """Writes a committed batch's staged items of one subtask to the external system,
        so that delivering the same (batch, subtask) again writes nothing twice."""
        raise NotImplementedError

    def commit(self, batch_id: int, subtask: int, committable: str) -> None:
        if not os.path.exists(committable):  # committed before (a retried commit task)
            return
        self.deliver(batch_id, subtask, read_staged(committable))
        os.remove(committable)

    def recover(self, committed_batch: int) -> None:
        for batch_id, subtask, path in self.staged_files():
            if batch_id <= committed_batch:
                self.commit(batch_id, subtask, path)
            else:
                os.remove(path)

    def staged_files(self) -> Iterable:
        """``(batch, subtask, path)`` of the staged files present, in batch order."""
        directory = self.context.staging_dir
        found: List[tuple] = []
        if os.path.isdir(directory):
            for name in os.listdir(directory):
                match = _STAGED.match(name)
                if match is not None:
                    found.append((int(match["batch"]), int(match["subtask"]),
                                  os.path.join(directory, name)))
                elif is_temporary_name(name):  # a writer that crashed before its rename
                    os.remove(os.path.join(directory, name))
        return sorted(found)

