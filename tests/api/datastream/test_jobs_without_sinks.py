"""A job runs every operator the program defined, with a sink after it or not, as PyFlink
2.3.0 does; only a job without any operator is refused.

Each expected output was observed on PyFlink 2.3.0 (Java 17, local MiniCluster) running
the same program with ``pyflink`` imports (python prog.py); the programs print from
their functions, so what ran shows on stdout.

Functions shipped to Spark workers are defined inside the tests, so that cloudpickle
ships them by value.
"""
import json

import pytest

from api.common import Time, Types, WatermarkStrategy
from api.common.watermark_strategy import TimestampAssigner
from api.datastream import OutputTag, ProcessFunction, RuntimeExecutionMode
from api.datastream.window import TumblingEventTimeWindows, Trigger, TriggerResult
from engine.graph import PlanError

from tests.api.datastream.test_function_output import (SESSION_WINDOW_PRINTS,
                                                       session_windows_printing_their_elements)
from tests.api.datastream.test_pyflink_fidelity import printed
from tests.conftest import make_env


def shown(name):
    def show(x):
        print(name, x)
        return x
    return show


def unconsumed_map(ds):
    ds.map(shown("map"))


def a_branch_without_sink(ds):
    ds.map(shown("unconsumed"))
    ds.map(shown("consumed")).print()


def a_key_by_alone(ds):
    """(PyFlink's key_by is an operator of its own: its key selector runs.)"""
    ds.key_by(lambda x: print("key", x) or x % 2)


def keyed_reduce(ds):
    ds.key_by(lambda x: x % 2).reduce(lambda a, b: print("reduce", a, b) or a + b)


def count_window(ds):
    ds.key_by(lambda x: 0).count_window(2).reduce(lambda a, b: print("wreduce", a, b) or a + b)


def timestamps(ds):
    class Stamp(TimestampAssigner):
        def extract_timestamp(self, value, record_timestamp):
            print("stamp", value)
            return value

    ds.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Stamp()))


def side_output_only(ds):
    tag = OutputTag("odd", Types.INT())

    class Split(ProcessFunction):
        def process_element(self, value, ctx):
            print("process", value)
            yield (tag, value) if value % 2 else value

    ds.process(Split(), Types.INT()).get_side_output(tag).map(shown("side"))


def before_a_shuffle(ds):
    ds.map(shown("before")).shuffle()


# Observed on PyFlink 2.3.0 (STREAMING, parallelism 1) for a source of 1, 2, 3 (INT).
PROGRAMS = [
    (unconsumed_map, ["map 1", "map 2", "map 3"]),
    (a_branch_without_sink, ["unconsumed 1", "unconsumed 2", "unconsumed 3",
                             "consumed 1", "consumed 2", "consumed 3", "1", "2", "3"]),
    (a_key_by_alone, ["key 1", "key 2", "key 3"]),
    (keyed_reduce, ["reduce 1 3"]),
    (count_window, ["wreduce 1 2"]),
    (timestamps, ["stamp 1", "stamp 2", "stamp 3"]),
    (side_output_only, ["process 1", "process 2", "process 3", "side 1", "side 3"]),
    (before_a_shuffle, ["before 1", "before 2", "before 3"]),
]


@pytest.mark.parametrize("program, expected", PROGRAMS,
                         ids=[program.__name__ for program, _ in PROGRAMS])
def test_operators_without_a_sink_run(executor, capsys, program, expected):
    env = make_env(executor, parallelism=1)
    program(env.from_collection([1, 2, 3], type_info=Types.INT()))
    env.execute()
    assert printed(capsys) == expected


@pytest.mark.parametrize("mode", [RuntimeExecutionMode.STREAMING, RuntimeExecutionMode.BATCH])
def test_a_window_function_that_only_prints(executor, capsys, mode):
    env = make_env(executor, parallelism=1)
    env.set_runtime_mode(mode)
    session_windows_printing_their_elements(env, with_sink=False)
    env.execute()
    # Observed on PyFlink 2.3.0 in both modes.
    assert printed(capsys) == SESSION_WINDOW_PRINTS


def printing_trigger(env):
    """A job whose only output is what its trigger prints."""

    class Stamp(TimestampAssigner):
        def extract_timestamp(self, value, record_timestamp):
            return value[1]

    class PrintingTrigger(Trigger):
        def on_element(self, element, timestamp, window, ctx):
            print("element", element, "in", window.start, window.end)
            ctx.register_event_time_timer(window.max_timestamp())
            return TriggerResult.CONTINUE

        def on_event_time(self, time, window, ctx):
            print("fire", window.start, window.end, "at", time)
            return TriggerResult.FIRE_AND_PURGE

        def on_processing_time(self, time, window, ctx):
            return TriggerResult.CONTINUE

        def on_merge(self, window, ctx):
            pass

        def clear(self, window, ctx):
            print("clear", window.start, window.end)
            ctx.delete_event_time_timer(window.max_timestamp())

    env.from_collection([("a", 1), ("a", 4), ("b", 6), ("a", 12)],
                        type_info=Types.TUPLE([Types.STRING(), Types.INT()])) \
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Stamp())) \
        .key_by(lambda x: x[0], key_type=Types.STRING()) \
        .window(TumblingEventTimeWindows.of(Time.milliseconds(5))) \
        .trigger(PrintingTrigger()) \
        .reduce(lambda a, b: (a[0], a[1] + b[1]))


# Observed on PyFlink 2.3.0 (STREAMING).
TRIGGER_PRINTS = ["element ('a', 1) in 0 5", "element ('a', 4) in 0 5",
                  "element ('b', 6) in 5 10", "element ('a', 12) in 10 15",
                  "fire 0 5 at 4", "clear 0 5", "fire 5 10 at 9", "clear 5 10",
                  "fire 10 15 at 14", "clear 10 15"]
# Observed on PyFlink 2.3.0 (BATCH): the same lines, grouped by key.
TRIGGER_PRINTS_BATCH = ["element ('a', 1) in 0 5", "element ('a', 4) in 0 5",
                        "element ('a', 12) in 10 15", "element ('b', 6) in 5 10",
                        "fire 0 5 at 4", "clear 0 5", "fire 10 15 at 14", "clear 10 15",
                        "fire 5 10 at 9", "clear 5 10"]


def by_window(lines):
    """{window start: its lines in order}: one key per window in this program."""
    out = {}
    for line in lines:
        start = int(line.split(" in ")[1].split()[0] if " in " in line else line.split()[1])
        out.setdefault(start, []).append(line)
    return out


def test_a_job_whose_output_is_printed_by_its_trigger(executor, capsys):
    env = make_env(executor, parallelism=1)
    printing_trigger(env)
    env.execute()
    assert printed(capsys) == TRIGGER_PRINTS


def test_in_batch_mode_a_trigger_prints_what_pyflink_prints_for_each_key(executor, capsys):
    """PyFlink sorts BATCH input by key; the lines of each window (and key) agree."""
    env = make_env(executor, parallelism=1)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    printing_trigger(env)
    env.execute()
    assert by_window(printed(capsys)) == by_window(TRIGGER_PRINTS_BATCH)


def test_a_job_of_a_source_alone_is_refused():
    """As in PyFlink 2.3.0: IllegalStateException: No operators defined in streaming
    topology. Cannot execute."""
    env = make_env("local")
    env.from_collection([1, 2, 3], type_info=Types.INT())
    with pytest.raises(PlanError, match="No operators defined in streaming topology"):
        env.execute()


def test_the_plan_of_a_key_by_alone_reads_it():
    env = make_env("local", parallelism=2)
    env.from_collection([1, 2, 3], type_info=Types.INT()).key_by(lambda x: x % 2)
    nodes = json.loads(env.get_execution_plan())["nodes"]
    # PyFlink 2.3.0 shows the same operator (running at the source's parallelism, fed
    # FORWARD: its keys are computed there; here where records are routed by key).
    assert [(n["type"], n["parallelism"], [p["ship_strategy"] for p in
                                           n.get("predecessors", [])]) for n in nodes] == [
        ("Source: Collection Source", 1, []), ("_stream_key_by_map_operator", 2, ["HASH"])]


def test_the_execution_plan_shows_operators_without_a_sink():
    env = make_env("local", parallelism=1)
    ds = env.from_collection([1, 2, 3], type_info=Types.INT())
    ds.map(lambda x: x).name("unconsumed")
    ds.filter(lambda x: x > 1).print()
    nodes = json.loads(env.get_execution_plan())["nodes"]
    name = {n["id"]: n["type"] for n in nodes}
    # Observed on PyFlink 2.3.0 (get_execution_plan() of the same program).
    assert [(n["type"], [(name[p["id"]], p["ship_strategy"]) for p in
                         n.get("predecessors", [])]) for n in nodes] == [
        ("Source: Collection Source", []),
        ("unconsumed", [("Source: Collection Source", "FORWARD")]),
        ("Filter", [("Source: Collection Source", "FORWARD")]),
        ("Sink: Print to Std. Out", [("Filter", "FORWARD")])]
