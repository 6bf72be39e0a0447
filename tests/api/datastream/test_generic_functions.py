"""The window function classes are generic as in PyFlink: programs subscript them, also in
annotations evaluated when the class is defined, and run.

Expected lines observed on PyFlink 2.3.0 with the same program (``pyflink`` imports).
"""
from typing import Iterable

from api.common import Duration, Time, Types, WatermarkStrategy
from api.common.watermark_strategy import TimestampAssigner
from api.datastream import TimeWindow
from api.datastream.functions import (AllWindowFunction, ProcessAllWindowFunction,
                                      ProcessWindowFunction, WindowFunction)
from api.datastream.window import CountWindow, TumblingEventTimeWindows

from tests.conftest import make_env


def test_subscripted_window_functions_run_a_window_job(executor, capsys):
    class CountWindowFunction(ProcessWindowFunction[tuple, tuple, str, TimeWindow]):
        def process(self, key: str, context: ProcessWindowFunction.Context[TimeWindow],
                    elements: Iterable[tuple]) -> Iterable[tuple]:
            window: TimeWindow = context.window()
            yield key, window.start, window.end, len([e for e in elements])

    class SumWindowFunction(WindowFunction[tuple, tuple, str, TimeWindow]):
        def apply(self, key: str, window: TimeWindow, inputs: Iterable[tuple]):
            return [(key, window.start, sum(e[1] for e in inputs))]

    class CountAll(ProcessAllWindowFunction[tuple, tuple, TimeWindow]):
        def process(self, context: ProcessAllWindowFunction.Context[TimeWindow],
                    elements: Iterable[tuple]):
            yield "all", context.window().start, len(list(elements))

    class Ts(TimestampAssigner):
        def extract_timestamp(self, value, record_timestamp):
            return value[2]

    env = make_env(executor)
    data = [("a", 1, 1000), ("b", 2, 2000), ("a", 3, 4000), ("a", 4, 6000), ("b", 5, 7000),
            ("b", 6, 11000)]
    ds = env.from_collection(data, Types.TUPLE([Types.STRING(), Types.INT(), Types.LONG()])) \
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_seconds(1))
            .with_timestamp_assigner(Ts()))
    keyed = ds.key_by(lambda e: e[0], key_type=Types.STRING())
    keyed.window(TumblingEventTimeWindows.of(Time.seconds(5))) \
        .process(CountWindowFunction()).print("process")
    keyed.window(TumblingEventTimeWindows.of(Time.seconds(5))) \
        .apply(SumWindowFunction()).print("apply")
    ds.window_all(TumblingEventTimeWindows.of(Time.seconds(5))).process(CountAll()).print("all")
    env.execute("generic windows")

    # The sinks' lines interleave, and windows of different keys that fire at the same
    # watermark may come in any order: compare each sink's sorted lines.
    lines = capsys.readouterr().out.splitlines()
    assert sorted(line for line in lines if line.startswith("process>")) == [
        "process> ('a', 0, 5000, 2)", "process> ('a', 5000, 10000, 1)",
        "process> ('b', 0, 5000, 1)", "process> ('b', 10000, 15000, 1)",
        "process> ('b', 5000, 10000, 1)"]
    assert sorted(line for line in lines if line.startswith("apply>")) == [
        "apply> ('a', 0, 4)", "apply> ('a', 5000, 4)", "apply> ('b', 0, 2)",
        "apply> ('b', 10000, 6)", "apply> ('b', 5000, 5)"]
    assert [line for line in lines if line.startswith("all>")] == [
        "all> ('all', 0, 3)", "all> ('all', 5000, 2)", "all> ('all', 10000, 1)"]


def test_window_function_classes_take_as_many_type_parameters_as_in_pyflink():
    class Total(AllWindowFunction[tuple, int, CountWindow]):
        def apply(self, window, inputs):
            yield sum(inputs)

    assert list(Total().apply(CountWindow(0), [1, 2])) == [3]
    for cls, count in [(WindowFunction, 4), (ProcessWindowFunction, 4), (AllWindowFunction, 3),
                       (ProcessAllWindowFunction, 3), (ProcessWindowFunction.Context, 1),
                       (ProcessAllWindowFunction.Context, 1)]:
        assert len(cls.__parameters__) == count, cls
