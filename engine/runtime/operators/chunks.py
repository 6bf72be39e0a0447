"""The shape of the elements in a chunk, and walking an operator's input chunk.

In a job that uses time, each element is ``(timestamp, value)`` (Flink's StreamRecord;
the timestamp may be None); otherwise elements are the values themselves. A keyed
operator receives ``(key, element)`` pairs: a list of them, or the ``KeyedChunk`` a
router sends. ``RecordShape`` is the one place that builds or takes apart an element;
a ``Cursor`` walks an input chunk: it yields the values, keeps the current element's
``timestamp`` and sets the backend's current key, and its ``collector`` wraps outputs
with the current timestamp again.
"""
from typing import Callable

from core.codec import RAW_KEY_TYPES, key_identity


class KeyedChunk:
    """Elements routed to a keyed operator with their keys, as two lists: it reads as
    ``(key, element)`` pairs, yet crossing stages it pickles and unpickles no pair per
    record."""

    __slots__ = ("keys", "elements")

    def __init__(self, keys: list, elements: list):
        self.keys = keys
        self.elements = elements

    def __len__(self) -> int:
        return len(self.elements)

    def __iter__(self):
        return zip(self.keys, self.elements)

    def __reduce__(self):
        return KeyedChunk, (self.keys, self.elements)


def keyed_by_identity(pairs):
    """``pairs`` with each key as state compares it (``core.codec.key_identity``), for
    operators that group records by key themselves: ``pairs`` as they are if every key
    is a str, int or bytes."""
    keys = pairs.keys if type(pairs) is KeyedChunk else [key for key, _ in pairs]
    if RAW_KEY_TYPES.issuperset(map(type, keys)):
        return pairs
    return [(key_identity(key), element) for key, element in pairs]


class RecordShape:
    """What an element of this job looks like (timed or plain); its methods are chosen
    once, so the per-record functions they return do not test the shape again."""

    def __init__(self, timed: bool):
        self.timed = timed

    def element(self, value, timestamp=None):
        """The element of ``value`` (at ``timestamp`` in a timed job)."""
        return (timestamp, value) if self.timed else value

    def from_stamped(self, pairs: list) -> list:
        """The elements of ``(timestamp, value)`` pairs (e.g. what a source read)."""
        return pairs if self.timed else [value for _, value in pairs]

    def from_values(self, values: list) -> list:
        """The elements of plain values (without timestamps)."""
        return [(None, value) for value in values] if self.timed else values

    def key_getter(self, get_key: Callable) -> Callable:
        """``get_key`` applied to an element's value."""
        return (lambda element: get_key(element[1])) if self.timed else get_key

    def mapped(self, convert: Callable) -> Callable:
        """``convert`` applied to an element's value, keeping its timestamp."""
        if not self.timed:
            return convert
        return lambda element: (element[0], convert(element[1]))


class Cursor:
    """Iterates an operator's input chunks; one per operator instance."""

    def __init__(self, shape: RecordShape, backend=None):
        self.timestamp = None
        timed = self._timed = shape.timed
        # The two timed shapes, for hot loops that read them without a generator:
        self.stamped = timed and backend is None           # (timestamp, value)
        self.keyed_stamped = timed and backend is not None  # (key, (timestamp, value))
        self.set_key = None if backend is None else backend.set_current_key
        if backend is None:
            self.records = self._timed_records if timed else _plain_records
        else:
            self.records = self._timed_keyed_records if timed else self._keyed_records

    def collector(self, out: list, stamped: bool = True):
        """The function that adds an output value to ``out`` as an element: stamped with
        the current element's timestamp (or with none) in a timed job."""
        if not self._timed:
            return out.append
        append = out.append
        if not stamped:
            return lambda value: append((None, value))
        return lambda value: append((self.timestamp, value))

    def _timed_records(self, chunk):
        for self.timestamp, value in chunk:
            yield value

    def _keyed_records(self, pairs):
        set_key = self.set_key
        for key, value in pairs:
            set_key(key)
            yield value

    def _timed_keyed_records(self, pairs):
        set_key = self.set_key
        for key, (self.timestamp, value) in pairs:
            set_key(key)
            yield value


def _plain_records(chunk):
    return chunk
