"""Bounded sources: how the driver cuts each split into per-batch ranges, and how a
task reads a range.

A source has one split per subtask. For each batch the driver asks every split
for the next range of at most ``max_records`` records; the source's ``reader``
runs in the task and turns the range into records.
"""
from typing import List, Optional, Sequence, Tuple


class CollectionSource:
    """``from_collection``: one split (parallelism 1) over the list of elements. The
    batch's slice itself is the range shipped to the task."""

    parallelism = 1

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


class NumberSequenceSource:
    """``NumberSequenceSource(start, end)``: the numbers from start to end inclusive,
    split evenly over the subtasks."""

    parallelism: Optional[int] = None

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


