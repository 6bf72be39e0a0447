"""Errors the engine raises to users."""
import reprlib
import traceback

RECORD_REPR_LIMIT = 200
LINE_LIMIT = 1000


def truncated(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "...(truncated)"


def truncated_repr(record, limit: int = RECORD_REPR_LIMIT) -> str:
    """``repr(record)`` cut at ``limit`` characters, for any value: one nested too deeply
    for ``repr``, or whose ``__repr__`` fails, gets reprlib's shorter description."""
    return truncated(_safely(repr, record), limit)


def _safely(describe, value) -> str:
    try:
        return describe(value)
    except Exception:  # (RecursionError too)
        return reprlib.repr(value)  # bounded depth; a failing __repr__ is not called again


class OperatorError(Exception):
    """A user function or a type conversion failed on one record.

    Carries text only (operator name, record repr, cause and traceback), so it
    crosses process boundaries intact.
    """

    def __init__(self, operator: str, record_repr: str, cause: str, trace: str):
        super().__init__(operator, record_repr, cause, trace)
        self.operator = operator
        self.record_repr = record_repr
        self.cause = cause
        self.trace = trace

    @classmethod
    def wrap(cls, operator: str, record, exc: BaseException, what: str = "record"):
        lines = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        trace = "\n".join(truncated(line, LINE_LIMIT) for line in lines.split("\n"))
        where = what if what != "record" else f"record {truncated_repr(record)}"
        return cls(operator, where, truncated(f"{type(exc).__name__}: {_safely(str, exc)}",
                                              LINE_LIMIT), trace)

    def __str__(self):
        return (f"Operator '{self.operator}' failed on {self.record_repr}: {self.cause}\n"
                f"Original traceback:\n{self.trace}")


class RecordReadError(Exception):
    """A source cannot read a record (bad JSON or CSV, a wrong encoding): raised by a
    ``Source.read`` with the split, the offset and the raw record; the engine names the
    source operator and fails the job."""

    def __init__(self, split: str, offset, record, cause: BaseException):
        super().__init__(split, offset, record, cause)
        self.split = split
        self.offset = offset
        self.record = record
        self.cause = cause

    def where(self) -> str:
        return f"split {self.split} at offset {self.offset}: record {truncated_repr(self.record)}"


class RecordWriteError(Exception):
    """A record cannot be written or converted (``engine.io.sinks.convert_each``): by a
    sink writer, or by a task turning an operator's outputs to their declared type; the
    engine names the operator and fails the job."""

    def __init__(self, record, cause: BaseException):
        super().__init__(record, cause)
        self.record = record
        self.cause = cause


class JobExecutionException(Exception):
    """The job failed; the message says which operator, on which record and why.

    State and output of batches committed before the failure are kept.
    """
