"""Sources: how the driver cuts each split into per-batch ranges, and how a task reads a
range.

Every source implements ``Source``. A source has one split per subtask (or a fixed
number of splits, ``parallelism``). ``split_sizes`` gives each split's number of
records (None: unbounded). For each batch the driver asks every split for the next
range of at most ``max_records`` records (fewer when the source is rate limited); the
source's ``reader`` runs in the task and turns the range into records. The offsets
reached are part of each batch's commit record, so a restart resumes exactly.
"""
from array import array
from functools import partial
from typing import Callable, Iterable, List, Optional, Sequence, Tuple


class Source:
    """The contract between the engine and a source; the defaults suit a plain,
    parallel, bounded source without timestamps."""

    parallelism: Optional[int] = None
    """A fixed number of splits (e.g. 1 for ``from_collection``), or None: one per subtask."""
    bounded: bool = True
    stamps_records: bool = False
    """Whether ``reader`` yields ``(timestamp, value)`` pairs instead of values."""
    max_per_batch: Optional[int] = None
    """At most this many records of a split per batch (None: the job's batch size)."""

    def split_sizes(self, parallelism: int) -> List[Optional[int]]:
        """Records per split (None: unbounded), given the source's parallelism."""
        raise NotImplementedError

    def batch_range(self, split: int, offset: int, count: int):
        """The (small, picklable) description of ``count`` records of ``split`` from
        ``offset``, which the task's ``reader`` reads."""
        raise NotImplementedError

    def reader(self, batch_range) -> Iterable:
        """Task side: the records of a range."""
        raise NotImplementedError

    def rate_per_split(self) -> Optional[float]:
        """Records per second each split may hand out (None: unlimited)."""
        return None

    def time_of(self, offset: int):
        """A scripted source's (watermark or None, processing time) once its first
        ``offset`` records were handed out; None for sources that do not script time."""
        return None


class CollectionSource(Source):
    """``from_collection``: one split (parallelism 1) over the list of elements. The
    batch's slice itself is the range shipped to the task."""

    parallelism = 1
    bounded = True

    def __init__(self, elements: Sequence):
        self.elements = list(elements)

    def split_sizes(self, parallelism: int) -> List[int]:
        return [len(self.elements)]

    def batch_range(self, split: int, offset: int, count: int):
        return self.elements[offset:offset + count]

    @staticmethod
    def reader(batch_range):
        """Task side: the slice is the records."""
        return batch_range


class NumberSequenceSource(Source):
    """``NumberSequenceSource(start, end)``: the numbers from start to end inclusive,
    split evenly over the subtasks."""

    parallelism: Optional[int] = None
    bounded = True

    def __init__(self, start: int, end: int):
        self.start = start
        self.end = end
        self._bounds: List[Tuple[int, int]] = []

    def split_sizes(self, parallelism: int) -> List[int]:
        total = self.end - self.start + 1
        self._bounds = []
        for i in range(parallelism):
            lo = self.start + total * i // parallelism
            hi = self.start + total * (i + 1) // parallelism
            self._bounds.append((lo, hi))
        return [hi - lo for lo, hi in self._bounds]

    def batch_range(self, split: int, offset: int, count: int):
        lo = self._bounds[split][0] + offset
        return (lo, lo + count)

    @staticmethod
    def reader(batch_range):
        """Task side: the numbers of the range."""
        return range(*batch_range)


class GeneratorSource(Source):
    """``DataGeneratorSource``: record ``i`` is ``generator_function(i)``; split ``s`` of
    ``p`` produces ``i = s, s + p, s + 2p, ...``. Unbounded when ``count`` is None;
    ``records_per_second`` limits the rate over all splits."""

    parallelism: Optional[int] = None

    def __init__(self, generator_function: Callable, count: Optional[int] = None,
                 records_per_second: Optional[float] = None):
        self.count = count
        self.bounded = count is not None
        self.records_per_second = records_per_second
        self.reader = partial(_generate, generator_function)
        self._parallelism = 1

    def split_sizes(self, parallelism: int) -> List[Optional[int]]:
        self._parallelism = parallelism
        if self.count is None:
            return [None] * parallelism
        return [len(range(split, self.count, parallelism)) for split in range(parallelism)]

    def rate_per_split(self) -> Optional[float]:
        if self.records_per_second is None:
            return None
        return self.records_per_second / self._parallelism

    def batch_range(self, split: int, offset: int, count: int):
        return (split, self._parallelism, offset, count)


def _generate(generator_function, batch_range):
    split, parallelism, offset, count = batch_range
    return [generator_function(k * parallelism + split) for k in range(offset, offset + count)]


class ScriptedSource(Source):
    """The source of ``api.testing.TestStream``: one split whose batches are the script's
    steps. Each step is ``("elements", [(value, timestamp), ...])``,
    ``("watermark", t)`` or ``("processing_time", advance_ms)``."""

    parallelism = 1
    bounded = True
    stamps_records = True
    max_per_batch = 1  # one step per micro-batch

    def __init__(self, steps: Sequence[Tuple[str, object]]):
        self.steps = list(steps)
        self._times = []  # per step: (watermark or None, processing time)
        watermark, now = None, 0
        for kind, arg in self.steps:
            if kind == "watermark":
                watermark = arg
            elif kind == "processing_time":
                now += arg
            self._times.append((watermark, now))

    def split_sizes(self, parallelism: int) -> List[int]:
        return [len(self.steps)]

    def batch_range(self, split: int, offset: int, count: int):
        return [step for step in self.steps[offset:offset + count]]

    @staticmethod
    def reader(steps):
        """Task side: the elements of the steps, as (timestamp, value)."""
        return [(timestamp, value) for kind, arg in steps if kind == "elements"
                for value, timestamp in arg]

    def time_of(self, offset: int):
        """(watermark or None, processing time) once the first ``offset`` steps ran."""
        return self._times[offset - 1] if offset else (None, 0)


class TextFileSource(Source):
    """``read_text_file``: the lines of a text file, in contiguous runs of lines, one run
    per subtask. The driver indexes where lines start (one pass over the file); a task
    reads its range's bytes and decodes them. Lines end at ``\n``; a ``\r`` before it is
    dropped; a final newline does not start an empty line."""

    def __init__(self, path: str, charset: str = "UTF-8"):
        "".encode(charset)  # an unknown charset fails when the job is built
        self.path = path
        self.charset = charset
        self._starts = array("q")  # byte offset of each line start, then the file size
        self._bounds: List[Tuple[int, int]] = []

    def split_sizes(self, parallelism: int) -> List[int]:
        self._starts = array("q", [0])
        with open(self.path, "rb") as f:
            for line in f:
                self._starts.append(self._starts[-1] + len(line))
        lines = len(self._starts) - 1
        self._bounds = [(lines * i // parallelism, lines * (i + 1) // parallelism)
                        for i in range(parallelism)]
        return [hi - lo for lo, hi in self._bounds]

    def batch_range(self, split: int, offset: int, count: int):
        first = self._bounds[split][0] + offset
        return self.path, self.charset, self._starts[first], self._starts[first + count]

    @staticmethod
    def reader(batch_range):
        """Task side: the lines between two line starts."""
        path, charset, begin, end = batch_range
        with open(path, "rb") as f:
            f.seek(begin)
            data = f.read(end - begin)
        lines = data.decode(charset).split("\n")
        if data.endswith(b"\n"):
            lines.pop()  # the newline ends the last line; it does not start another
        return [line[:-1] if line.endswith("\r") else line for line in lines]

