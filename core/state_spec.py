"""What a keyed state is, as the engine and the state backends see it: its kind and
its spec (Flink's StateDescriptor, internally).

A leaf module of plain values, importing no project code, so that ``engine/time``
(which holds no state of its own) may name the states it asks for:

    COUNT = StateSpec("count", StateKind.REDUCING, lambda a, b: a + b)
    state = backend.state(COUNT)

The API's descriptors (``api.datastream.state``) become a StateSpec in one place,
``engine.runtime.state_descriptors.state_spec``.
"""
from __future__ import annotations

from enum import Enum
from typing import Any, Dict, NamedTuple, Tuple

__all__ = ["StateKind", "StateSpec", "STORED_KINDS"]


class StateKind(Enum):
    """The five kinds of keyed state. Each member's value is the kind's name (the API
    descriptors' ``state_kind``); ``getter`` is the RuntimeContext method that creates
    its state, ``descriptor`` the name of the API's descriptor class for it, and
    ``stored_names`` its names in checkpoint metadata, without and with TTL."""

    VALUE = ("value", "get_state", "ValueStateDescriptor")
    LIST = ("list", "get_list_state", "ListStateDescriptor")
    MAP = ("map", "get_map_state", "MapStateDescriptor")
    REDUCING = ("reducing", "get_reducing_state", "ReducingStateDescriptor")
    AGGREGATING = ("aggregating", "get_aggregating_state", "AggregatingStateDescriptor")

    def __new__(cls, name: str, getter: str, descriptor: str):
        member = object.__new__(cls)
        member._value_ = name  # StateKind("value") is StateKind.VALUE
        # Plain attributes: read per record (an Enum's ``value`` and hash are slower).
        member.getter = getter
        member.descriptor = descriptor
        member.stored_names = (name, f"{name} with TTL")
        return member


class StateSpec(NamedTuple):
    """One keyed state: its name, kind, the ReduceFunction (or two-argument callable)
    of reducing state or the AggregateFunction of aggregating state, whether its
    values carry time-to-live timestamps (another stored layout), and whether its values
    may be pickled: declared ``Types.PICKLED_BYTE_ARRAY()`` (anywhere in its types) or
    without a type. Values of other states are data, stored without pickle, and pickled
    data read back for them is refused (``statebackends.base``)."""

    name: str
    kind: StateKind
    function: Any = None
    with_ttl: bool = False
    pickled: bool = True


STORED_KINDS: Dict[str, Tuple[StateKind, bool]] = {
    name: (kind, with_ttl) for kind in StateKind
    for with_ttl, name in zip((False, True), kind.stored_names)}
"""A name in checkpoint metadata -> (kind, with_ttl): the inverse of ``stored_names``."""
