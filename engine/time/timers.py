"""Timers of one keyed operator instance (Flink's InternalTimerService), as keyed state.

A timer is ``(key, namespace, timestamp)`` in one of two domains, event time
and processing time. Registering a timer that exists keeps one; deleting one
that does not exist does nothing. Timers live in the operator's keyed state
backend as entries of an internal value table per domain (slot
``(key identity, (namespace, timestamp))`` -> ``True``), so ``write_version`` and
``restore`` carry them with the rest of the key's state and a restore into
another key-group range brings exactly that range's timers. An in-memory
index per domain orders them for firing; it is rebuilt from the tables when
the service is constructed (e.g. right after ``restore``). Keys are compared as the
backend compares them, by ``core.codec.key_identity`` (``1``, ``1.0`` and ``True`` are
three keys); the methods take a key or its identity and hand back the key itself.

    timers = InternalTimerService(backend)
    timers.register(EVENT_TIME, "a", VOID_NAMESPACE, 10)
    for key, namespace, timestamp in timers.fire(EVENT_TIME, watermark):
        backend.set_current_key(key)
        user_function.on_timer(timestamp, ...)   # may register or delete timers

Order of firing: by timestamp, then (ties) by key, then by namespace, each
compared through a history-independent order token (see ``order_token``), so
the order is the same whether or not the state was restored in between.

No Spark, no I/O: state only through the backend's ``value_table``, named by a
``core.state_spec.StateSpec``.
"""
from __future__ import annotations

from typing import Any, Hashable, Iterable, Iterator, List, NamedTuple, Optional, Tuple

from sortedcontainers import SortedList

from core.codec import key_identity, user_key
from core.state_spec import StateKind, StateSpec

from engine.time.windows import TimeWindow

__all__ = ["EVENT_TIME", "PROCESSING_TIME", "DOMAINS", "Timer", "InternalTimerService",
           "order_token"]

EVENT_TIME = "event_time"
PROCESSING_TIME = "processing_time"
DOMAINS = (EVENT_TIME, PROCESSING_TIME)

_TABLE_SUFFIX = {EVENT_TIME: "event", PROCESSING_TIME: "processing"}


class Timer(NamedTuple):
    """A due timer handed to the caller, who sets the current key before ``on_timer``."""

    key: Hashable
    namespace: Hashable
    timestamp: int


# -- tie order ---------------------------------------------------------------------

_NONE, _NUMBER, _STR, _BYTES, _TUPLE, _FROZENSET, _ORDERED, _OTHER = range(8)


def order_token(value: Any) -> tuple:
    """A totally ordered stand-in for a key or namespace, for breaking timestamp ties.

    Equal values (``1 == 1.0 == True``, a tuple and a namedtuple with the same
    fields) get equal tokens. Numbers, strings and bytes order naturally within
    their kind; tuples element by element; objects of a class with its own
    ``__lt__`` (e.g. windows) by that, within the class; anything else by
    ``repr``. Kinds order as: None, numbers, str, bytes, tuples, frozensets,
    ordered objects (by class name), other objects (by class name, then repr).
    """
    if isinstance(value, str):
        return (_STR, value)
    if isinstance(value, (int, float)):
        if value != value:  # NaN
            return (_OTHER, "float", "nan")
        return (_NUMBER, value)
    if value is None:
        return (_NONE,)
    if isinstance(value, (bytes, bytearray)):
        return (_BYTES, bytes(value))
    if isinstance(value, tuple):
        return (_TUPLE, tuple(order_token(item) for item in value))
    if isinstance(value, frozenset):
        return (_FROZENSET, tuple(sorted(order_token(item) for item in value)))
    cls = type(value)
    if cls is TimeWindow:  # the common namespace: its (start, end) order, as plain tuples
        return (_ORDERED, _TIME_WINDOW, (value.start, value.end))
    name = f"{cls.__module__}.{cls.__qualname__}"
    if cls.__lt__ is not object.__lt__:
        return (_ORDERED, name, _Natural(value))
    return (_OTHER, name, repr(value))


_TIME_WINDOW = f"{TimeWindow.__module__}.{TimeWindow.__qualname__}"


class _Natural:
    """Wraps a value of a class with its own ordering; equal-by-``<`` compares equal."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __lt__(self, other: "_Natural") -> bool:
        return bool(self.value < other.value)

    def __eq__(self, other) -> bool:
        return not (self.value < other.value or other.value < self.value)

    def __le__(self, other: "_Natural") -> bool:
        return not other.value < self.value

    def __gt__(self, other: "_Natural") -> bool:
        return bool(other.value < self.value)

    def __ge__(self, other: "_Natural") -> bool:
        return not self.value < other.value

    __hash__ = None


class _AfterEveryToken:
    """Sorts after every order token: ``(t, _AFTER_EVERY_TOKEN)`` follows each entry at t."""

    def __lt__(self, other) -> bool:
        return False

    def __gt__(self, other) -> bool:
        return True


_AFTER_EVERY_TOKEN = _AfterEveryToken()


def _check_timestamp(timestamp) -> None:
    if timestamp != timestamp or timestamp is None:
        raise ValueError(f"timer timestamp must be a number, got {timestamp!r}")


def _unknown_domain(domain) -> ValueError:
    return ValueError(f"unknown time domain {domain!r}; expected one of {DOMAINS}")


# An index entry: (timestamp, key token, namespace token, sequence number, key identity,
# namespace).
# The sequence number is unique, so the key and namespace themselves are never compared;
# it decides only between distinct timers whose tokens are equal (e.g. equal reprs).
_Entry = Tuple[Any, tuple, tuple, int, Hashable, Hashable]


class InternalTimerService:
    """Event-time and processing-time timers of one keyed operator instance.

    ``backend`` is the operator's keyed state backend (anything with
    ``value_table(spec) -> (table, dirty)``, as ``statebackends.base.KeyedStateBackend``).
    ``name`` names the state tables ``_<name>_event`` and ``_<name>_processing``,
    so one operator could keep separate timer services. Build the service once
    per backend instance, after the backend is restored: the index is built from
    the backend's tables here and kept in step with them afterwards, so the
    tables must not be changed behind the service's back.
    """

    def __init__(self, backend, name: str = "timers"):
        self.name = name
        self._tables = {}
        self._dirty = {}
        self._index = {}
        self._entries = {}
        self._sequence = 0
        for domain in DOMAINS:
            spec = StateSpec(f"_{name}_{_TABLE_SUFFIX[domain]}", StateKind.VALUE, pickled=False)
            table, dirty = backend.value_table(spec)
            self._tables[domain] = table
            self._dirty[domain] = dirty
            slots = list(table)  # (keys as their identities)
            self._entries[domain] = dict(zip(slots, self.entries_of(
                (key, namespace, timestamp) for key, (namespace, timestamp) in slots)))
            self._index[domain] = SortedList(self._entries[domain].values())

    def _entry(self, key, namespace, timestamp) -> _Entry:
        self._sequence += 1
        return (timestamp, order_token(user_key(key)), order_token(namespace), self._sequence,
                key, namespace)

    # -- registration ----------------------------------------------------------------

    def register(self, domain: str, key: Hashable, namespace: Hashable, timestamp: int) -> None:
        """Adds the timer, unless ``(key, namespace, timestamp)`` is already set in ``domain``.

        A timer whose time has already passed fires at the next ``fire`` of the
        domain (or later in the current one, if one is in progress).
        """
        _check_timestamp(timestamp)
        key = key_identity(key)
        slot = (key, (namespace, timestamp))
        table = self._table(domain)
        if slot in table:
            return
        table[slot] = True
        self._dirty[domain].add(slot)
        entry = self._entry(key, namespace, timestamp)
        self._entries[domain][slot] = entry
        self._index[domain].add(entry)

    def register_all(self, domain: str, timers: Iterable[Tuple[Hashable, Hashable, int]]) -> None:
        """``register`` for each ``(key, namespace, timestamp)``, with one index update."""
        table, dirty, entries = self._table(domain), self._dirty[domain], self._entries[domain]
        new, slots = [], []
        for key, namespace, timestamp in timers:
            _check_timestamp(timestamp)
            key = key_identity(key)
            slot = (key, (namespace, timestamp))
            if slot not in table:
                table[slot] = True
                dirty.add(slot)
                new.append((key, namespace, timestamp))
                slots.append(slot)
        added = self.entries_of(new)
        entries.update(zip(slots, added))
        self._index[domain].update(added)

    def entries_of(self, timers: Iterable[Tuple[Hashable, Hashable, int]]) -> List[_Entry]:
        """The firing-order entry of each ``(key, namespace, timestamp)``, as
        ``pop_all_due`` returns them (entries of timers never registered sort among them);
        a key or namespace met again reuses its order token."""
        tokens = {}
        entries = []
        sequence = self._sequence
        for key, namespace, timestamp in timers:
            key = key_identity(key)
            key_token = tokens.get(key)
            if key_token is None:
                key_token = tokens[key] = order_token(user_key(key))
            namespace_token = tokens.get(namespace)
            if namespace_token is None:
                namespace_token = tokens[namespace] = order_token(namespace)
            sequence += 1
            entries.append((timestamp, key_token, namespace_token, sequence, key, namespace))
        self._sequence = sequence
        return entries

    def delete(self, domain: str, key: Hashable, namespace: Hashable, timestamp: int) -> None:
        """Removes the timer if it is set; a due timer deleted during ``fire`` never fires."""
        slot = (key_identity(key), (namespace, timestamp))
        table = self._table(domain)
        if table.pop(slot, None) is None:
            return
        self._dirty[domain].add(slot)
        self._index[domain].remove(self._entries[domain].pop(slot))

    def _table(self, domain: str):
        table = self._tables.get(domain)
        if table is None:
            raise _unknown_domain(domain)
        return table

    def _index_of(self, domain: str) -> SortedList:
        index = self._index.get(domain)
        if index is None:
            raise _unknown_domain(domain)
        return index

    # -- firing ----------------------------------------------------------------------

    def pop_due(self, domain: str, time) -> Optional[Timer]:
        """Removes and returns the first timer with ``timestamp <= time``, or None."""
        index = self._index_of(domain)
        if not index or index[0][0] > time:
            return None
        timestamp, _, _, _, key, namespace = index.pop(0)
        slot = (key, (namespace, timestamp))
        del self._tables[domain][slot]
        del self._entries[domain][slot]
        self._dirty[domain].add(slot)
        return Timer(user_key(key), namespace, timestamp)

    def pop_all_due(self, domain: str, time) -> List[_Entry]:
        """Removes every timer with ``timestamp <= time`` at once and returns their entries
        ``(timestamp, key token, namespace token, sequence, key identity, namespace)`` in
        firing order: for callers whose firing neither registers nor deletes timers."""
        index = self._index_of(domain)
        end = index.bisect_right((time, _AFTER_EVERY_TOKEN))
        due = list(index.islice(0, end))
        del index[:end]
        table, dirty, entries = self._tables[domain], self._dirty[domain], self._entries[domain]
        for timestamp, _, _, _, key, namespace in due:
            slot = (key, (namespace, timestamp))
            del table[slot]
            del entries[slot]
            dirty.add(slot)
        return due

    def fire(self, domain: str, time) -> Iterator[Timer]:
        """Yields, and removes before yielding, every timer with ``timestamp <= time``.

        Order: timestamp, then key, then namespace (see ``order_token``). The
        generator looks at the timers afresh before each step, so timers the
        caller registers between steps fire in the same pass when due (and in
        order), and timers it deletes do not fire.
        """
        while True:
            timer = self.pop_due(domain, time)
            if timer is None:
                return
            yield timer

    # -- queries ---------------------------------------------------------------------

    def next_time(self, domain: str) -> Optional[int]:
        """The earliest timer's timestamp in ``domain``, or None without timers."""
        index = self._index_of(domain)
        return index[0][0] if index else None

    def count(self, domain: Optional[str] = None) -> int:
        """Number of timers in ``domain``, or in both domains if None (from the index:
        counting a RocksDB table would read it)."""
        if domain is None:
            return sum(len(index) for index in self._index.values())
        return len(self._index_of(domain))

    def __len__(self) -> int:
        return self.count()

    def contains(self, domain: str, key: Hashable, namespace: Hashable, timestamp: int) -> bool:
        return (key_identity(key), (namespace, timestamp)) in self._table(domain)

    def pending(self, domain: str) -> List[Tuple[Any, Hashable, Hashable]]:
        """All timers of ``domain`` as ``(timestamp, key, namespace)``, in firing order."""
        index = self._index_of(domain)
        return [(entry[0], user_key(entry[4]), entry[5]) for entry in index]
