"""Operators with two inputs: ``connect(...).process`` (and Co-Map / Co-Flat Map, run as
process functions) and broadcast connections.

Within a micro-batch a two-input operator processes all of input 0's records, then
all of input 1's; a broadcast operator processes its broadcast side (input 1) first,
so a batch's rules apply to the same batch's elements. The task orders the chunks
(``StageInstance.run_batch``); each input's records keep their order.
"""
from core.codec import key_identity
from core.state_spec import StateKind

from engine.errors import OperatorError
from engine.runtime.state_descriptors import spec_and_ttl
from engine.runtime.context import ProcessContext
from engine.runtime.operators.chunks import Cursor
from engine.runtime.operators.udf import ProcessOperator

BROADCAST_KEY = 0  # the one key of the broadcast state's backend


class _BroadcastContextBase(ProcessContext):
    def current_processing_time(self) -> int:
        return self._timer_service.current_processing_time()

    def current_watermark(self) -> int:
        return self._timer_service.current_watermark()


class BroadcastContext(_BroadcastContextBase):
    """``ctx`` of ``process_broadcast_element``: writable broadcast state."""

    def get_broadcast_state(self, state_descriptor):
        return self._operator.broadcast_state(state_descriptor)

    def apply_to_keyed_state(self, state_descriptor, function) -> None:
        """Calls ``function(key, state)`` (or ``function.process(key, state)``) for every
        key of this parallel instance that has a value in ``state_descriptor``'s state."""
        backend = self._backend
        if backend is None:
            raise RuntimeError("apply_to_keyed_state() needs a KeyedBroadcastProcessFunction "
                               "(a keyed stream connected with the broadcast stream)")
        process = getattr(function, "process", function)
        name = state_descriptor.get_name()
        keys = {key_identity(key): key for state, key, _, _ in backend.entries()
                if state == name}  # (one key per identity: 1 and True are two)
        state = self._operator.task.runtime_context(self._operator.name).state_of(
            state_descriptor)
        previous = backend.get_current_key()
        try:
            for identity, key in keys.items():
                backend.set_current_key(identity)
                process(key, state)
        except Exception as e:
            raise OperatorError.wrap(self._operator.name, None, e,
                                     what=f"apply_to_keyed_state({name!r}) at key {key!r}"
                                     ) from None
        finally:
            backend.set_current_key(previous)


class ReadOnlyBroadcastContext(_BroadcastContextBase):
    """``ctx`` of ``process_element`` and ``on_timer``: read-only broadcast state."""

    def get_broadcast_state(self, state_descriptor):
        return ReadOnlyBroadcastState(self._operator.broadcast_state(state_descriptor))


class ReadOnlyBroadcastState:
    """A read-only view of a broadcast state (PyFlink's ReadOnlyBroadcastState)."""

    def __init__(self, state):
        self._state = state

    def get(self, key):
        return self._state.get(key)

    def contains(self, key) -> bool:
        return self._state.contains(key)

    def items(self):
        return self._state.items()

    def keys(self):
        return self._state.keys()

    def values(self):
        return self._state.values()

    def is_empty(self) -> bool:
        return self._state.is_empty()

    def __getitem__(self, key):
        return self.get(key)

    def __contains__(self, key) -> bool:
        return self.contains(key)

    def __iter__(self):
        return iter(self.keys())

    def _read_only(self, *args, **kwargs):
        raise RuntimeError("broadcast state is read-only in process_element and on_timer: "
                           "change it in process_broadcast_element")

    put = put_all = remove = clear = __setitem__ = __delitem__ = _read_only


class CoProcessOperator(ProcessOperator):
    """Runs a CoProcessFunction or KeyedCoProcessFunction: input 0 calls
    ``process_element1``, input 1 ``process_element2``; both share the keyed state,
    the timers (``on_timer``) and the side outputs."""

    def _bind_inputs(self):
        function, ctx = self.function, self._ctx
        return [(function.process_element1, ctx, self.cursor),
                (function.process_element2, ctx, self.cursor)]


class BroadcastProcessOperator(ProcessOperator):
    """Runs a (Keyed)BroadcastProcessFunction: input 0 is the (keyed or non-keyed)
    stream, seen by ``process_element`` with read-only broadcast state; input 1 is the
    broadcast stream, seen by ``process_broadcast_element`` with writable broadcast state
    (on every parallel instance, so every instance holds the same state)."""

    def __init__(self, function, state_names):
        super().__init__(function)
        self.state_names = frozenset(state_names)
        self._broadcast_states = {}  # name -> (the descriptor last asked with, its state)

    context_class = ReadOnlyBroadcastContext

    def open(self):
        self.task.broadcast_backend.set_current_key(BROADCAST_KEY)
        super().open()

    def _bind_inputs(self):
        broadcast_cursor = Cursor(self.task.shape)  # broadcast records come without keys
        broadcast_ctx = self.task.process_context(broadcast_cursor, self, BroadcastContext)
        return [(self.function.process_element, self._ctx, self.cursor),
                (self.function.process_broadcast_element, broadcast_ctx, broadcast_cursor)]

    def broadcast_state(self, descriptor):
        """The broadcast map state of ``descriptor``, which ``broadcast(...)`` declared.
        Functions ask for it per element (``ctx.get_broadcast_state``): a descriptor
        asked with before gets its state without being read again."""
        name = descriptor.get_name()
        known = self._broadcast_states.get(name)
        if known is not None and known[0] is descriptor:
            return known[1]
        if name not in self.state_names:
            raise ValueError(
                f"operator '{self.name}' has no broadcast state {name!r}: declare its "
                f"MapStateDescriptor in ds.broadcast(...) (declared: "
                f"{sorted(self.state_names)})")
        state = self.task.broadcast_backend.state(spec_and_ttl(descriptor, StateKind.MAP)[0])
        self._broadcast_states[name] = (descriptor, state)
        return state
