"""The runtime operator interface every chained operator implements."""
from typing import Callable, Iterable

from engine.errors import OperatorError
from engine.runtime.operators.chunks import Cursor


def is_pickled(type_info) -> bool:
    """Whether records of ``type_info`` are kept as they are (PICKLED_BYTE_ARRAY)."""
    return type_info is None or type(type_info).__name__ == "PickledBytesTypeInfo"


class Operator:
    """The contract between a task and each operator of its chain.

    The task calls, in order: ``setup`` (name, task context), ``open``; then per
    micro-batch the input handlers with chunks (lists) of records, ``fire_timers``
    once the batch's records are in, ``end_input`` after the last batch of a bounded
    job, ``driver_results`` to collect what the driver needs, and finally ``close``.
    An operator passes result chunks to ``self.output`` (wired by the task to the
    chained operators and the stage's outgoing edges). A keyed operator receives
    ``(key, record)`` pairs. Every hook but ``process_chunk`` has a default.
    """

    #: Whether the operator emits only records of its input, as they were (a filter):
    #: they have its input's type, and the task checks them against it no second time.
    forwards_input = False

    def __init__(self):
        self.name = ""
        self.output = None
        self.task = None
        self.cursor: Cursor = None
        self.side_outputs = {}  # side output tag id -> where its chunks go

    def setup(self, name: str, task) -> None:
        self.name = name
        self.task = task
        self.cursor = Cursor(task.shape, task.keyed_backend)

    def open(self) -> None:
        pass

    def input(self, index: int) -> Callable[[list], None]:
        """The handler of chunks of input ``index`` (0 for one-input operators; a
        two-input operator also has input 1)."""
        if index != 0:
            raise ValueError(f"operator '{self.name}' has one input, not input {index}")
        return self.process_chunk

    def process_chunk(self, records: list) -> None:
        raise NotImplementedError

    def fire_timers(self, watermark: int, processing_time: int, flush_processing: bool) -> None:
        """Called after each batch's records: time advances to ``watermark`` and
        ``processing_time`` (every processing-time timer if ``flush_processing``)."""

    def end_input(self) -> None:
        """Called once when every input is finished (end of a bounded job)."""

    def driver_results(self, node_id: int, subtask: int) -> Iterable:
        """What this batch leaves for the driver (``engine.batch`` results), after
        ``fire_timers``/``end_input``."""
        return ()

    def close(self) -> None:
        pass


class UdfOperator(Operator):
    """An operator around one user function: forwards ``open``/``close`` to it."""

    def __init__(self, function):
        super().__init__()
        self.function = function

    def open(self) -> None:
        try:
            self.function.open(self.task.runtime_context(self.name))
        except OperatorError:
            raise
        except Exception as e:
            raise OperatorError.wrap(self.name, None, e, what="open()") from None

    def close(self) -> None:
        try:
            self.function.close()
        except Exception as e:
            raise OperatorError.wrap(self.name, None, e, what="close()") from None
