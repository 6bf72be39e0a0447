"""``env.add_source`` with a Python ``SourceFunction``: its ``run(ctx)`` runs in a thread
of the driver and pushes records with ``ctx.collect``; each micro-batch takes the
records pushed so far (at most the batch size) and ships them to the one source task.

Its position is the number of records handed out. A restored job runs ``run`` again
from the start and skips that many records, so a deterministic function is read
exactly once across a restart (as a legacy Flink source without checkpointed state
would not be). The source is finished once ``run`` returns and its records are out.
"""
import threading
from collections import deque
from typing import Any, List, Optional

from engine.io.sources import Source, SplitRange


class SourceContext:
    """The ``ctx`` a SourceFunction's ``run`` emits through."""

    def __init__(self, records: deque, skip: int):
        self._records = records
        self._skip = skip
        self._lock = threading.Lock()

    def collect(self, element) -> None:
        """Emits one record."""
        with self._lock:
            if self._skip:
                self._skip -= 1
            else:
                self._records.append(element)

    def collect_with_timestamp(self, element, timestamp: int) -> None:
        """Emits one record (timestamps come from the job's WatermarkStrategy here)."""
        self.collect(element)

    def get_checkpoint_lock(self):
        """The lock under which records are emitted."""
        return self._lock


class FunctionSource(Source):
    """The engine side of a SourceFunction with ``run(ctx)``: one split, parallelism 1."""

    parallelism = 1
    bounded = False  # known only when run() returns

    def __init__(self, function):
        self.function = function
        self._records: deque = deque()
        self._thread: Optional[threading.Thread] = None
        self._error: Optional[BaseException] = None
        self._done = False

    def splits(self, parallelism: int) -> List[str]:
        return ["0"]

    def _start(self, skip: int) -> None:
        context = SourceContext(self._records, skip)

        def run():
            try:
                self.function.run(context)
            except BaseException as e:  # reported by the next plan()
                self._error = e
            finally:
                self._done = True
        self._thread = threading.Thread(target=run, name="source-function", daemon=True)
        self._thread.start()

    def plan(self, split: str, position: int, max_records: int,
             now_ms: int) -> Optional[SplitRange]:
        if self._thread is None:
            self._start(skip=position)
        if self._error is not None:
            raise RuntimeError(f"SourceFunction {type(self.function).__name__}.run failed: "
                               f"{self._error!r}") from self._error
        records = []
        while self._records and len(records) < max_records:
            records.append(self._records.popleft())
        if not records:
            return None
        return SplitRange(split, records, position + len(records))

    def is_finished(self, split: str, position: Any) -> bool:
        return self._done and not self._records and self._error is None

    def read(self, descriptor) -> tuple:
        return descriptor, None

    def for_tasks(self) -> "Source":
        return _TaskSide()

    def close(self) -> None:
        """Asks a still running ``run`` to stop (the job ended or was cancelled)."""
        if self._thread is not None and not self._done:
            self.function.cancel()


class _TaskSide(Source):
    """What the task needs of a FunctionSource: the records are in the range."""

    def read(self, descriptor) -> tuple:
        return descriptor, None
