"""split / select, as the older Python streaming guide shows them
(python-streaming-programming-guide-jython.txt, "Split" and "Select")."""
import pytest

from api.datastream import OutputSelector

from tests.conftest import make_env


class StreamSelector(OutputSelector):
    """The guide's selector."""

    def select(self, value):
        return ["even"] if value % 2 == 0 else ["odd"]


def test_select_picks_the_elements_of_the_named_outputs(env_factory):
    env = env_factory(parallelism=2)
    splited_stream = env.from_collection(list(range(20))).split(StreamSelector())
    even_data_stream = splited_stream.select("even")
    odd_data_stream = splited_stream.select("odd")
    all_data_stream = splited_stream.select("even", "odd")
    tagged = even_data_stream.map(lambda v: ("even", v)) \
        .union(odd_data_stream.map(lambda v: ("odd", v)),
               all_data_stream.map(lambda v: ("all", v)),
               splited_stream.map(lambda v: ("split", v)))
    got = sorted(tagged.execute_and_collect())
    # every element goes once to each select naming one of its outputs, and the split
    # stream itself is the whole stream
    assert got == sorted([("even", v) for v in range(0, 20, 2)]
                         + [("odd", v) for v in range(1, 20, 2)]
                         + [("all", v) for v in range(20)]
                         + [("split", v) for v in range(20)])


def test_an_element_may_go_to_several_outputs_or_none():
    env = make_env("local")
    split = env.from_collection(list(range(12))).split(
        lambda v: [name for name, divisor in (("by2", 2), ("by3", 3)) if v % divisor == 0])
    by2 = split.select("by2")
    by3 = split.select("by3")
    either = split.select("by3", "by2")
    got = sorted(by2.map(lambda v: ("by2", v)).union(
        by3.map(lambda v: ("by3", v)), either.map(lambda v: ("either", v))).execute_and_collect())
    assert got == sorted([("by2", v) for v in range(0, 12, 2)]
                         + [("by3", v) for v in range(0, 12, 3)]
                         + [("either", v) for v in range(12) if v % 2 == 0 or v % 3 == 0])


def test_select_keeps_the_order_of_the_elements():
    env = make_env("local")
    words = ["b", "a", "d", "c", "e"]
    split = env.from_collection(words).split(lambda w: ["vowel" if w in "ae" else "other"])
    assert list(split.select("other").execute_and_collect()) == ["b", "d", "c"]


def test_a_selector_must_return_names():
    env = make_env("local")
    env.from_collection([1]).split(lambda v: "odd").select("odd").print()
    with pytest.raises(Exception, match=r"Split.*iterable of output names"):
        env.execute()
    with pytest.raises(TypeError, match="OutputSelector or a function"):
        env.from_collection([1]).split("odd")
    with pytest.raises(ValueError, match="at least one output name"):
        env.from_collection([1]).split(StreamSelector()).select()
