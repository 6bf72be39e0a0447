"""WatermarkStrategy.with_watermark_alignment, and the JVM-only assigner wrapper."""
import pytest

from api.common import AssignerWithPeriodicWatermarksWrapper, Duration, WatermarkStrategy
from api.common.watermark_strategy import TimestampAssigner
from tests.conftest import make_env


def test_alignment_is_recorded_and_changes_no_result():
    class First(TimestampAssigner):
        def extract_timestamp(self, value, record_timestamp):
            return value[0]

    strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(First())
    aligned = strategy.with_watermark_alignment("group", Duration.of_seconds(5),
                                                Duration.of_seconds(1))
    assert isinstance(aligned, WatermarkStrategy) and aligned is not strategy
    assert aligned.watermark_spec() == strategy.watermark_spec()
    env = make_env("local")
    data = [(1000, "a"), (3000, "b")]
    stream = env.from_collection(data).assign_timestamps_and_watermarks(aligned)
    assert stream.execute_and_collect(limit=5) == data


def test_the_wrapper_of_a_java_assigner_says_what_to_use_instead():
    with pytest.raises(TypeError, match="use a WatermarkStrategy with a TimestampAssigner"):
        AssignerWithPeriodicWatermarksWrapper(object())
