"""The executor interface: run one micro-batch's stages over partitions and collect
what the tasks return for the driver (sink items and errors)."""
from abc import ABC, abstractmethod
from typing import Dict, List

from engine.batch import BatchInfo, CompiledJob
from engine.runtime.sink_commits import start_commits


class Executor(ABC):
    """Runs the stages of a compiled job, one micro-batch at a time."""

    #: Whether tasks see the driver's local disk (a temporary state directory is enough).
    shares_driver_disk = True

    @abstractmethod
    def start(self, job: CompiledJob) -> None:
        """Prepares to run ``job`` (e.g. ships its plan to the workers once)."""

    @abstractmethod
    def run_batch(self, batch: BatchInfo, source_ranges: Dict[int, List[list]]) -> list:
        """Runs every stage for ``batch``. ``source_ranges[stage id][partition]`` lists the
        split ranges a source subtask reads. Moves each ``DataChunk`` to its target task,
        and returns the tasks' results for the driver (``engine.batch.for_driver``)."""

    def run_commits(self, commits: tuple) -> None:
        """Makes each ``engine.batch.SinkCommit`` of ``commits`` (here: in the driver, in
        order, in the thread of the commits its tasks make); the commits of a batch that
        no next batch's tasks carry."""
        failure = start_commits(commits)()
        if failure is not None:
            raise failure.error

    @abstractmethod
    def stop(self) -> None:
        """Releases what ``start`` set up."""
