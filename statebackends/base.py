"""What every keyed state backend shares (Flink's AbstractKeyedStateBackend).

A backend holds every state of one operator instance over one key-group range.
The engine sets the current key (and namespace) per record; state objects obtained
once from ``state(spec)`` keep following it. A backend implements its tables of
entries (``_table_of``), ``write_version`` (persist a version through a
``checkpoint.state_store.StateStore``) and the class method ``restore`` (rebuild a
backend at any committed version, from files of any key-group ranges); the state
objects themselves are the heap states of ``statebackends.heap_states``, over
whatever tables the backend gives them.

Stored state runs no code on restore unless the job says so. Keys, namespaces and
values are stored as data (``core.codec``); what is not data is
pickled only where the job allows it: keys and namespaces while ``allow_pickled``
(the job's ``state.restore.allow-pickled``) and ``pickled_keys`` (the operator's key type
is not declared, or declared pickled, or its windows are the user's own), values of a
state declared pickled
(``StateSpec.pickled``: ``Types.PICKLED_BYTE_ARRAY()`` or no type) while
``allow_pickled`` too. Writing anything else that is not data fails, naming the state
and key. A restore reads pickled values as ``Pickled`` placeholders, which are
unpickled only when the job registers the state and declares it pickled (a state it
never registers keeps them, written back unchanged); with ``allow_pickled`` false a
restore reads no pickled data at all. A refusal raises PickledStateError naming the
file.

A key is its canonical bytes (``core.codec.key_identity``) on every backend: ``1``,
``1.0`` and ``True`` are three keys, all NaNs one. A slot holds a str, int or bytes key
itself and any other key as its ``KeyIdentity``; what hands keys back out
(``get_current_key``, ``entries``, stored files) gives the key itself.

A key group's changes are stored as msgpack ``{state name: [keys, namespaces, values,
deleted keys, deleted namespaces]}`` (see ``_encode_group``): parallel lists, so that
common keys, namespaces and values are msgpack's own types, packed without a hook.
"""
from __future__ import annotations

import pickle
from abc import ABC, abstractmethod
from functools import partial
from typing import (Any, Callable, Dict, Hashable, Iterable, Iterator, MutableMapping, Optional,
                    Set, Tuple)

from checkpoint.files import CorruptFileError
from checkpoint.state_store import INCREMENTAL, StateFile, StateStore
from statebackends.heap_states import (
    HeapAggregatingState, HeapListState, HeapMapState, HeapReducingState, HeapValueState,
)
from core.codec import (
    RAW_KEY_TYPES, KeyIdentity, NotDataError, Pickled, PickledDataError, deferred_count,
    deserialize, deserialize_data, deserialize_deferred, key_identity, resolve_pickled,
    serialize_data, serialize_data_items, serialize_value, serialize_value_items, user_key,
)
from core.keygroups import KeyGrouping, KeyType
from core.state_spec import StateKind, StateSpec

__all__ = ["KeyedStateBackend", "KeyGroupMismatchError", "PickledStateError", "VOID_NAMESPACE",
           "DEFAULT_SNAPSHOT_INTERVAL", "Slot", "ALLOW_PICKLED_OPTION", "TRUST_SAVEPOINT_OPTION"]

ALLOW_PICKLED_OPTION = "state.restore.allow-pickled"
"""The configuration key of ``allow_pickled`` (default true)."""

TRUST_SAVEPOINT_OPTION = "execution.savepoint.trust-pickled"
"""The configuration key that lets a job restored from a savepoint given to it
(``execution.savepoint.path``) unpickle that state (default false: ``allow_pickled`` is
then false for the job's state of that lineage)."""

_NO_PICKLES = (f"'{ALLOW_PICKLED_OPTION}' is false, or the state comes from a savepoint "
               f"given by 'execution.savepoint.path' and '{TRUST_SAVEPOINT_OPTION}' is not "
               "true (set it only for a savepoint you trust: unpickling runs code that its "
               "writer chose)")

_DATA_KEYS = ("the job declares the key type (key_by(..., key_type=...)) with no "
              "Types.PICKLED_BYTE_ARRAY() in it, and its windows are built-in ones, so its "
              "keys and namespaces are data and never pickled")

VOID_NAMESPACE = None
"""The namespace of state that is not window state."""

_ONE_VALUE_KINDS = (StateKind.VALUE, StateKind.REDUCING, StateKind.AGGREGATING)

DEFAULT_SNAPSHOT_INTERVAL = 10
# Keys whose slot (key, VOID_NAMESPACE) a backend keeps, to hand out the same tuple each
# time: see ``set_current_key``.
SLOT_CACHE_LIMIT = 65_536

Slot = Tuple[Hashable, Any]

_HEAP_STATES = {StateKind.VALUE: HeapValueState, StateKind.LIST: HeapListState,
                StateKind.MAP: HeapMapState}


PLACEMENT_META = "key_placement"
"""The field of a state file's metadata naming how its keys were grouped
(``KeyGrouping.placement``); files of releases before it have none."""


def _placements(store: StateStore, files: Iterable[StateFile]) -> Set[Optional[str]]:
    """How the keys of ``files`` were grouped (None: before placements were recorded)."""
    return {(store.read_incremental(f).meta if f.kind == INCREMENTAL
             else store.read_meta(f)).get(PLACEMENT_META) for f in files}


class KeyGroupMismatchError(Exception):
    """State was written for a key outside the backend's key-group range."""


class PickledStateError(Exception):
    """Stored state holds pickled data the job does not allow to be unpickled."""


GroupChanges = Dict[str, Tuple[Dict[Slot, Any], list]]
"""One key group's changes, per state name: (puts {slot: value}, deleted slots). A
snapshot has the same shape with no deletes and replaces its key groups."""

_ARRAY_OF_5 = b"\x95"


def _user_keys(slots: Iterable[Slot]) -> list:
    """The keys of ``slots`` as the user gave them."""
    return [key.key if type(key) is KeyIdentity else key for key, _ in slots]


def _map_header(size: int) -> bytes:
    """The msgpack header of a map of ``size`` entries."""
    if size < 16:
        return bytes((0x80 | size,))
    if size < 1 << 16:
        return b"\xde" + size.to_bytes(2, "big")
    return b"\xdf" + size.to_bytes(4, "big")


class KeyedStateBackend(ABC):
    """Keyed state of one operator instance over key groups ``start..end`` (inclusive).

    ``version`` is the version the contents reflect (-1: nothing written yet). Every
    ``snapshot_interval`` versions, ``write_version`` writes a snapshot. Pickled state is
    read and written only while ``allow_pickled``, pickled keys and namespaces only while
    ``pickled_keys`` too (see the module docstring).
    """

    def __init__(self, operator_id: str, key_group_range: Tuple[int, int],
                 max_parallelism: int, snapshot_interval: int = DEFAULT_SNAPSHOT_INTERVAL,
                 allow_pickled: bool = True, pickled_keys: bool = True,
                 key_type: Optional[KeyType] = None):
        start, end = key_group_range
        if not 0 <= start <= end < max_parallelism:
            raise ValueError(f"key group range {start}-{end} is not within "
                             f"[0, {max_parallelism}) (max parallelism)")
        if snapshot_interval < 1:
            raise ValueError(f"snapshot_interval must be >= 1, got {snapshot_interval}")
        self.operator_id = operator_id
        self.key_group_range = (start, end)
        self.max_parallelism = max_parallelism
        self.key_grouping = KeyGrouping(key_type, max_parallelism)
        """The key group of each key: as routing puts keys (the operator's key type)."""
        self.snapshot_interval = snapshot_interval
        self.version = -1
        self._snapshot_next = False  # the next version is a snapshot (state was regrouped)
        self._current_namespace = VOID_NAMESPACE
        self.current_slot: Slot = (key_identity(None), VOID_NAMESPACE)
        """(current key's identity, current namespace): the entry every state object
        addresses."""
        self._key_slots: Dict[Hashable, Slot] = {}  # key -> its (key, VOID_NAMESPACE)
        self._tables: Dict[str, MutableMapping[Slot, Any]] = {}
        self._dirty: Dict[str, Set[Slot]] = {}
        self._kinds: Dict[str, str] = {}  # state name -> its StateKind.stored_names entry
        self._states: Dict[str, Any] = {}
        self.allow_pickled = allow_pickled
        self.pickled_keys = allow_pickled and pickled_keys
        self._key_writer = serialize_value if self.pickled_keys else serialize_data
        self._key_reader = deserialize if self.pickled_keys else deserialize_data
        # State name -> whether its values may be pickled, once the job registered it.
        self._values_pickled: Dict[str, bool] = {}
        # State name -> a restored file that may hold pickled values of it (placeholders).
        self._pickled_in: Dict[str, str] = {}

    # -- current key and namespace ---------------------------------------------

    def set_current_key(self, key: Hashable) -> None:
        """Makes every state object address ``key``'s entries (``key`` may also be its
        ``key_identity``).

        Keys are the same key when their canonical bytes are (see the module docstring):
        a str, int or bytes key is its own slot key, since such keys are equal exactly
        when their bytes are; any other key (1.0, True, None, a tuple...) is wrapped in
        its ``KeyIdentity``, so it never equals a key of another type. Outside a
        namespace, the slot of a str, int or bytes key is the same tuple object each
        time (for up to ``SLOT_CACHE_LIMIT`` keys): a state table then finds its entry
        by identity, where a new tuple costs its allocation and, on every lookup, a
        comparison of the keys (records of one key arrive as distinct, equal objects)."""
        if self._current_namespace is not VOID_NAMESPACE or type(key) not in RAW_KEY_TYPES:
            self.current_slot = (key_identity(key), self._current_namespace)
            return
        slots = self._key_slots
        slot = slots.get(key)
        if slot is None:
            if len(slots) >= SLOT_CACHE_LIMIT:
                slots.clear()
            slot = slots[key] = (key, VOID_NAMESPACE)
        self.current_slot = slot

    def key_slots(self, keys: Iterable) -> Optional[Dict[Hashable, Slot]]:
        """For an operator's loop over the records of ``keys``: the slots that
        ``set_current_key(key)`` would make current, by key, to set ``current_slot`` from
        without a call. A key not in it goes through ``set_current_key`` (which adds it).
        None within a namespace, or unless every key is a str, int or bytes (keys may
        then be lists, which no dict can look up)."""
        if self._current_namespace is VOID_NAMESPACE and \
                RAW_KEY_TYPES.issuperset(map(type, keys)):
            return self._key_slots
        return None

    def get_current_key(self) -> Hashable:
        """The current key, as the user gave it."""
        key = self.current_slot[0]
        return key.key if type(key) is KeyIdentity else key

    def set_current_namespace(self, namespace: Hashable) -> None:
        """Makes every state object address ``namespace`` (e.g. a window)."""
        self._current_namespace = namespace
        self.current_slot = (self.current_slot[0], namespace)

    def get_current_namespace(self) -> Hashable:
        return self._current_namespace

    # -- state registration ----------------------------------------------------

    def state(self, spec: StateSpec):
        """The state object of ``spec`` (ValueState, ListState, ... as its kind says),
        created on first use. A name keeps one kind (and layout) for the backend's
        life, restored states included."""
        name = spec.name
        # Values of a state with time-to-live carry their timestamps: another layout,
        # which a restore must not mix up with the plain one.
        layout = spec.kind.stored_names[spec.with_ttl]
        registered = self._kinds.get(name)
        if registered is not None and registered != layout:
            raise TypeError(f"state {name!r} of operator {self.operator_id!r} is {registered} "
                            f"state; it cannot be used as {layout} state")
        state = self._states.get(name)
        if state is None:
            table, dirty = self._table_of(name)
            kind = spec.kind
            if kind is StateKind.REDUCING:
                state = HeapReducingState(name, self, table, dirty, spec.function)
            elif kind is StateKind.AGGREGATING:
                state = HeapAggregatingState(name, self, table, dirty, spec.function)
            else:
                state = _HEAP_STATES[kind](name, self, table, dirty)
            self._kinds[name] = layout
            self._declare(name, spec.pickled and self.allow_pickled)
            self._states[name] = state
        return state

    # -- what may be pickled ---------------------------------------------------

    def _declare(self, name: str, pickled: bool) -> None:
        """The job registers state ``name``, whose values may be pickled if ``pickled``:
        restored placeholders of it are unpickled, or refused. (The RocksDB backend
        also switches the table's serializers.)"""
        self._values_pickled[name] = pickled
        path = self._pickled_in.pop(name, None)
        if path is None:
            return
        unpickle = self._unpickler(name, path, pickled)
        table = self._table_of(name)[0]
        for slot, value in list(table.items()):
            resolved = resolve_pickled(value, unpickle)
            if resolved is not value:
                table[slot] = resolved

    def _unpickler(self, name: Optional[str], path: str, pickled: bool):
        """What a ``Pickled`` placeholder of state ``name`` (None: a key or namespace)
        read from ``path`` becomes: its object, or PickledStateError."""
        if pickled:
            return lambda placeholder: pickle.loads(placeholder.data)

        def refuse(placeholder: Pickled):
            raise self.refused(name, path)
        return refuse

    def refused(self, name: Optional[str], path: Optional[str]) -> PickledStateError:
        """The error for pickled data of state ``name`` (None: in a key or namespace),
        read from ``path``, that the job does not allow to be unpickled."""
        where = f" in {path}" if path else ""
        what = "keys or namespaces" if name is None else f"values of state {name!r}"
        if not self.allow_pickled:
            why = _NO_PICKLES
        elif name is None:
            why = _DATA_KEYS
        else:
            why = ("the state is declared with a type other than "
                   "Types.PICKLED_BYTE_ARRAY(), so its values are data and never pickled")
        return PickledStateError(
            f"operator {self.operator_id!r}: the stored {what}{where} hold pickled data, "
            f"which is not unpickled: {why}")

    def _value_writer(self, name: str) -> Callable[[Any], bytes]:
        """How values of state ``name`` are serialized: pickling what is not data only if
        the job allows it (a state the job has not registered, restored: as it was)."""
        pickled = self._values_pickled.get(name, self.allow_pickled)
        return serialize_value if pickled else serialize_data

    def unstorable(self, name: Optional[str], slot: Slot, cause: Exception,
                   in_key: bool = False) -> TypeError:
        """The error for a value (or, ``in_key``, the key or namespace) of state ``name``
        (None: of any state) at ``slot`` that cannot be stored."""
        hint = ""
        if isinstance(cause, NotDataError):
            if not self.allow_pickled:
                hint = f" (state must be data, see core.codec: {_NO_PICKLES})"
            elif in_key:
                hint = (f" ({_DATA_KEYS}; declare key_type=Types.PICKLED_BYTE_ARRAY() to "
                        "key by any Python object)")
            else:
                hint = (" (the state is declared with a type, so its values must be "
                        "data of it; declare Types.PICKLED_BYTE_ARRAY() to store any "
                        "Python object)")
        of_state = "" if name is None else f" of state {name!r}"
        what = (f"the key {slot[0]!r} / namespace {slot[1]!r}{of_state}" if in_key
                else f"the value{of_state} for key {slot[0]!r}")
        return TypeError(f"operator {self.operator_id!r}: {what} cannot be serialized: "
                         f"{cause}{hint}")

    def _encode_group(self, changes: GroupChanges) -> bytes:
        """A key group's changes as msgpack ``{state name: [keys, namespaces, values,
        deleted keys, deleted namespaces]}``: keys and namespaces with the keys'
        serializer, values with their state's."""
        parts = [_map_header(len(changes))]
        write_keys = serialize_value_items if self.pickled_keys else serialize_data_items
        for name, (puts, deletes) in changes.items():
            write_values = (serialize_value_items if self._value_writer(name) is serialize_value
                            else serialize_data_items)
            try:
                parts += (serialize_data(name), _ARRAY_OF_5,
                          write_keys(_user_keys(puts)),
                          write_keys([slot[1] for slot in puts]),
                          write_values(list(puts.values())),
                          write_keys(_user_keys(deletes)),
                          write_keys([slot[1] for slot in deletes]))
            except Exception as e:
                raise self._first_unstorable(name, puts, deletes, e) from e
        return b"".join(parts)

    def _first_unstorable(self, name: str, puts: Dict[Slot, Any], deletes: list,
                          cause: Exception) -> TypeError:
        """The error naming the entry that ``_encode_group`` could not store."""
        write_value = self._value_writer(name)
        for slot in (*puts, *deletes):
            try:
                self._key_writer((user_key(slot[0]), slot[1]))
            except Exception as e:
                return self.unstorable(name, slot, e, in_key=True)
            try:
                if slot in puts:
                    write_value(puts[slot])
            except Exception as e:
                return self.unstorable(name, slot, e)
        return self.unstorable(name, (None, None), cause)

    def _read_groups(self, store: StateStore, state_file: StateFile,
                     key_group_range: Tuple[int, int]) -> Iterator[Tuple[int, GroupChanges]]:
        """``(key group, changes)`` of a file written with ``_encode_group``, within
        ``key_group_range``, by slot (keys as their ``key_identity``). Keys and
        namespaces come back whole (unpickled if the job allows pickled state); pickled
        values come back as ``Pickled`` placeholders, for ``_declare``. Without
        ``allow_pickled`` any pickled data raises."""
        decode = deserialize_deferred if self.allow_pickled else deserialize_data

        def counted(data: bytes) -> Tuple[bool, Any]:
            before = deferred_count()
            changes = decode(data)
            return deferred_count() != before, changes

        try:
            for group, (deferred, stored) in store.iter_groups(state_file, key_group_range,
                                                               decode=counted):
                changes: GroupChanges = {}
                for name, (keys, namespaces, values, deleted, deleted_namespaces) in \
                        stored.items():
                    if deferred:
                        self._pickled_in.setdefault(name, state_file.path)
                        unpickle = self._unpickler(None, state_file.path, self.pickled_keys)
                        keys, namespaces, deleted, deleted_namespaces = (
                            resolve_pickled(items, unpickle)
                            for items in (keys, namespaces, deleted, deleted_namespaces))
                    changes[name] = (
                        dict(zip(zip(map(key_identity, keys), namespaces), values)),
                        list(zip(map(key_identity, deleted), deleted_namespaces)))
                yield group, changes
        except CorruptFileError as e:
            if isinstance(e.__cause__, PickledDataError):
                raise PickledStateError(
                    f"operator {self.operator_id!r}: {e.path} holds pickled data, which is "
                    f"not unpickled ({e.reason}): {_NO_PICKLES}") from None
            raise


    def value_table(self, spec: StateSpec) -> Tuple[MutableMapping[Slot, Any], Set[Slot]]:
        """Direct access to the entries of a state with one value per slot (value,
        reducing or aggregating state: the value, the reduced value, the accumulator), for
        the engine's built-in keyed operators on their hot path: ``(table, dirty)`` with
        ``table`` mapping ``(key_identity(key), namespace)`` to the value and ``dirty`` the
        set of changed slots. A writer adds every slot it changes to ``dirty`` and never stores None
        (absent = unset)."""
        if spec.kind not in _ONE_VALUE_KINDS or spec.with_ttl:
            raise TypeError(f"value_table() needs value, reducing or aggregating state "
                            f"without time-to-live, got {spec.kind.value} state {spec.name!r}")
        self.state(spec)  # registers the name as value state, or fails
        return self._table_of(spec.name)

    @abstractmethod
    def _table_of(self, name: str) -> Tuple[MutableMapping[Slot, Any], Set[Slot]]:
        """The entries of state ``name`` and its set of changed slots (created if new)."""

    # -- inspection --------------------------------------------------------------

    def entries(self) -> Iterator[Tuple[str, Hashable, Hashable, Any]]:
        """All stored (state name, key, namespace, value) entries, for tests and tools,
        with each key as the user gave it. Pickled values of a restored state the job has
        not registered (``state``) since are ``Pickled`` placeholders."""
        for name, table in list(self._tables.items()):
            for (key, namespace), value in table.items():
                yield name, user_key(key), namespace, value

    def state_kinds(self) -> Dict[str, str]:
        """State name -> stored kind ("value", "list", "value with TTL", ...; decoded by
        ``core.state_spec.STORED_KINDS``) of registered and restored states."""
        return dict(self._kinds)

    def close(self) -> None:
        """Releases what the backend holds outside Python memory; unusable after."""

    # -- persistence -------------------------------------------------------------

    def _is_snapshot(self, version: int) -> bool:
        """Whether writing ``version`` writes a snapshot; fails if the state is already
        at or past it."""
        if version <= self.version:
            raise ValueError(f"operator {self.operator_id!r}: cannot write version {version}, "
                             f"the state is already at version {self.version}")
        regrouped, self._snapshot_next = self._snapshot_next, False
        return regrouped or version % self.snapshot_interval == 0

    def _file_meta(self) -> Dict[str, Any]:
        """The metadata of a state file this backend writes."""
        return {"state_kinds": dict(self._kinds), PLACEMENT_META: self.key_grouping.placement}

    @abstractmethod
    def write_version(self, store: StateStore, version: int) -> None:
        """Persists this version: the changes since the last write, or (every
        ``snapshot_interval`` versions) a snapshot, after which older files of this
        range are pruned. If writing fails, discard this backend."""

    @classmethod
    def restore(cls, store: StateStore, operator_id: str, key_group_range: Tuple[int, int],
                max_parallelism: int, version: int,
                snapshot_interval: int = DEFAULT_SNAPSHOT_INTERVAL,
                **options) -> "KeyedStateBackend":
        """A backend holding ``key_group_range`` at ``version`` (empty at -1), from the
        newest snapshot <= version and the changelogs after it, of every stored
        key-group range that overlaps the requested one. ``options`` go to the
        constructor (``key_type``, and a backend's own).

        State whose keys were grouped otherwise (by an earlier release, or for another key
        type) is regrouped: every key group is read, this backend keeps the keys that are
        now in its groups, and its next version is a snapshot."""
        restore = partial(cls._restore, store, operator_id, max_parallelism=max_parallelism,
                          version=version, snapshot_interval=snapshot_interval, **options)
        placement = KeyGrouping(options.get("key_type"), max_parallelism).placement
        if _placements(store, store.files_to_restore(operator_id, key_group_range, version)) \
                <= {placement}:
            return restore(key_group_range=key_group_range)
        everything = (0, max_parallelism - 1)
        stored = _placements(store, store.files_to_restore(operator_id, everything, version))
        if len(stored) > 1:
            raise KeyGroupMismatchError(
                f"the state of operator {operator_id!r} at version {version} mixes key "
                f"placements {sorted(map(str, stored))}")
        whole = restore(key_group_range=everything)
        if key_group_range == everything:
            backend = whole
        else:
            try:
                backend = cls(operator_id, key_group_range, max_parallelism, snapshot_interval,
                              **options)
                backend._take_own_entries(whole)
            finally:
                whole.close()
        backend._snapshot_next = True
        return backend

    def _take_own_entries(self, whole: "KeyedStateBackend") -> None:
        """Takes the entries of this backend's key groups from ``whole`` (a backend over
        every key group, grouped otherwise)."""
        start, end = self.key_group_range
        key_group = self.key_grouping.key_group
        self._kinds.update(whole._kinds)
        self._pickled_in.update(whole._pickled_in)
        for name, table in whole._tables.items():
            own = self._table_of(name)[0]
            for slot, value in table.items():
                if start <= key_group(user_key(slot[0])) <= end:
                    own[slot] = value
        self.version = whole.version

    @classmethod
    @abstractmethod
    def _restore(cls, store: StateStore, operator_id: str, key_group_range: Tuple[int, int],
                 max_parallelism: int, version: int,
                 snapshot_interval: int = DEFAULT_SNAPSHOT_INTERVAL,
                 **options) -> "KeyedStateBackend":
        """``restore`` of state grouped as this backend groups it."""
