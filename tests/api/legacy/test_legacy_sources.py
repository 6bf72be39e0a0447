"""from_elements and generate_sequence, as the older Python streaming guide describes them
("Data Sources": "from_elements(*args) - Creates a data stream from all the elements",
"generate_sequence(from, to) - Generates the sequence of numbers in the given interval, in
parallel")."""
import json

import pytest

from tests.conftest import make_env


def test_from_elements():
    env = make_env("local")
    values = env.from_elements("Foo", "bar", "foobar", "fubar")
    assert list(values.execute_and_collect()) == ["Foo", "bar", "foobar", "fubar"]
    word_counts = env.from_elements(("hello", 1), ("world", 2))
    assert list(word_counts.map(lambda value: value[1]).execute_and_collect()) == [1, 2]
    with pytest.raises(ValueError, match="at least one element"):
        env.from_elements()


def test_generate_sequence_in_parallel(env_factory):
    env = env_factory(parallelism=2)
    numbers = env.generate_sequence(1, 1000)
    subtasks = numbers.map(lambda n: n)  # a source of parallelism 2, read by both subtasks
    assert sorted(subtasks.execute_and_collect()) == list(range(1, 1001))
    env.generate_sequence(1, 10).print()
    source = next(node for node in json.loads(env.get_execution_plan())["nodes"]
                  if node["type"].startswith("Source"))
    assert source["parallelism"] == 2
    with pytest.raises(ValueError):
        env.generate_sequence(10, 1)
