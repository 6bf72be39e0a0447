"""The driver side of sinks: what a sink does with a committed batch's items.

Tasks prepare a sink's output for a batch (``SinkItems``); after the driver has
committed the batch, it hands each subtask's items to the sink's ``Publisher``
(two-phase commit: a crash between the two is finished or undone by ``recover``).
"""


class Publisher:
    """Driver side of a sink: receives a committed batch's items per subtask."""

    def open(self) -> None:
        pass

    def recover(self, committed_batch: int) -> None:
        """Called after ``open`` with the batch the job resumes from (-1: a fresh start):
        finish publishing that batch if a crash interrupted it, and discard what tasks
        prepared for later batches (they never committed and will run again)."""

    def publish(self, subtask: int, items: list) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass
