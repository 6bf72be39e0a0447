"""TestStream: scripted batches, watermarks and processing time make time-dependent
results deterministic."""
from api.common import WatermarkStrategy
from api.datastream import KeyedProcessFunction
from api.testing.test_stream import TestStream

MAX = 2 ** 63 - 1


class Timers(KeyedProcessFunction):
    def process_element(self, value, ctx):
        timers = ctx.timer_service()
        timers.register_event_time_timer(ctx.timestamp() + 100)
        timers.register_processing_time_timer(timers.current_processing_time() + 1000)
        yield "element", value, ctx.timestamp(), timers.current_watermark(), \
            timers.current_processing_time()

    def on_timer(self, timestamp, ctx):
        yield "timer", ctx.get_current_key(), timestamp, ctx.time_domain().name, \
            ctx.timer_service().current_watermark(), ctx.timer_service().current_processing_time()


def test_scripted_watermarks_and_processing_time(env_factory):
    stream = (TestStream()
              .add_elements([(("a", 1), 1000), (("b", 2), 2000)])
              .advance_watermark_to(1100)
              .advance_processing_time(1500)
              .add_elements([(("a", 3), 1050)]))
    env = env_factory(parallelism=2)
    got = list(env.from_source(stream, WatermarkStrategy.no_watermarks(), "test")
               .key_by(lambda v: v[0]).process(Timers()).execute_and_collect())
    MIN = -2 ** 63
    assert sorted(got) == sorted([
        ("element", ("a", 1), 1000, MIN, 0),
        ("element", ("b", 2), 2000, MIN, 0),
        ("timer", "a", 1100, "EVENT_TIME", 1100, 0),             # the watermark step
        ("timer", "a", 1000, "PROCESSING_TIME", 1100, 1500),     # the clock step
        ("timer", "b", 1000, "PROCESSING_TIME", 1100, 1500),
        ("element", ("a", 3), 1050, 1100, 1500),
        ("timer", "a", 1150, "EVENT_TIME", MAX, 1500),           # end of input
        ("timer", "b", 2100, "EVENT_TIME", MAX, 1500),
    ])  # the processing-time timer at 2500 is still pending when the input ends


def test_the_watermark_never_goes_back(env_factory):
    stream = TestStream().advance_watermark_to(500).advance_watermark_to(100) \
        .add_elements([("x", 0)])

    class SeeWatermark(KeyedProcessFunction):
        def process_element(self, value, ctx):
            yield ctx.timer_service().current_watermark()

    env = env_factory(parallelism=1)
    assert list(env.from_source(stream, WatermarkStrategy.no_watermarks(), "test")
                .key_by(lambda v: v).process(SeeWatermark()).execute_and_collect()) == [500]
