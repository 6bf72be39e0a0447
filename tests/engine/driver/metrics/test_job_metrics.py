"""Metrics of known jobs, as JobExecutionResult, JobClient and metrics.jsonl give them."""
import json
import os
import time

import pytest

from api.common import Duration, TimestampAssigner, Types, WatermarkStrategy
from api.common.time import Time
from api.datastream import KeyedProcessFunction, MapFunction, OutputTag
from api.datastream.window import TumblingEventTimeWindows
from engine.errors import JobExecutionException
from engine.time.watermarks import MAX_WATERMARK, MIN_WATERMARK
from tests.conftest import GatheringSink, make_env

N = 60


def _filter_job(env):
    env.from_collection(list(range(N))).filter(lambda x: x % 3 != 0).add_sink(GatheringSink())


@pytest.mark.parametrize("parallelism", [1, 3])
def test_a_filter_that_drops_a_third_reports_exactly_that(parallelism):
    env = make_env("local", parallelism=parallelism, micro_batch_size=7)
    _filter_job(env)
    metrics = env.execute("filtering").get_metrics()
    source, flt, sink = (metrics["operators"][name]
                         for name in ("Source: Collection Source", "Filter", "Sink"))
    assert (source["numRecordsIn"], source["numRecordsOut"]) == (N, N)
    assert (flt["numRecordsIn"], flt["numRecordsOut"]) == (N, N * 2 // 3)
    assert (sink["numRecordsIn"], sink["numRecordsOut"]) == (N * 2 // 3, 0)
    assert metrics["job_name"] == "filtering"
    assert flt["numRecordsOutPerSecond"] > 0


def _slow(x):
    time.sleep(0.005)
    return x


def test_the_task_of_a_slow_operator_shows_it_in_its_busy_time():
    env = make_env("local", parallelism=1, micro_batch_size=10)
    env.from_collection(list(range(40))).key_by(lambda x: x % 2).map(_slow) \
        .add_sink(GatheringSink())
    operators = env.execute("slow map").get_metrics()["operators"]
    source, slow = operators["Source: Collection Source"], operators["Map"]
    assert slow["accumulatedBusyTime"] >= 40 * 5  # ms
    assert source["accumulatedBusyTime"] < slow["accumulatedBusyTime"] / 4
    assert 0 < slow["busyTimeMsPerSecond"] <= 1000
    assert operators["Sink"]["busyTimeMsPerSecond"] == slow["busyTimeMsPerSecond"]  # one task


class _Stamp(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


def test_a_source_map_and_assigner_in_one_loop_count_their_records_each():
    # In one chain, the source hands the map its plain values and the map stamps its
    # results for the assigner (engine.runtime.task._fused_input): each still counts its own.
    env = make_env("local", parallelism=1, micro_batch_size=7)
    sink = GatheringSink()
    (env.from_collection(list(range(N))).map(lambda x: ("k", x))
     .assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(_Stamp()))
     .filter(lambda v: v[1] % 3 != 0).add_sink(sink))
    operators = env.execute("stamping").get_metrics()["operators"]
    counts = {name: (operators[name]["numRecordsIn"], operators[name]["numRecordsOut"])
              for name in ("Source: Collection Source", "Map", "Timestamps/Watermarks",
                           "Filter")}
    assert counts == {"Source: Collection Source": (N, N), "Map": (N, N),
                      "Timestamps/Watermarks": (N, N), "Filter": (N, N * 2 // 3)}
    assert sorted(sink.values()) == [("k", x) for x in range(N) if x % 3 != 0]


# Batches of 3 records: the watermark advances to 9_999 after the second batch (from
# what the first saw), so the third batch's records at 500 and 1_500 are late for their
# window [0, 5_000) and dropped.
LATE_INPUT = [("a", 1_000), ("a", 2_000), ("a", 10_000), ("a", 11_000), ("a", 12_000),
              ("a", 13_000), ("a", 500), ("b", 1_500), ("a", 14_000)]


def _windowed(env, late_tag=None):
    stream = env.from_collection(LATE_INPUT).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(_Stamp()))
    windowed = stream.key_by(lambda v: v[0]).window(TumblingEventTimeWindows.of(Time.seconds(5)))
    if late_tag is not None:
        windowed = windowed.side_output_late_data(late_tag)
    return windowed.reduce(lambda a, b: (a[0], a[1] + b[1]))


def test_late_records_dropped_by_a_window_are_counted():
    env = make_env("local", micro_batch_size=3)
    _windowed(env).add_sink(GatheringSink())
    metrics = env.execute().get_metrics()
    window = next(values for name, values in metrics["operators"].items()
                  if name.startswith("Window"))
    assert window["numLateRecordsDropped"] == 2
    assert window["numRecordsIn"] == len(LATE_INPUT)
    assert metrics["job"]["numLateRecordsDropped"] == 2
    # only window operators have the metric, as in Flink
    assert "numLateRecordsDropped" not in metrics["operators"]["Sink"]


def test_late_records_sent_to_a_side_output_are_not_counted_as_dropped():
    env = make_env("local", micro_batch_size=3)
    late = OutputTag("late", Types.TUPLE([Types.STRING(), Types.INT()]))
    main = _windowed(env, late)
    main.add_sink(GatheringSink())
    gathered = GatheringSink()
    main.get_side_output(late).add_sink(gathered)
    metrics = env.execute().get_metrics()
    window = next(values for name, values in metrics["operators"].items()
                  if name.startswith("Window"))
    assert window["numLateRecordsDropped"] == 0
    assert sorted(gathered.values()) == [("a", 500), ("b", 1_500)]


class _Measured(MapFunction):
    def open(self, runtime_context):
        group = runtime_context.get_metrics_group()
        self.seen = group.add_group("my", "g").counter("seen")
        self.marks = group.meter("marks")
        self.sizes = group.distribution("sizes")
        self.index = runtime_context.get_index_of_this_subtask()
        group.gauge("instances", lambda: 1)
        group.gauge("label", lambda: f"subtask {self.index}")
        group.gauge("broken", lambda: 1 // 0)  # skipped, as Flink skips a failing gauge

    def map(self, value):
        self.seen.inc()
        self.seen.inc(2)
        self.seen.dec()
        self.marks.mark_event(value)
        self.sizes.update(value)
        return value


def test_user_metrics_are_aggregated_over_subtasks_and_batches():
    env = make_env("local", parallelism=2, micro_batch_size=5)
    env.from_collection(list(range(1, N + 1))).map(_Measured()).add_sink(GatheringSink())
    mapped = env.execute().get_metrics()["operators"]["Map"]
    assert mapped["my.g.seen"] == 2 * N
    assert mapped["marks"]["count"] == N * (N + 1) // 2 and mapped["marks"]["rate"] > 0
    assert mapped["sizes"] == {"count": N, "sum": N * (N + 1) // 2, "min": 1, "max": N,
                               "mean": (N + 1) / 2}
    assert mapped["instances"] == 2  # numeric gauges: summed over the subtasks
    assert mapped["label"] == "subtask 0"  # others: the first subtask's
    assert "broken" not in mapped


class _FarTimers(KeyedProcessFunction):
    def process_element(self, value, ctx):
        ctx.timer_service().register_event_time_timer(1_000_000)
        yield value


class _FailsAt45While(MapFunction):
    def __init__(self, flag: str):
        self.flag = flag

    def map(self, value):
        if value[1] == 45 and os.path.exists(self.flag):
            raise ValueError("bad record")
        return value


def _timers_job(env, flag):
    env.from_collection([(f"k{i}", i) for i in range(50)]).uid("numbers") \
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(_Stamp())) \
        .map(_FailsAt45While(flag)) \
        .key_by(lambda v: v[0]).process(_FarTimers()).uid("timers") \
        .add_sink(GatheringSink())


def test_pending_timers_and_metrics_jsonl_in_the_job_directory(tmp_path):
    flag = tmp_path / "broken"
    flag.touch()
    conf = {"state.checkpoints.dir": str(tmp_path / "checkpoints")}
    env = make_env("local", micro_batch_size=10, **conf)
    _timers_job(env, str(flag))
    with pytest.raises(JobExecutionException, match="bad record"):
        env.execute("timers")
    # the failed job keeps its directory, and there the metrics of its committed batches
    metrics_file = tmp_path / "checkpoints" / "timers" / "metrics.jsonl"
    lines = [json.loads(line) for line in metrics_file.read_text().splitlines()]
    assert [line["batch"] for line in lines] == [0, 1, 2, 3]
    process = [line["operators"]["KeyedProcess"] for line in lines]
    assert [p["numPendingTimers"] for p in process] == [10, 20, 30, 40]  # one per key
    assert [p["numRecordsIn"] for p in process] == [10, 20, 30, 40]
    # a batch advances to what its records and those before saw (monotonous: the
    # largest - 1)
    watermarks = [line["job"]["currentInputWatermark"] for line in lines]
    assert watermarks == [8, 18, 28, 38]
    assert lines[1]["job"]["watermarkLag"] == lines[1]["timestamp"] - 18

    flag.unlink()
    env = make_env("local", micro_batch_size=10, **conf)
    _timers_job(env, str(flag))
    result = env.execute("timers")  # resumes after batch 3, finishes
    last = result.get_metrics()
    assert last["batch"] == 4 and last["job"]["currentInputWatermark"] == MAX_WATERMARK
    # counts start afresh with each run (as in Flink); every timer fired at the end
    assert last["operators"]["KeyedProcess"]["numRecordsIn"] == 10
    assert last["operators"]["KeyedProcess"]["numPendingTimers"] == 0
    assert not metrics_file.exists()  # deleted with the finished job's directory


def _slowly(value):
    time.sleep(0.002)  # a batch of 10 takes longer than the checkpoint interval
    return value


def test_checkpoint_duration_and_size(tmp_path):
    env = make_env("local", micro_batch_size=10, **{"state.checkpoints.dir": str(tmp_path)})
    env.enable_checkpointing(10)
    env.from_collection([(f"k{i % 7}", i) for i in range(50)]) \
        .map(_slowly).key_by(lambda v: v[0]) \
        .reduce(lambda a, b: (a[0], a[1] + b[1])).name("sum") \
        .add_sink(GatheringSink())
    metrics = env.execute("checkpointed").get_metrics()
    job = metrics["job"]
    assert job["numberOfCompletedCheckpoints"] >= 2
    assert job["numberOfFailedCheckpoints"] == 0
    assert job["lastCheckpointDuration"] > 0
    assert os.path.basename(job["lastCheckpointExternalPath"]) == \
        f"chk-{job['numberOfCompletedCheckpoints']}"
    state_size = metrics["operators"]["sum"]["stateSize"]
    assert 0 < state_size < job["lastCheckpointSize"]  # (the rest: the _metadata file)


def test_job_client_gives_the_metrics_of_the_latest_batch():
    env = make_env("local", micro_batch_size=10)
    _filter_job(env)
    client = env.execute_async("async")
    result = client.get_job_execution_result().result(timeout=60)
    assert client.get_metrics() == result.get_metrics()
    assert client.get_metrics()["operators"]["Filter"]["numRecordsOut"] == N * 2 // 3
