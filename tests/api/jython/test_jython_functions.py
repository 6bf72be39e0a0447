"""The function classes of the older Python streaming guide
(python-streaming-programming-guide-jython.txt, "Transformations" and "Passing Functions
to Flink"), with their camelCase methods, in the guide's own examples."""
import pytest
from org.apache.flink.api.common.functions import (FilterFunction, FlatMapFunction,
                                                   MapFunction, ReduceFunction,
                                                   RichMapFunction)
from org.apache.flink.api.java.functions import KeySelector
from org.apache.flink.streaming.api.functions.windowing import WindowFunction

from api.common import Configuration

from tests.api.jython.jython_helpers import collect, local_env


class Doubler(MapFunction):
    def map(self, value):
        return value * 2


class Tokenizer(FlatMapFunction):
    def flatMap(self, value, collector):
        for word in value.lower().split():
            collector.collect((1, word))


class GreaterThen1000(FilterFunction):
    def filter(self, value):
        return value > 1000


class Selector(KeySelector):
    def getKey(self, input):
        return input[1]  # Key by the second element in a tuple


class Sum(ReduceFunction):
    def reduce(self, input1, input2):
        count1, val1 = input1
        count2, val2 = input2
        return (count1 + count2, val1)


class WindowSum(WindowFunction):
    def apply(self, key, window, values, collector):
        sum = 0
        for value in values:
            sum += value[0]
        collector.collect((key, sum))


def test_map_doubles_every_value():
    env = local_env()
    assert collect(env.from_elements(1, 2, 600).map(Doubler())) == [2, 4, 1200]


def test_flat_map_emits_what_the_collector_collects():
    env = local_env()
    tokens = env.from_elements("Hello World", "", "to BE or not").flat_map(Tokenizer())
    # zero, one or more elements per element, in order
    assert collect(tokens) == [(1, "hello"), (1, "world"), (1, "to"), (1, "be"), (1, "or"),
                               (1, "not")]


def test_filter_keeps_the_values_it_accepts():
    env = local_env()
    assert collect(env.from_elements(5, 1001, 1000, 2000).filter(GreaterThen1000())) == \
        [1001, 2000]


def test_key_by_get_key_with_a_rolling_reduce():
    env = local_env(parallelism=2)
    words = env.from_elements("a b a", "c a b").flat_map(Tokenizer())
    sums = collect(words.key_by(Selector()).reduce(Sum()))
    # "combines the current element with the last reduced value and emits the new value"
    by_word = {}
    for count, word in sums:
        by_word.setdefault(word, []).append(count)
    assert by_word == {"a": [1, 2, 3], "b": [1, 2], "c": [1]}


def test_window_apply_collects_per_key_and_window():
    env = local_env()
    values = env.from_collection([(i, "k") for i in range(1, 21)] + [(100, "j")])
    # count_window(10, 5): "Last 10 elements, sliding (jumping) by 5 elements"
    sums = collect(values.key_by(Selector()).count_window(10, 5).apply(WindowSum()))
    assert sums == [("k", sum(range(1, 11))), ("k", sum(range(6, 16))),
                    ("k", sum(range(11, 21)))]


def test_window_reduce():
    env = local_env()
    values = env.from_collection([(i, "k") for i in range(1, 7)])
    assert collect(values.key_by(Selector()).count_window(3).reduce(Sum())) == \
        [(6, "k"), (15, "k")]


class Prefixer(RichMapFunction):
    """Opened with a Configuration before the first record; closed after the last."""

    def __init__(self, closed_marker):
        self.closed_marker = closed_marker

    def open(self, config):
        self.config_type = type(config).__name__
        self.prefix = "opened"

    def map(self, value):
        return f"{self.prefix}:{self.config_type}:{value}"

    def close(self):
        with open(self.closed_marker, "a") as f:
            f.write("closed\n")


class PlainWithOpen(MapFunction):
    """Not a Rich function: Flink does not call its open."""

    prefix = "not opened"

    def open(self, config):
        self.prefix = "opened"

    def map(self, value):
        return self.prefix


def test_rich_functions_are_opened_with_a_configuration_and_closed(tmp_path):
    marker = str(tmp_path / "closed")
    env = local_env()
    assert collect(env.from_elements(1, 2).map(Prefixer(marker))) == \
        [f"opened:{Configuration.__name__}:1", f"opened:{Configuration.__name__}:2"]
    with open(marker) as f:
        assert f.read() == "closed\n"
    assert collect(local_env().from_elements(1).map(PlainWithOpen())) == ["not opened"]


def test_wrong_functions_fail_at_build_time():
    env = local_env()
    numbers = env.from_elements(1, 2)
    with pytest.raises(TypeError, match=r"map\(\) expects a MapFunction \(a class with "
                                        r"map\(\.\.\.\)\), got function"):
        numbers.map(lambda v: v)
    with pytest.raises(TypeError, match=r"flat_map\(\) expects a FlatMapFunction.*flatMap"):
        numbers.flat_map(Doubler())

    class NewStyle(FlatMapFunction):
        def flat_map(self, value):  # this project's name, not the guide's
            yield value
    with pytest.raises(TypeError, match="abstract method.*flatMap"):
        NewStyle()
