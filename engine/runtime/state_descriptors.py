"""Where the API's state descriptors (``api.datastream.state``) become the one
internal ``StateSpec``.

A user's descriptor is read by duck typing (the engine does not import the API):
``state_kind``, ``get_name()``, ``get_reduce_function()`` or ``get_agg_function()``,
PyFlink's ``_ttl_config``, and its declared types (``type_info``, and a map state's
``key_type_info``), which decide whether its values may be pickled. The engine's own
states are StateSpecs already (and have no time-to-live).
"""
from typing import Any, Optional, Tuple

from core.state_spec import StateKind, StateSpec

__all__ = ["kind_of", "spec_and_ttl", "declares_pickled"]

_KINDS = {kind.value: kind for kind in StateKind}  # the API's ``state_kind`` -> StateKind


def kind_of(descriptor) -> Optional[StateKind]:
    """The kind of state a descriptor (or spec) asks for; None if it names none."""
    if type(descriptor) is StateSpec:
        return descriptor.kind
    return _KINDS.get(getattr(descriptor, "state_kind", None))


def declares_pickled(type_info) -> bool:
    """Whether values of ``type_info`` may be pickled: no type, or PICKLED_BYTE_ARRAY
    anywhere in it (a field of a row or tuple, an element of a list, array or map)."""
    if type_info is None or type(type_info).__name__ == "PickledBytesTypeInfo":
        return True
    inner = [getattr(type_info, "_field_types", None) or [],
             [getattr(type_info, attribute, None) for attribute in (
                 "elem_type", "_element_type", "_key_type_info", "_value_type_info",
                 "_type_info")]]
    return any(declares_pickled(t) for types in inner for t in types if t is not None)


def _pickled(descriptor) -> bool:
    types = [getattr(descriptor, "type_info", None)]
    if hasattr(descriptor, "key_type_info"):  # MapStateDescriptor
        types.append(descriptor.key_type_info)
    return any(declares_pickled(t) for t in types)


def spec_and_ttl(descriptor, kind: StateKind) -> Tuple[StateSpec, Optional[Any]]:
    """The spec of a descriptor (or spec) given to ``kind.getter``, and its
    StateTtlConfig if time-to-live is enabled (else None); fails unless the descriptor
    is of that kind."""
    if type(descriptor) is StateSpec:
        if descriptor.kind is kind:
            return descriptor, None
        name = descriptor.name
    else:
        name = descriptor.get_name()
        if _KINDS.get(getattr(descriptor, "state_kind", None)) is kind:
            pickled = _pickled(descriptor)
            if kind is StateKind.REDUCING:
                spec = StateSpec(name, kind, descriptor.get_reduce_function(), pickled=pickled)
            elif kind is StateKind.AGGREGATING:
                spec = StateSpec(name, kind, descriptor.get_agg_function(), pickled=pickled)
            else:
                spec = StateSpec(name, kind, pickled=pickled)
            ttl_config = getattr(descriptor, "_ttl_config", None)  # PyFlink's attribute
            if ttl_config is not None and not ttl_config.is_enabled():
                ttl_config = None
            return spec, ttl_config
    raise TypeError(f"{kind.getter}() needs a {kind.descriptor}, "
                    f"got {type(descriptor).__name__} {name!r}")
