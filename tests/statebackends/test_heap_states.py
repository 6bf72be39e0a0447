"""State semantics; expected values observed in PyFlink 2.3.0 (keyed process function)."""
import pytest

from statebackends.hashmap import HashMapKeyedStateBackend
from core.state_spec import StateKind, StateSpec


class Average:
    def create_accumulator(self):
        return [0, 0]

    def add(self, value, accumulator):
        return [accumulator[0] + value, accumulator[1] + 1]

    def get_result(self, accumulator):
        return accumulator[0] / accumulator[1]

    def merge(self, a, b):
        return [a[0] + b[0], a[1] + b[1]]


class Sum:
    def reduce(self, a, b):
        return a + b


@pytest.fixture
def backend():
    b = HashMapKeyedStateBackend("op", (0, 127), 128)
    b.set_current_key("k")
    return b


def test_value_state(backend):
    state = backend.state(StateSpec("v", StateKind.VALUE))
    assert state.value() is None
    state.update(5)
    assert state.value() == 5
    state.update(None)
    assert state.value() is None
    state.update(7)
    state.clear()
    assert state.value() is None and list(backend.entries()) == []


def test_list_state(backend):
    state = backend.state(StateSpec("l", StateKind.LIST))
    assert list(state.get()) == [] and list(state) == []
    state.add(1)
    state.add_all([2, 3])
    state.add(None)
    assert list(state.get()) == [1, 2, 3, None]
    state.update([9])
    assert list(state.get()) == [9]
    state.update([])
    assert list(state.get()) == []
    with pytest.raises(TypeError):
        state.update(None)


def test_list_state_get_is_a_copy(backend):
    state = backend.state(StateSpec("l", StateKind.LIST))
    state.add(1)
    state.get().append(2)
    assert list(state.get()) == [1]


def test_map_state(backend):
    state = backend.state(StateSpec("m", StateKind.MAP))
    assert state.get("x") is None and state["x"] is None
    assert not state.contains("x") and state.is_empty() and list(state.items()) == []
    state.remove("x")
    del state["x"]
    state.put("b", 2)
    state.put("a", 1)
    state["c"] = 3
    assert list(state.items()) == [("b", 2), ("a", 1), ("c", 3)]
    assert list(state.keys()) == ["b", "a", "c"] == list(state)
    assert list(state.values()) == [2, 1, 3]
    state.put_all([("f", 6)])
    state.put_all({"g": 7})  # PyFlink 2.3.0 raises here (it unpacks the dict's keys)
    state.put("n", None)
    assert state.get("n") is None and not state.contains("n") and "n" not in state
    assert list(state.items())[-1] == ("n", None)
    state.remove("a")
    assert "a" not in state and not state.is_empty()
    state.clear()
    assert state.is_empty()


def test_map_state_removing_the_last_entry_leaves_it_empty(backend):
    state = backend.state(StateSpec("m", StateKind.MAP))
    state["a"] = 1
    del state["a"]
    assert state.is_empty() and list(backend.entries()) == []


def test_reducing_state_with_a_function_or_a_callable(backend):
    for name, function in (("object", Sum()), ("callable", lambda a, b: a + b)):
        state = backend.state(StateSpec(name, StateKind.REDUCING, function))
        assert state.get() is None
        state.add(1)
        state.add(2)
        assert state.get() == 3
        state.clear()
        assert state.get() is None


def test_aggregating_state(backend):
    state = backend.state(StateSpec("a", StateKind.AGGREGATING, Average()))
    assert state.get() is None
    state.add(1)
    state.add(2)
    assert state.get() == 1.5
    state.add(None)  # clears, as in PyFlink
    assert state.get() is None


def test_state_objects_follow_the_current_key_and_namespace(backend):
    state = backend.state(StateSpec("v", StateKind.VALUE))
    for key in ("a", "b"):
        backend.set_current_key(key)
        state.update(key.upper())
    backend.set_current_key("a")
    backend.set_current_namespace("window-1")
    assert state.value() is None
    state.update("A1")
    assert state.value() == "A1" and backend.get_current_namespace() == "window-1"
    backend.set_current_namespace(None)
    assert state.value() == "A" and backend.get_current_key() == "a"
    assert set(backend.entries()) == {("v", "a", None, "A"), ("v", "a", "window-1", "A1"),
                                      ("v", "b", None, "B")}


def test_same_state_name_gives_the_same_state(backend):
    first = backend.state(StateSpec("v", StateKind.VALUE))
    assert backend.state(StateSpec("v", StateKind.VALUE)) is first


def test_name_registered_with_another_kind_is_rejected(backend):
    backend.state(StateSpec("x", StateKind.LIST))
    with pytest.raises(TypeError, match="'x' of operator 'op' is list state"):
        backend.state(StateSpec("x", StateKind.VALUE))


def test_value_table_is_only_for_states_of_one_value(backend):
    with pytest.raises(TypeError, match=r"needs value, reducing or aggregating state without "
                                        r"time-to-live, got list state 'x'"):
        backend.value_table(StateSpec("x", StateKind.LIST))
    with pytest.raises(TypeError, match="got value state 'y'"):
        backend.value_table(StateSpec("y", StateKind.VALUE, with_ttl=True))
    table, dirty = backend.value_table(StateSpec("sum", StateKind.REDUCING, lambda a, b: a + b))
    backend.set_current_key("k")
    backend.state(StateSpec("sum", StateKind.REDUCING, lambda a, b: a + b)).add(2)
    assert table[("k", None)] == 2 and dirty


def test_merge_namespaces_folds_windows_into_one():
    backend = HashMapKeyedStateBackend("op", (0, 127), 128)
    lists = backend.state(StateSpec("xs", StateKind.LIST))
    sums = backend.state(StateSpec("sum", StateKind.REDUCING, lambda a, b: a + b))
    backend.set_current_key("k")
    for namespace, values in (("w1", [1, 2]), ("w2", [3]), ("w3", [])):
        backend.set_current_namespace(namespace)
        for v in values:
            lists.add(v)
            sums.add(v)
    lists.merge_namespaces("w3", ["w1", "w2"])
    sums.merge_namespaces("w3", ["w1", "w2"])
    backend.set_current_namespace("w3")
    assert sorted(lists.get()) == [1, 2, 3] and sums.get() == 6
    backend.set_current_namespace("w1")
    assert lists.get() == [] and sums.get() is None
