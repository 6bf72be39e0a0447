"""KeyedStream.time_window and count_window, as the older Python streaming guide writes
them ("Window": ``count_window(10, 5)`` "Last 10 elements, sliding (jumping) by 5
elements"; ``time_window(milliseconds(30))`` "Last 30 milliseconds of data";
``time_window(milliseconds(100), milliseconds(20))`` sliding by 20 milliseconds)."""
from api.common import Time, WatermarkStrategy
from api.common.watermark_strategy import TimestampAssigner
from api.datastream import RuntimeExecutionMode, TimeCharacteristic

from tests.conftest import make_env


class FirstField(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[0]


def timestamped(env, timestamps):
    """(timestamp, "k", 1) records stamped with their timestamp."""
    return env.from_collection([(t, "k", 1) for t in timestamps]).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(FirstField()))


def window_sums(windowed):
    return sorted(windowed.reduce(lambda a, b: (min(a[0], b[0]), a[1], a[2] + b[2]))
                  .execute_and_collect())


def test_time_window_tumbling_and_sliding_in_event_time():
    env = make_env("local")
    timestamps = [0, 10, 29, 30, 59, 95]
    tumbling = timestamped(env, timestamps).key_by(lambda r: r[1]) \
        .time_window(Time.milliseconds(30))
    # windows [0,30) [30,60) [90,120): counts 3, 2, 1 (each result keeps its first timestamp)
    assert window_sums(tumbling) == [(0, "k", 3), (30, "k", 2), (95, "k", 1)]
    sliding = timestamped(env, timestamps).key_by(lambda r: r[1]) \
        .time_window(Time.milliseconds(100), Time.milliseconds(20))
    counts = [count for _, _, count in window_sums(sliding)]
    # each element is in the 5 windows of 100 ms that start at multiples of 20 around it
    assert sum(counts) == 5 * len(timestamps)
    assert max(counts) == len(timestamps)  # [0, 100) holds them all


def test_time_window_in_processing_time_under_the_processing_time_characteristic():
    env = make_env("local")
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)  # processing-time windows fire at the end
    env.set_stream_time_characteristic(TimeCharacteristic.ProcessingTime)
    # records without timestamps, which event-time windows cannot place
    windowed = env.from_collection([("k", 1), ("k", 2), ("j", 5)]).key_by(lambda r: r[0]) \
        .time_window(Time.hours(1))
    assert sorted(windowed.reduce(lambda a, b: (a[0], a[1] + b[1])).execute_and_collect()) == \
        [("j", 5), ("k", 3)]


def test_count_window_sliding_by_fewer_elements_than_its_size():
    env = make_env("local")
    sums = env.from_collection([("k", i) for i in range(1, 21)]).key_by(lambda r: r[0]) \
        .count_window(10, 5).reduce(lambda a, b: (a[0], a[1] + b[1]))
    # every 5 elements, the last 10, once there are 10 (PyFlink fires full windows only,
    # see FIDELITY.md): 1..10, 6..15, 11..20
    assert [s for _, s in sums.execute_and_collect()] == [
        sum(range(1, 11)), sum(range(6, 16)), sum(range(11, 21))]
