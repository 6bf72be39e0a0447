"""The API's descriptors (api.datastream.state) drive the backend's states."""
import pytest

from api.datastream.state import (
    AggregatingStateDescriptor, ListStateDescriptor, MapStateDescriptor,
    ReducingStateDescriptor, ValueStateDescriptor,
)
from statebackends.hashmap import HashMapKeyedStateBackend


class Count:
    def create_accumulator(self):
        return 0

    def add(self, value, accumulator):
        return accumulator + 1

    def get_result(self, accumulator):
        return accumulator

    def merge(self, a, b):
        return a + b


def test_every_descriptor_gives_its_kind_of_state():
    backend = HashMapKeyedStateBackend("op", (0, 127), 128)
    backend.set_current_key("k")
    backend.get_state(ValueStateDescriptor("v", None)).update(1)
    backend.get_list_state(ListStateDescriptor("l", None)).add(2)
    backend.get_map_state(MapStateDescriptor("m", None, None)).put("a", 3)
    backend.get_reducing_state(ReducingStateDescriptor("r", lambda a, b: a * b, None)).add(4)
    backend.get_aggregating_state(AggregatingStateDescriptor("a", Count(), None)).add("x")
    assert sorted((name, value) for name, _, _, value in backend.entries()) == [
        ("a", 1), ("l", [2]), ("m", {"a": 3}), ("r", 4), ("v", 1)]
    with pytest.raises(TypeError, match="get_state\\(\\) needs a ValueStateDescriptor, "
                                        "got ListStateDescriptor 'l'"):
        backend.get_state(ListStateDescriptor("l", None))


def test_descriptors_validate_their_functions():
    with pytest.raises(TypeError):
        ReducingStateDescriptor("r", 42, None)
    with pytest.raises(TypeError):
        AggregatingStateDescriptor("a", lambda a, b: a, None)
    descriptor = ReducingStateDescriptor("r", lambda a, b: a * b, None)
    assert descriptor.get_name() == "r" and descriptor.get_reduce_function().reduce(2, 3) == 6
    assert MapStateDescriptor("m", "K", "V").key_type_info == "K"
