"""The API's descriptors (api.datastream.state) become the engine's StateSpecs and drive
the backend's states."""
import pytest

from api.common.time import Time
from api.datastream.state import (
    AggregatingStateDescriptor, ListStateDescriptor, MapStateDescriptor,
    ReducingStateDescriptor, StateTtlConfig, ValueStateDescriptor,
)
from benchmarks.nexmark.queries import CountAggregate
from engine.runtime.state_descriptors import kind_of, spec_and_ttl
from statebackends.hashmap import HashMapKeyedStateBackend
from core.state_spec import StateKind, StateSpec


def test_every_descriptor_gives_its_kind_of_state():
    backend = HashMapKeyedStateBackend("op", (0, 127), 128)
    backend.set_current_key("k")
    count = CountAggregate()
    specs = [spec_and_ttl(descriptor, kind)[0] for descriptor, kind in [
        (ValueStateDescriptor("v", None), StateKind.VALUE),
        (ListStateDescriptor("l", None), StateKind.LIST),
        (MapStateDescriptor("m", None, None), StateKind.MAP),
        (ReducingStateDescriptor("r", lambda a, b: a * b, None), StateKind.REDUCING),
        (AggregatingStateDescriptor("a", count, None), StateKind.AGGREGATING)]]
    assert [(s.name, s.kind) for s in specs] == [
        ("v", StateKind.VALUE), ("l", StateKind.LIST), ("m", StateKind.MAP),
        ("r", StateKind.REDUCING), ("a", StateKind.AGGREGATING)]
    assert specs[4].function is count and not any(s.with_ttl for s in specs)
    value, values, mapping, product, counter = (backend.state(s) for s in specs)
    value.update(1)
    values.add(2)
    mapping.put("a", 3)
    product.add(4)
    product.add(5)
    counter.add("x")
    assert sorted((name, value) for name, _, _, value in backend.entries()) == [
        ("a", 1), ("l", [2]), ("m", {"a": 3}), ("r", 20), ("v", 1)]


def test_a_descriptor_of_another_kind_is_rejected():
    with pytest.raises(TypeError, match="get_state\\(\\) needs a ValueStateDescriptor, "
                                        "got ListStateDescriptor 'l'"):
        spec_and_ttl(ListStateDescriptor("l", None), StateKind.VALUE)
    with pytest.raises(TypeError, match="get_map_state\\(\\) needs a MapStateDescriptor, "
                                        "got StateSpec 'v'"):
        spec_and_ttl(StateSpec("v", StateKind.VALUE), StateKind.MAP)
    assert kind_of(object()) is None and kind_of(ListStateDescriptor("l", None)) is StateKind.LIST


def test_engine_specs_pass_through_unchanged():
    spec = StateSpec("count", StateKind.REDUCING, lambda a, b: a + b)
    assert spec_and_ttl(spec, StateKind.REDUCING) == (spec, None)
    assert spec_and_ttl(spec, StateKind.REDUCING)[0] is spec
    assert kind_of(spec) is StateKind.REDUCING


def test_only_an_enabled_ttl_config_counts():
    descriptor = ValueStateDescriptor("v", None)
    assert spec_and_ttl(descriptor, StateKind.VALUE) == (StateSpec("v", StateKind.VALUE), None)
    config = StateTtlConfig.new_builder(Time.seconds(1)).build()
    descriptor.enable_time_to_live(config)
    spec, ttl_config = spec_and_ttl(descriptor, StateKind.VALUE)
    assert ttl_config is config and not spec.with_ttl  # the TTL layout is ttl_state's
    disabled = (StateTtlConfig.new_builder(Time.seconds(1))
                .set_update_type(StateTtlConfig.UpdateType.Disabled).build())
    descriptor.enable_time_to_live(disabled)
    assert spec_and_ttl(descriptor, StateKind.VALUE)[1] is None


def test_descriptors_validate_their_functions():
    with pytest.raises(TypeError):
        ReducingStateDescriptor("r", 42, None)
    with pytest.raises(TypeError):
        AggregatingStateDescriptor("a", lambda a, b: a, None)
    descriptor = ReducingStateDescriptor("r", lambda a, b: a * b, None)
    assert descriptor.get_name() == "r" and descriptor.get_reduce_function().reduce(2, 3) == 6
    assert MapStateDescriptor("m", "K", "V").key_type_info == "K"
