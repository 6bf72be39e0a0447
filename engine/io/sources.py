"""Sources: the engine's one source protocol, and the built-in sources.

A source has *splits* (a Kafka partition, a part of a file, a number range, one
queue of a service). Each split has a *position* (an int, a string or a list: what
the commit record stores). For each micro-batch the driver asks every split that is
not finished for its next range (``plan``), at most ``max_records`` records; the
task that owns the split reads that range (``read``), which returns the records and
the position after them. The positions reached are part of each batch's commit
record, so a restart resumes exactly where the last committed batch ended.

Splits are assigned to the source's subtasks in the order ``splits()`` lists them:
split ``i`` is read by subtask ``i % parallelism``. A source whose splits change
while the job runs (new Kafka partitions, new files) sets ``splits_change``; the
driver then asks ``splits()`` again before each batch, and a split, once listed,
must stay listed (finished splits may stay listed as finished).

Writing your own source: subclass ``Source``, implement ``splits``,
``start_position``, ``plan``, ``is_finished`` and ``read``, and return it from
``engine_source()`` of the object given to ``env.from_source``. ``read`` must be
repeatable: reading the same range again (a retried task, a replay after a crash)
gives the same records, as reading a Kafka partition from an offset does.
"""
from typing import Any, Callable, Iterable, List, NamedTuple, Optional, Sequence, Tuple


class SplitRange(NamedTuple):
    """One batch's part of one split, as the driver planned it."""
    split: str
    descriptor: Any
    """What ``Source.read`` gets in the task: small and picklable."""
    end: Any = None
    """The split's position after this range when the driver knows it (a count, a byte
    offset, a Kafka offset it stops at); None: the position ``read`` returns is stored."""


class Source:
    """The contract between the engine and a source; the defaults suit a plain,
    parallel, bounded source without timestamps, with one split per subtask."""

    parallelism: Optional[int] = None
    """A fixed number of subtasks (e.g. 1 for ``from_collection``), or None: the job's."""
    bounded: bool = True
    stamps_records: bool = False
    """Whether ``read`` yields ``(timestamp, value)`` pairs (e.g. Kafka record
    timestamps) instead of values."""
    max_per_batch: Optional[int] = None
    """At most this many records of a split per batch (None: the job's batch size)."""
    feeds_back: bool = False
    """Whether the source reads what the job itself fed back (an iteration): the job then
    ends with a batch in which no source read anything."""
    splits_change: bool = False
    """Whether ``splits()`` may list more splits later (asked before every batch). Such
    split ids are names independent of the parallelism, so a restore at another
    parallelism keeps every split's position."""

    def splits(self, parallelism: int) -> List[str]:
        """Driver: the ids of the splits known now, in a stable order."""
        raise NotImplementedError

    def start_position(self, split: str) -> Any:
        """Driver: where a split the job has not read yet starts."""
        return 0

    def plan(self, split: str, position: Any, max_records: int,
             now_ms: int) -> Optional[SplitRange]:
        """Driver: the next range of ``split`` from ``position``, at most ``max_records``
        records; None when the split has nothing to read now."""
        raise NotImplementedError

    def is_finished(self, split: str, position: Any) -> bool:
        """Driver: whether nothing is left to read after ``position``. The default: when
        ``read`` returned the position None."""
        return position is None

    def has_input(self, split: str, position: Any) -> bool:
        """Driver, between the batches of an unbounded job: whether records wait after
        ``position`` now, so that the next batch starts at once instead of at the next
        interval. The default: the source cannot tell (False)."""
        return False

    def read(self, descriptor: Any) -> Tuple[Iterable, Any]:
        """Task: the records of a planned range, and the split's position after them.
        A record that is skipped as unreadable (a format's ignore-parse-errors) counts in
        ``records_in_errors``."""
        raise NotImplementedError

    records_in_errors: int = 0
    """Task: how many records ``read`` has skipped as unreadable so far; the engine
    reports them as the source's ``numRecordsInErrors``."""

    def close(self) -> None:
        """Driver: the job has ended (finished, failed or cancelled)."""

    def for_tasks(self) -> "Source":
        """What is shipped to the tasks to ``read`` (the source itself, unless it holds
        data only the driver needs)."""
        return self

    def time_of(self, position: Any):
        """A scripted source's (watermark or None, processing time) at ``position``; None
        for sources that do not script time."""
        return None


class CountedSource(Source):
    """A source whose splits have a known number of records (None: unbounded) and whose
    position is the number of records read; subclasses give ``sizes``, ``descriptor``
    and ``records``. ``records_per_second`` (over all splits) limits the rate."""

    records_per_second: Optional[float] = None

    def __init__(self):
        self._sizes: List[Optional[int]] = []
        self._started_ms: Optional[int] = None

    def sizes(self, parallelism: int) -> List[Optional[int]]:
        """Records per split (None: unbounded), given the source's parallelism."""
        raise NotImplementedError

    def descriptor(self, split: int, offset: int, count: int):
        """What the task reads: ``count`` records of ``split`` from ``offset``."""
        raise NotImplementedError

    def records(self, descriptor) -> Iterable:
        """Task: the records of a descriptor."""
        raise NotImplementedError

    def splits(self, parallelism: int) -> List[str]:
        self._sizes = self.sizes(parallelism)
        return [str(i) for i in range(len(self._sizes))]

    def plan(self, split: str, position: int, max_records: int,
             now_ms: int) -> Optional[SplitRange]:
        index = int(split)
        count = max_records
        size = self._sizes[index]
        if size is not None:
            count = min(count, size - position)
        if self.records_per_second is not None:
            per_ms = self.records_per_second / len(self._sizes) / 1000
            if self._started_ms is None:  # (after a restore: as if it had run at its rate)
                self._started_ms = now_ms - int(position / per_ms)
            count = min(count, int((now_ms - self._started_ms) * per_ms) - position)
        if count <= 0:
            return None
        return SplitRange(split, self.descriptor(index, position, count), position + count)

    def is_finished(self, split: str, position: int) -> bool:
        size = self._sizes[int(split)]
        return size is not None and position >= size

    def read(self, descriptor) -> Tuple[Iterable, None]:
        return self.records(descriptor), None


class CollectionSource(CountedSource):
    """``from_collection``: one split (parallelism 1) over the list of elements. The
    batch's slice itself is the range shipped to the task."""

    parallelism = 1

    def __init__(self, elements: Sequence):
        super().__init__()
        self.elements = list(elements)

    def sizes(self, parallelism: int) -> List[int]:
        return [len(self.elements)]

    def descriptor(self, split: int, offset: int, count: int):
        return self.elements[offset:offset + count]

    def records(self, descriptor):
        return descriptor

    def for_tasks(self) -> "CollectionSource":
        """The tasks read the slices in the descriptors, not the elements."""
        return CollectionSource(())


class NumberSequenceSource(CountedSource):
    """``NumberSequenceSource(start, end)``: the numbers from start to end inclusive,
    split evenly over the subtasks."""

    def __init__(self, start: int, end: int):
        super().__init__()
        self.start = start
        self.end = end
        self._bounds: List[Tuple[int, int]] = []

    def sizes(self, parallelism: int) -> List[int]:
        total = self.end - self.start + 1
        self._bounds = [(self.start + total * i // parallelism,
                         self.start + total * (i + 1) // parallelism)
                        for i in range(parallelism)]
        return [hi - lo for lo, hi in self._bounds]

    def descriptor(self, split: int, offset: int, count: int):
        lo = self._bounds[split][0] + offset
        return (lo, lo + count)

    def records(self, descriptor):
        return range(*descriptor)


class GeneratorSource(CountedSource):
    """``DataGeneratorSource``: record ``i`` is ``generator_function(i)``; split ``s`` of
    ``p`` produces ``i = s, s + p, s + 2p, ...``. Unbounded when ``count`` is None;
    ``records_per_second`` limits the rate over all splits."""

    def __init__(self, generator_function: Callable, count: Optional[int] = None,
                 records_per_second: Optional[float] = None):
        super().__init__()
        self.generator_function = generator_function
        self.count = count
        self.bounded = count is not None
        self.records_per_second = records_per_second

    def sizes(self, parallelism: int) -> List[Optional[int]]:
        if self.count is None:
            return [None] * parallelism
        return [len(range(split, self.count, parallelism)) for split in range(parallelism)]

    def descriptor(self, split: int, offset: int, count: int):
        return (split, len(self._sizes), offset, count)

    def records(self, descriptor):
        split, parallelism, offset, count = descriptor
        generate = self.generator_function
        return [generate(k * parallelism + split) for k in range(offset, offset + count)]


class ScriptedSource(CountedSource):
    """The source of ``api.testing.TestStream``: one split whose batches are the script's
    steps. Each step is ``("elements", [(value, timestamp), ...])``,
    ``("watermark", t)`` or ``("processing_time", advance_ms)``."""

    parallelism = 1
    stamps_records = True
    max_per_batch = 1  # one step per micro-batch

    def __init__(self, steps: Sequence[Tuple[str, object]]):
        super().__init__()
        self.steps = list(steps)
        self._times = []  # per step: (watermark or None, processing time)
        watermark, now = None, 0
        for kind, arg in self.steps:
            if kind == "watermark":
                watermark = arg
            elif kind == "processing_time":
                now += arg
            self._times.append((watermark, now))

    def sizes(self, parallelism: int) -> List[int]:
        return [len(self.steps)]

    def plan(self, split: str, position: int, max_records: int,
             now_ms: int) -> Optional[SplitRange]:
        return super().plan(split, position, min(max_records, self.max_per_batch), now_ms)

    def descriptor(self, split: int, offset: int, count: int):
        return self.steps[offset:offset + count]

    def records(self, steps):
        """Task side: the elements of the steps, as (timestamp, value)."""
        return [(timestamp, value) for kind, arg in steps if kind == "elements"
                for value, timestamp in arg]

    def time_of(self, position: int):
        """(watermark or None, processing time) once the first ``position`` steps ran."""
        return self._times[position - 1] if position else (None, 0)
