"""The runtime operator interface every chained operator implements."""
from ..errors import OperatorError
from .chunks import Cursor


def is_pickled(type_info) -> bool:
    """Whether records of ``type_info`` are kept as they are (PICKLED_BYTE_ARRAY)."""
    return type_info is None or type(type_info).__name__ == "PickledBytesTypeInfo"


class Operator:
    """Receives records a chunk (a list) at a time through ``process_chunk`` and passes
    result chunks to ``self.output``. A keyed operator receives ``(key, record)`` pairs.

    The task wires ``output`` (the chained operators and the stage's outgoing edges)
    and calls ``setup`` before ``open``.
    """

    def __init__(self):
        self.name = ""
        self.output = None
        self.task = None
        self.cursor: Cursor = None
        self.side_outputs = {}  # side output tag id -> where its chunks go

    def setup(self, name: str, task) -> None:
        self.name = name
        self.task = task
        self.cursor = Cursor(task.timed, task.keyed_backend)

    def open(self) -> None:
        pass

    def process_chunk(self, records: list) -> None:
        raise NotImplementedError

    def end_input(self) -> None:
        """Called once when every input is finished (end of a bounded job)."""

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
