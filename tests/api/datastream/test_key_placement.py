"""Keys land on the subtask where PyFlink 2.3.0 puts them, typed and untyped; list keys."""
import ast
from collections import defaultdict

import pytest

from api.common import Types
from api.datastream.functions import KeyedProcessFunction
from api.datastream.state import ValueStateDescriptor

from tests.conftest import make_env

WORDS = ["banana", "apple", "cherry", "banana", "kiwi", "apple", "banana", "fig", "grape",
         "lemon", "mango", "kiwi", "plum", "pear", "fig", "date"]


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_list_and_dict_keys_keep_state_and_come_back_as_they_were(executor, backend, capsys):
    """Untyped keys are keyed by their bytes, as in PyFlink: a list or a dict is a key, and
    ``get_current_key()`` gives it back; equal lists are one key (observed on PyFlink
    2.3.0: a KeyedProcessFunction keyed by ``[word, len(word) % 2]`` prints
    ``['banana', 0] list 3`` for the third banana)."""

    class Count(KeyedProcessFunction):
        def open(self, ctx):
            self.count = ctx.get_state(ValueStateDescriptor("n", Types.INT()))

        def process_element(self, value, ctx):
            self.count.update((self.count.value() or 0) + 1)
            yield ctx.get_current_key(), self.count.value()

    env = make_env(executor, parallelism=2, **{"state.backend.type": backend})
    words = env.from_collection(WORDS * 2)
    words.key_by(lambda w: [w, len(w)]).process(Count()).print("list")
    words.key_by(lambda w: {"word": w}).process(Count()).print("dict")
    env.execute("list keys")
    counts = defaultdict(list)
    for line in capsys.readouterr().out.splitlines():
        sink, record = line.split("> ", 1)
        key, count = ast.literal_eval(record)  # the printed tuple (key, count)
        counts[sink.split(":")[0], repr(key)].append(count)
    expected = {}
    for word in set(WORDS):
        n = 2 * WORDS.count(word)
        expected["list", repr([word, len(word)])] = list(range(1, n + 1))
        expected["dict", repr({"word": word})] = list(range(1, n + 1))
    assert {k: sorted(v) for k, v in counts.items()} == expected

