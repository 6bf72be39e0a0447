"""What user functions print reaches the job's stdout, as in PyFlink 2.3.0.

Each expected output below was observed on PyFlink 2.3.0 (Java 17, local MiniCluster),
running the same program with ``pyflink`` imports (python prog.py, stdout and stderr
apart). Within a subtask, PyFlink shows a function's prints as they happen, and the print
sink's lines as records reach it; ``close()`` prints once the records are through.
Where PyFlink's order depends on timing between its Python worker and the JVM (the
interleaving of sink lines with a map's prints, subtasks running at once), the tests
compare what does not depend on it.

Functions shipped to Spark workers are defined inside the tests, so that cloudpickle
ships them by value.
"""
import os
import sys
import tempfile

import pytest

from api.common import Time, Types, WatermarkStrategy
from api.common.restart_strategy import RestartStrategies
from api.common.watermark_strategy import TimestampAssigner
from api.datastream import (KeyedProcessFunction, MapFunction, ProcessWindowFunction,
                            RuntimeExecutionMode)
from api.datastream.connectors import DataGeneratorSource
from api.datastream.window import EventTimeSessionWindows

from tests.api.datastream.test_pyflink_fidelity import printed
from tests.conftest import make_env

MODES = [RuntimeExecutionMode.STREAMING, RuntimeExecutionMode.BATCH]


def session_windows_printing_their_elements(env, with_sink=True):
    """Flink's example session_with_gap_window.py, whose window function also prints
    each window's elements."""

    class MyTimestampAssigner(TimestampAssigner):
        def extract_timestamp(self, value, record_timestamp) -> int:
            return int(value[1])

    class CountWindowProcessFunction(ProcessWindowFunction):
        def process(self, key, context, elements):
            elements = list(elements)
            print(f"window {key} [{context.window().start}, {context.window().end}):",
                  [e[1] for e in elements])
            return [(key, context.window().start, context.window().end, len(elements))]

    data_stream = env.from_collection([
        ('hi', 1), ('hi', 2), ('hi', 3), ('hi', 4), ('hi', 8), ('hi', 9), ('hi', 15)],
        type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
    watermark_strategy = WatermarkStrategy.for_monotonous_timestamps() \
        .with_timestamp_assigner(MyTimestampAssigner())
    ds = data_stream.assign_timestamps_and_watermarks(watermark_strategy) \
        .key_by(lambda x: x[0], key_type=Types.STRING()) \
        .window(EventTimeSessionWindows.with_gap(Time.milliseconds(5))) \
        .process(CountWindowProcessFunction(),
                 Types.TUPLE([Types.STRING(), Types.INT(), Types.INT(), Types.INT()]))
    if with_sink:
        ds.print()


# Observed on PyFlink 2.3.0, the same in STREAMING and BATCH mode.
SESSION_WINDOW_PRINTS = ["window hi [1, 14): [1, 2, 3, 4, 8, 9]", "window hi [15, 20): [15]"]


@pytest.mark.parametrize("mode", MODES)
def test_a_window_function_prints_each_window_before_the_sink_prints_its_results(
        executor, capsys, mode):
    env = make_env(executor, parallelism=1)
    env.set_runtime_mode(mode)
    session_windows_printing_their_elements(env)
    env.execute()
    assert printed(capsys) == SESSION_WINDOW_PRINTS + ["(hi,1,14,6)", "(hi,15,20,1)"]


def test_open_map_close_and_the_print_sink_write_to_stdout_in_order(executor, capsys):
    """stderr stays stderr."""

    class Shout(MapFunction):
        def open(self, ctx):
            print("open", ctx.get_index_of_this_subtask())

        def map(self, x):
            print("map", x)
            print("err", x, file=sys.stderr)
            return x * 10

        def close(self):
            print("close")

    env = make_env(executor, parallelism=1)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    env.from_collection([1, 2, 3, 4, 5], type_info=Types.INT()).map(Shout(), Types.INT()) \
        .print()
    env.execute()
    out, err = capsys.readouterr()
    # Observed on PyFlink 2.3.0 (BATCH, parallelism 1); the "err" lines on its stderr.
    assert out.splitlines() == ["open 0", "map 1", "map 2", "map 3", "map 4", "map 5",
                                "10", "20", "30", "40", "50", "close"]
    if executor == "local":  # (a Spark worker's stderr is the JVM's, not this process's)
        assert err.splitlines() == ["err 1", "err 2", "err 3", "err 4", "err 5"]


# Observed on PyFlink 2.3.0 (STREAMING): three map subtasks, the sink at parallelism 1.
# Lines of different subtasks interleave differently from run to run; close() is last.
PARALLEL_PRINTS = ["open 2", "open 0", "map 1", "map 3", "open 1", "map 2", "map 5",
                   "map 8", "map 6", "map 9", "map 4", "map 7", "20", "50", "80", "30", "60",
                   "90", "10", "40", "70", "close 0", "close 1", "close 2"]


@pytest.mark.parametrize("micro_batch_size", [100, 2])
def test_parallel_subtasks_print_to_stdout(executor, capsys, micro_batch_size):
    """At parallelism 3, above the test session's two slots, Spark runs each stage as a
    stage of its own; with several batches, subtasks run in their hosts."""

    class Tens(MapFunction):
        def open(self, ctx):
            self.index = ctx.get_index_of_this_subtask()
            print("open", self.index)

        def map(self, x):
            print("map", x)
            return x * 10

        def close(self):
            print("close", self.index)

    env = make_env(executor, parallelism=3, micro_batch_size=micro_batch_size)
    env.from_collection(list(range(1, 10)), type_info=Types.INT()) \
        .map(Tens(), Types.INT()).print().set_parallelism(1)
    env.execute()
    lines = printed(capsys)
    assert sorted(lines) == sorted(PARALLEL_PRINTS)
    assert lines[-3:] == PARALLEL_PRINTS[-3:]


def test_timers_print_to_stdout(executor, capsys):

    class Stamp(TimestampAssigner):
        def extract_timestamp(self, value, record_timestamp):
            return value[1]

    class Timers(KeyedProcessFunction):
        def process_element(self, value, ctx):
            print("element", value)
            ctx.timer_service().register_event_time_timer(value[1] + 10)
            yield value[0]

        def on_timer(self, timestamp, ctx):
            print("timer", ctx.get_current_key(), timestamp)
            yield f"{ctx.get_current_key()}@{timestamp}"

    env = make_env(executor, parallelism=1)
    env.from_collection([("a", 1), ("b", 2), ("a", 30)],
                        type_info=Types.TUPLE([Types.STRING(), Types.INT()])) \
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Stamp())) \
        .key_by(lambda x: x[0], key_type=Types.STRING()) \
        .process(Timers(), Types.STRING()).print()
    env.execute()
    # Observed on PyFlink 2.3.0 (STREAMING).
    assert printed(capsys) == [
        "element ('a', 1)", "element ('b', 2)", "element ('a', 30)", "a", "b", "a",
        "timer a 11", "timer b 12", "timer a 40", "a@11", "b@12", "a@40"]


def test_what_a_failed_attempt_printed_stays_printed(executor, capsys):
    """The map fails on its third record once; the job restarts and runs again."""
    marker = os.path.join(tempfile.mkdtemp(), "failed")

    def fail_once_on_3(x):
        print("map", x)
        if x == 3 and not os.path.exists(marker):
            open(marker, "w").close()
            raise RuntimeError("boom")
        return x

    env = make_env(executor, parallelism=1)
    env.set_restart_strategy(RestartStrategies.fixed_delay_restart(1, 100))
    env.from_collection([1, 2, 3, 4], type_info=Types.INT()).map(fail_once_on_3, Types.INT()) \
        .print()
    env.execute()
    # Observed on PyFlink 2.3.0 (restart-strategy.type: fixed-delay, one attempt):
    observed = ["map 1", "1", "map 2", "map 3",
                "map 1", "map 2", "map 3", "map 4", "1", "2", "3", "4"]
    # Its sink printed the failed attempt's first record ("1") too: there the map's
    # results reach the sink while the map runs, here once the map has taken the whole
    # batch, and it failed on this batch.
    assert printed(capsys) == observed[:1] + observed[2:]


def test_a_streaming_jobs_prints_appear_batch_by_batch(executor, capsys):
    """What a batch printed is on stdout when the batch's results are out, before the next
    batch runs."""
    env = make_env(executor, parallelism=1, micro_batch_size=2)
    seen = env.from_collection([1, 2, 3, 4, 5, 6], type_info=Types.INT()) \
        .map(lambda x: print("saw", x) or x, Types.INT())
    with seen.execute_and_collect() as results:
        for x in results:
            batch_end = x + x % 2  # records 1-2, 3-4, 5-6 are batches
            assert printed(capsys) == ([f"saw {batch_end - 1}", f"saw {batch_end}"]
                                       if x % 2 else [])


def test_an_unbounded_jobs_prints_appear_while_it_runs(executor, capsys):
    env = make_env(executor, parallelism=1, **{"execution.micro-batch.interval": 20})
    numbers = env.from_source(DataGeneratorSource(lambda i: i, records_per_second=200),
                              WatermarkStrategy.no_watermarks(), "numbers")
    lines = []
    with numbers.map(lambda x: print("saw", x) or x).execute_and_collect() as results:
        for x in results:
            lines += printed(capsys)
            assert f"saw {x}" in lines
            if x == 20:
                break
    assert lines[:21] == [f"saw {i}" for i in range(21)]
