"""The environment's legacy settings, against the reference's text:
set/get_stream_time_characteristic, set/get_buffer_timeout, and
RuntimeContext.get_job_parameter."""
import time

import pytest

from api.common import Time, WatermarkStrategy
from api.datastream import (KeyedProcessFunction, MapFunction, SourceFunction,
                            TimeCharacteristic)
from api.datastream.window import TumblingEventTimeWindows
from api.testing import TestStream

from tests.conftest import make_env


def test_ingestion_time_stamps_records_with_the_time_they_enter():
    # "Ingestion time means that the time of each individual element in the stream is
    # determined when the element enters the Flink streaming dataflow. Operations like
    # windows group the elements based on that time."
    env = make_env("local")
    env.set_stream_time_characteristic(TimeCharacteristic.IngestionTime)
    assert env.get_stream_time_characteristic() is TimeCharacteristic.IngestionTime
    # the elements' own timestamps would group them otherwise: ("a", "d") and ("b", "c")
    script = (TestStream().add_elements([("a", 1000), ("b", 9000)])   # enter at 0 ms
              .advance_processing_time(3000).add_elements([("c", 9000)])   # at 3000 ms
              .advance_processing_time(4000).add_elements([("d", 1000)]))  # at 7000 ms
    windows = env.from_source(script, WatermarkStrategy.no_watermarks(), "script") \
        .key_by(lambda _: 0).window(TumblingEventTimeWindows.of(Time.seconds(5))) \
        .reduce(lambda x, y: x + y)
    assert list(windows.execute_and_collect()) == ["abc", "d"]
    with pytest.raises(ValueError, match="before creating them"):
        env.set_stream_time_characteristic(TimeCharacteristic.EventTime)
    with pytest.raises(ValueError, match="IngestionTime"):
        env.from_source(script, WatermarkStrategy.for_monotonous_timestamps(), "stamped")


def test_the_characteristic_sets_the_auto_watermark_interval():
    # "If you set the characteristic to IngestionTime of EventTime this will set a default
    # watermark update interval of 200 ms."
    env = make_env("local")
    env.set_stream_time_characteristic(TimeCharacteristic.ProcessingTime)
    assert env.get_config().get_auto_watermark_interval() == 0
    env.set_stream_time_characteristic(TimeCharacteristic.EventTime)
    assert env.get_config().get_auto_watermark_interval() == 200
    with pytest.raises(TypeError, match="TimeCharacteristic"):
        env.set_stream_time_characteristic("EventTime")


class BatchTimes(KeyedProcessFunction):
    def process_element(self, value, ctx):
        yield ctx.timer_service().current_processing_time()


class Endless(SourceFunction):
    """Emits a record every 10 ms, without end."""

    def __init__(self):
        self.running = True

    def run(self, ctx):
        while self.running:
            ctx.collect(1)
            time.sleep(0.01)

    def cancel(self):
        self.running = False


def batch_start_gaps(stream, batches=4):
    """The processing times between the first micro-batches that had records."""
    times = set()
    with stream.execute_and_collect() as results:
        while len(times) < batches:
            times.add(next(results))
    times = sorted(times)
    return [b - a for a, b in zip(times, times[1:])]


def test_buffer_timeout_is_the_interval_of_micro_batches():
    # "Sets the maximum time frequency (milliseconds) for the flushing of the output
    # buffers": records cross operators once per micro-batch, so an unbounded job starts
    # its micro-batches this often
    env = make_env("local")
    env.set_buffer_timeout(300)
    assert env.get_buffer_timeout() == 300
    assert min(batch_start_gaps(env.add_source(Endless()).key_by(lambda v: v)
                                .process(BatchTimes()))) >= 300
    # an operator's timeout: "how long data may linger ... before being sent" -- the
    # smallest of the job's timeouts applies to every micro-batch
    env.set_buffer_timeout(2000)
    stream = env.add_source(Endless()).key_by(lambda v: v).process(BatchTimes())
    gaps = batch_start_gaps(stream.set_buffer_timeout(300))
    assert 300 <= min(gaps) < 2000


def test_buffer_timeouts_that_cannot_apply_fail_when_set():
    env = make_env("local")
    with pytest.raises(ValueError, match=r"set_buffer_timeout\(0\) cannot apply"):
        env.set_buffer_timeout(0)
    with pytest.raises(ValueError, match=r"set_buffer_timeout\(-1\) cannot apply"):
        env.set_buffer_timeout(-1)
    stream = env.from_collection([1]).map(lambda v: v)
    stream.set_buffer_timeout(-1)  # an operator's -1: the environment's timeout
    with pytest.raises(ValueError, match="cannot apply"):
        stream.set_buffer_timeout(0)


class JobParameter(MapFunction):
    def open(self, runtime_context):
        self.context = runtime_context

    def map(self, key):
        return key, self.context.get_job_parameter(key, "default")


def test_get_job_parameter():
    # "Gets the global job parameter value associated with the given key as a string."
    env = make_env("local", parallelism=2)
    env.get_config().set_global_job_parameters({"color": "blue", "size": 3})
    got = dict(env.from_collection(["color", "size", "missing"]).map(JobParameter())
               .execute_and_collect())
    assert got == {"color": "blue", "size": "3", "missing": "default"}
