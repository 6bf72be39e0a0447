"""Side outputs of window functions: ``yield tag, value`` from a ProcessWindowFunction, from
the window function given to a windowed ``reduce``/``aggregate``, from a WindowFunction and
from the functions of ``window_all`` reaches ``get_side_output(tag)``, as in PyFlink 2.3.0;
main and side outputs have the timestamp of what fired the window (a time window's end, the
element that filled a count window), and what ``clear`` returns is dropped.

The expected lines were observed on PyFlink 2.3.0 (Java 17, local MiniCluster, parallelism
1, STREAMING), one program per window kind with ``pyflink`` for ``api``, each branch
printed after a ProcessFunction that appends ``@ctx.timestamp()``. In BATCH mode PyFlink
2.3.0 hangs on a window with a consumed side output (the same program without
``get_side_output`` finishes), so BATCH is held to the STREAMING results: a keyed tumbling
window gives the same windows in both modes.
"""
import pytest

from api.common import Types, WatermarkStrategy
from api.common.time import Time
from api.common.watermark_strategy import TimestampAssigner
from api.datastream import OutputTag, ProcessFunction, RuntimeExecutionMode
from api.datastream.functions import (AllWindowFunction, ProcessAllWindowFunction,
                                      ProcessWindowFunction, WindowFunction)
from api.datastream.window import CountTumblingWindowAssigner, TumblingEventTimeWindows
from benchmarks.nexmark.queries import CountAggregate
from engine.errors import JobExecutionException

from tests.api.datastream.test_pyflink_fidelity import by_identifier, printed
from tests.conftest import make_env

DATA = [("a", 1000), ("b", 1500), ("a", 2500), ("a", 3100), ("b", 4200), ("a", 6000)]

# window bounds / contents per key, as PyFlink fires them (by time, then key)
PROCESS = [("a 0-2000 n=1", "a 1", 1999), ("b 0-2000 n=1", "b 1", 1999),
           ("a 2000-4000 n=2", "a 2", 3999), ("b 4000-6000 n=1", "b 1", 5999),
           ("a 6000-8000 n=1", "a 1", 7999)]
OBSERVED = {
    "process": [f"main {main} @{ts}" for _, main, ts in PROCESS],
    "process_side": [f"side {side} @{ts}" for side, _, ts in PROCESS],
    "reduce": ["wmain a ('a', 1000) @1999", "wmain b ('b', 1500) @1999",
               "wmain a ('a', 5600) @3999", "wmain b ('b', 4200) @5999",
               "wmain a ('a', 6000) @7999"],
    "reduce_side": ["wside a ('a', 1000) @1999", "wside b ('b', 1500) @1999",
                    "wside a ('a', 5600) @3999", "wside b ('b', 4200) @5999",
                    "wside a ('a', 6000) @7999"],
    "aggregate": ["main a 1 @1999", "main b 1 @1999", "main a 1 @3999", "main b 1 @5999",
                  "main a 1 @7999"],
    "aggregate_side": ["side a 0-2000 n=1 @1999", "side b 0-2000 n=1 @1999",
                       "side a 2000-4000 n=1 @3999", "side b 4000-6000 n=1 @5999",
                       "side a 6000-8000 n=1 @7999"],
    "apply": ["wmain a ('a', 1000) @1999", "wmain b ('b', 1500) @1999",
              "wmain a ('a', 2500) @3999", "wmain a ('a', 3100) @3999",
              "wmain b ('b', 4200) @5999", "wmain a ('a', 6000) @7999"],
    "apply_side": ["wside a ('a', 1000) @1999", "wside b ('b', 1500) @1999",
                   "wside a ('a', 2500) @3999", "wside a ('a', 3100) @3999",
                   "wside b ('b', 4200) @5999", "wside a ('a', 6000) @7999"],
    "all": ["allmain 2 @1999", "allmain 2 @3999", "allmain 1 @5999", "allmain 1 @7999"],
    "all_side": ["allside 0 a,b @1999", "allside 2000 a,a @3999", "allside 4000 b @5999",
                 "allside 6000 a @7999"],
    "all_apply": ["awmain 0 @1999", "awmain 2000 @3999", "awmain 4000 @5999",
                  "awmain 6000 @7999"],
    "all_apply_side": ["aw 0 @1999", "aw 2000 @3999", "aw 4000 @5999", "aw 6000 @7999"],
    # a count window fires on an element: its results have that element's timestamp
    "count": ["cmain a @2500", "cmain b @4200", "cmain a @6000"],
    "count_side": ["cside a [1000, 2500] @2500", "cside b [1500, 4200] @4200",
                   "cside a [3100, 6000] @6000"],
    "count_all": ["camain @1500", "camain @3100", "camain @6000"],
    "count_all_side": ["caside [1000, 1500] @1500", "caside [2500, 3100] @3100",
                       "caside [4200, 6000] @6000"],
}
KINDS = ("process", "reduce", "aggregate", "apply", "all", "all_apply", "count", "count_all")
KEYED_TUMBLING = KINDS[:4]


def window_branches(env, kinds):
    """Each window kind of ``kinds`` over DATA, its main output printed as ``<kind>`` and
    its side output as ``<kind>_side``, each line with the record's timestamp."""
    tag = OutputTag("side", Types.STRING())

    class ByField(TimestampAssigner):
        def extract_timestamp(self, value, record_timestamp):
            return value[1]

    class WithTimestamp(ProcessFunction):
        def process_element(self, value, ctx):
            yield f"{value} @{ctx.timestamp()}"

    class Counted(ProcessWindowFunction):
        def process(self, key, context, elements):
            n = len(list(elements))
            window = context.window()
            yield tag, f"side {key} {window.start}-{window.end} n={n}"
            yield f"main {key} {n}"

        def clear(self, context):  # PyFlink drops what clear returns
            return [(tag, "from clear")]

    class EachElement(WindowFunction):
        def apply(self, key, window, inputs):
            for i in inputs:
                yield tag, f"wside {key} {i}"
                yield f"wmain {key} {i}"

    class AllKeys(ProcessAllWindowFunction):
        def process(self, context, elements):
            keys = sorted(e[0] for e in elements)
            yield tag, f"allside {context.window().start} {','.join(keys)}"
            yield f"allmain {len(keys)}"

    class Pairs(ProcessWindowFunction):
        def process(self, key, context, elements):
            yield tag, f"cside {key} {[e[1] for e in elements]}"
            yield f"cmain {key}"

    class AllPairs(ProcessAllWindowFunction):
        def process(self, context, elements):
            yield tag, f"caside {[e[1] for e in elements]}"
            yield "camain"

    class AllStarts(AllWindowFunction):
        def apply(self, window, inputs):
            yield tag, f"aw {window.start}"
            yield f"awmain {window.start}"

    ds = env.from_collection(DATA, Types.TUPLE([Types.STRING(), Types.LONG()])) \
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(ByField()))
    keyed = ds.key_by(lambda v: v[0], Types.STRING())
    windowed = keyed.window(TumblingEventTimeWindows.of(Time.seconds(2)))
    all_windowed = ds.window_all(TumblingEventTimeWindows.of(Time.seconds(2)))
    build = {
        "process": lambda: windowed.process(Counted(), Types.STRING()),
        "reduce": lambda: windowed.reduce(lambda a, b: (a[0], a[1] + b[1]), EachElement(),
                                          output_type=Types.STRING()),
        "aggregate": lambda: windowed.aggregate(CountAggregate(), Counted(), Types.INT(),
                                                Types.STRING()),
        "apply": lambda: windowed.apply(EachElement(), Types.STRING()),
        "all": lambda: all_windowed.process(AllKeys(), Types.STRING()),
        "all_apply": lambda: all_windowed.apply(AllStarts(), Types.STRING()),
        "count": lambda: keyed.count_window(2).process(Pairs(), Types.STRING()),
        "count_all": lambda: ds.window_all(CountTumblingWindowAssigner.of(2)).process(
            AllPairs(), Types.STRING()),
    }
    for kind in kinds:
        main = build[kind]()
        main.process(WithTimestamp(), Types.STRING()).print(kind)
        main.get_side_output(tag).process(WithTimestamp(), Types.STRING()).print(f"{kind}_side")


def test_window_functions_send_tagged_results_to_side_outputs(env_factory, capsys):
    env = env_factory(parallelism=1)
    window_branches(env, KINDS)
    env.execute()
    assert by_identifier(printed(capsys)) == OBSERVED


def test_keyed_tumbling_window_side_outputs_in_batch_mode(env_factory, capsys):
    env = env_factory(parallelism=1)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    window_branches(env, KEYED_TUMBLING)
    env.execute()
    results = by_identifier(printed(capsys))
    expected = {name: lines for name, lines in OBSERVED.items()
                if name.split("_")[0] in KEYED_TUMBLING}
    assert results.keys() == expected.keys()
    for name, lines in expected.items():  # BATCH does not promise an order of keys
        assert sorted(results[name]) == sorted(lines), name


def test_a_side_output_value_of_the_wrong_type_names_the_window_and_the_tag():
    env = make_env("local")
    tag = OutputTag("numbers", Types.INT())

    class Wrong(ProcessWindowFunction):
        def process(self, key, context, elements):
            yield tag, "not a number"

    main = env.from_collection([("a", 1)]).key_by(lambda v: v[0]) \
        .count_window(1).process(Wrong())
    main.get_side_output(tag).print()
    with pytest.raises(JobExecutionException,
                       match=r"Operator 'Window\(Process\) \(side output 'numbers'\)' failed on "
                             r"record 'not a number'"):
        env.execute()
