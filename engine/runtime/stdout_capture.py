"""What a task's user functions print to ``sys.stdout``, captured for the driver.

PyFlink shows what a function prints (in ``map``, ``open``, a window function, a
trigger, a timer) on the job's standard output. A Spark worker's stdout is not the
driver's (Spark sends it to its own log), so each task captures what its thread writes
to ``sys.stdout`` and returns it to the driver as an ``engine.batch.Printed`` result;
the driver writes it to its stdout when the batch's tasks are done. ``sys.stderr`` is
left alone.

Capturing costs one swap per task, nothing per record. While any thread captures,
``sys.stdout`` is a ``_ThreadRoutedStdout``: a capturing thread's text goes to its
task's buffer, every other thread's (a ``SourceFunction``'s thread, the user's own in
the driver) to the stream it replaced, at once.
"""
import io
import sys
import threading
from contextlib import contextmanager
from typing import Iterator, Optional

_lock = threading.Lock()
_capturing = threading.local()  # .buffer: where this thread's stdout goes, if it captures
_router: Optional["_ThreadRoutedStdout"] = None
_capturing_threads = 0


class _ThreadRoutedStdout:
    """``sys.stdout`` while tasks capture: each write goes to the writing thread's
    capture buffer, or to ``stream`` (the ``sys.stdout`` it replaced)."""

    def __init__(self, stream):
        self.stream = stream

    def _target(self):
        return getattr(_capturing, "buffer", None) or self.stream

    def write(self, text: str) -> int:
        return self._target().write(text)

    def flush(self) -> None:
        self._target().flush()

    def __getattr__(self, name):  # encoding, buffer, isatty, fileno, ...
        return getattr(self._target(), name)


@contextmanager
def captured_stdout() -> Iterator[io.TextIOWrapper]:
    """Captures what this thread writes to ``sys.stdout`` in the block, in a text buffer
    (UTF-8, with a byte ``buffer`` as a real stdout has); read it with ``printed_text``.
    If the block raises, the text goes on to ``sys.stdout`` as if it was not captured."""
    global _router, _capturing_threads
    buffer = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="backslashreplace",
                              write_through=True)
    with _lock:
        if sys.stdout is not _router:
            _router = sys.stdout = _ThreadRoutedStdout(sys.stdout)
        _capturing_threads += 1
    outer = getattr(_capturing, "buffer", None)
    _capturing.buffer = buffer
    try:
        yield buffer
    except BaseException:
        _stop_capturing(outer)
        sys.stdout.write(printed_text(buffer))
        raise
    _stop_capturing(outer)


def _stop_capturing(outer: Optional[io.TextIOWrapper]) -> None:
    """Gives this thread's stdout back to ``outer`` (a capture it is nested in, if any);
    the last thread to stop puts back the stream the router replaced."""
    global _capturing_threads
    _capturing.buffer = outer
    with _lock:
        _capturing_threads -= 1
        if _capturing_threads == 0 and sys.stdout is _router:
            sys.stdout = _router.stream


def printed_text(buffer: io.TextIOWrapper) -> str:
    """The text written to a ``captured_stdout`` buffer."""
    return buffer.buffer.getvalue().decode("utf-8")
