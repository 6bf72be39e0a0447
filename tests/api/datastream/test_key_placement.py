"""Keys land on the subtask where PyFlink 2.3.0 puts them, typed and untyped; list keys.

``data/pyflink_key_placement.json`` holds the subtask PyFlink 2.3.0 gave each of a few
hundred keys per key type, at parallelism 2, 3 and 4 with the default max parallelism,
at 3 with ``env.set_max_parallelism(256)`` and at 4 with an operator's
``set_max_parallelism(10)`` (how it was observed is in the file). The
``data/pyflink_keyed_prints_p<N>.txt`` files are the sorted print lines of
``keyed_prints`` below, run with ``pyflink`` imports on PyFlink 2.3.0 at parallelism N.
"""
import ast
import json
from collections import defaultdict
from pathlib import Path

import pytest

from api.common import Row, Types
from api.datastream.functions import KeyedCoProcessFunction, KeyedProcessFunction
from api.datastream.state import ValueStateDescriptor
from api.datastream.window import CountTumblingWindowAssigner
from core.keygroups import assign_operator_index

from tests.conftest import make_env

DATA = Path(__file__).parent / "data"

KEY_TYPES = {
    "STRING": Types.STRING(), "INT": Types.INT(), "LONG": Types.LONG(),
    "SHORT": Types.SHORT(), "BYTE": Types.BYTE(), "BOOLEAN": Types.BOOLEAN(),
    "DOUBLE": Types.DOUBLE(), "FLOAT": Types.FLOAT(),
    "TUPLE_STRING_INT": Types.TUPLE([Types.STRING(), Types.INT()]),
    "TUPLE_INT_LONG_STRING": Types.TUPLE([Types.INT(), Types.LONG(), Types.STRING()]),
    "TUPLE_STRING_TUPLE_INT_INT": Types.TUPLE(
        [Types.STRING(), Types.TUPLE([Types.INT(), Types.INT()])]),
    "ROW_STRING_INT": Types.ROW([Types.STRING(), Types.INT()]),
    "ROW_NAMED_STRING_LONG": Types.ROW_NAMED(["a", "b"], [Types.STRING(), Types.LONG()]),
    "UNTYPED": None,
}


def _decoded(value):
    """A key of the data file (see its "encoding")."""
    if isinstance(value, list):
        return [_decoded(item) for item in value]
    if isinstance(value, dict):
        (tag, item), = value.items()
        if tag == "f":
            return float(item) if item == "nan" else float.fromhex(item)
        if tag == "b":
            return bytes.fromhex(item)
        if tag == "t":
            return tuple(map(_decoded, item))
        if tag == "d":
            return {_decoded(k): _decoded(v) for k, v in item}
    return value


PLACEMENTS = json.loads((DATA / "pyflink_key_placement.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("type_name", sorted(PLACEMENTS["types"]))
def test_every_recorded_key_goes_to_the_subtask_pyflink_put_it_on(type_name):
    key_type = KEY_TYPES[type_name]
    placement = None if key_type is None else key_type._key_type()
    recorded = PLACEMENTS["types"][type_name]
    keys = [_decoded(key) for key in recorded["keys"]]
    if type_name.startswith("ROW"):
        keys = [Row(*key) for key in keys]
    for config, subtasks in recorded["subtasks"].items():
        settings = PLACEMENTS["configs"][config]
        max_parallelism = (settings["operator_max_parallelism"]
                           or settings["env_max_parallelism"] or 128)
        ours = "".join(str(assign_operator_index(key, max_parallelism,
                                                 settings["parallelism"], placement))
                       for key in keys)
        wrong = [(key, int(theirs), int(mine))
                 for key, theirs, mine in zip(keys, subtasks, ours) if theirs != mine]
        assert not wrong, f"{type_name} at {config}: (key, PyFlink's, ours) {wrong[:5]}"


WORDS = ["banana", "apple", "cherry", "banana", "kiwi", "apple", "banana", "fig", "grape",
         "lemon", "mango", "kiwi", "plum", "pear", "fig", "date"]


def keyed_prints(env):
    """Rolling aggregations keyed by STRING, INT, LONG, TUPLE and untyped keys, a count
    per untyped list key, and a count window over all records, each to its own print."""

    class CountPerKey(KeyedProcessFunction):
        def open(self, ctx):
            self.count = ctx.get_state(ValueStateDescriptor("n", Types.INT()))

        def process_element(self, value, ctx):
            n = (self.count.value() or 0) + 1
            self.count.update(n)
            yield f"{ctx.get_current_key()!r} {type(ctx.get_current_key()).__name__} {n}"

    pairs = Types.TUPLE([Types.STRING(), Types.INT()])
    words = env.from_collection([(w, 1) for w in WORDS], type_info=pairs)
    add = lambda a, b: (a[0], a[1] + b[1])  # noqa: E731
    words.key_by(lambda x: x[0], key_type=Types.STRING()).reduce(add).print("S")
    words.key_by(lambda x: x[0]).reduce(add).print("U")
    numbers = env.from_collection([(i % 7, i) for i in range(20)],
                                  type_info=Types.TUPLE([Types.INT(), Types.INT()]))
    numbers.key_by(lambda x: x[0], key_type=Types.INT()).sum(1).print("I")
    numbers.key_by(lambda x: x[0]).sum(1).print("UI")
    longs = env.from_collection([(i % 5 * 10_000_000_000, i) for i in range(15)],
                                type_info=Types.TUPLE([Types.LONG(), Types.INT()]))
    longs.key_by(lambda x: x[0], key_type=Types.LONG()).sum(1).print("L")
    words.key_by(lambda x: (x[0], len(x[0])),
                 key_type=Types.TUPLE([Types.STRING(), Types.INT()])).reduce(add).print("T")
    words.key_by(lambda x: [x[0], len(x[0]) % 2]).process(CountPerKey()).print("LIST")
    words.window_all(CountTumblingWindowAssigner.of(4)).reduce(add).print("W")


@pytest.mark.parametrize("executor, parallelism",
                         [("local", 2), ("local", 3), ("local", 4), ("spark", 3)])
def test_print_prefixes_are_pyflinks(executor, parallelism, capsys, request):
    if executor == "spark":
        request.getfixturevalue("spark")
    env = make_env(executor, parallelism=parallelism)
    keyed_prints(env)
    env.execute("keyed prints")
    expected = (DATA / f"pyflink_keyed_prints_p{parallelism}.txt").read_text().splitlines()
    assert sorted(capsys.readouterr().out.splitlines()) == expected


@pytest.mark.parametrize("backend", ["hashmap", "rocksdb"])
def test_list_and_dict_keys_keep_state_and_come_back_as_they_were(executor, backend, capsys):
    """Untyped keys are keyed by their bytes, as in PyFlink: a list or a dict is a key, and
    ``get_current_key()`` gives it back; equal lists are one key (PyFlink 2.3.0 prints
    ``['banana', 0] list 3`` for the third banana in keyed_prints)."""

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


def test_connecting_keyed_streams_of_other_key_types_is_refused():
    """Their keys would not meet on one subtask. PyFlink 2.3.0 raises, when process() is
    called, "Key types if input KeyedStreams don't match: Row(f0: String) and Row(f0:
    PickledByteArrayTypeInfo)." (a Java UnsupportedOperationException)."""

    class Both(KeyedCoProcessFunction):
        def process_element1(self, value, ctx):
            yield value

        def process_element2(self, value, ctx):
            yield value

    env = make_env("local")
    a = env.from_collection(["a", "b"], Types.STRING())
    b = env.from_collection(["a", "c"], Types.STRING())
    connected = a.key_by(lambda x: x, Types.STRING()).connect(b.key_by(lambda x: x))
    with pytest.raises(TypeError, match=r"Key types if input KeyedStreams don't match: "
                                        r"Row\(f0: String\) and "
                                        r"Row\(f0: PickledByteArrayTypeInfo\)\."):
        connected.process(Both())
