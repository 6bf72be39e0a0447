"""KeyedProcessFunctionHarness: one KeyedProcessFunction driven by hand, without Spark."""
import pytest

from api.common import Duration, TimestampAssigner, Types, WatermarkStrategy
from api.datastream import KeyedProcessFunction, OutputTag, TimeDomain
from api.datastream.state import ListStateDescriptor, MapStateDescriptor, ValueStateDescriptor
from api.testing import KeyedProcessFunctionHarness, StreamRecord
from engine.errors import OperatorError
from tests.conftest import make_env

MIN, MAX = -2 ** 63, 2 ** 63 - 1
LATE = OutputTag("late", Types.STRING())
EXTRA = OutputTag("extra")


class CountWithTimeout(KeyedProcessFunction):
    """Counts per key; an event-time timer 100 ms after each record emits the count."""

    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))
        self.seen = runtime_context.get_list_state(ListStateDescriptor("seen", Types.INT()))
        self.opened = runtime_context.get_task_name_with_subtasks()
        self.closed = False

    def process_element(self, value, ctx):
        self.count.update((self.count.value() or 0) + 1)
        self.seen.add(value[1])
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 100)
        yield "in", value

    def on_timer(self, timestamp, ctx):
        yield "timeout", ctx.get_current_key(), timestamp, self.count.value()

    def close(self):
        self.closed = True


def test_elements_state_and_event_time_timers():
    function = CountWithTimeout()
    with KeyedProcessFunctionHarness(function, lambda r: r[0]) as h:
        assert function.opened == "KeyedProcess (1/1)#0"
        h.process_element(("a", 1), timestamp=1000)
        h.process_element(("b", 2), timestamp=1050)
        h.process_element(("a", 3), timestamp=1000)  # same timer again: kept once
        assert h.take_output() == [("in", ("a", 1)), ("in", ("b", 2)), ("in", ("a", 3))]
        assert h.pending_timers() == [(1100, "a"), (1150, "b")]
        assert h.pending_timers(TimeDomain.PROCESSING_TIME) == []

        h.advance_watermark(1099)
        assert h.output() == []
        h.advance_watermark(1100)
        assert h.take_output() == [("timeout", "a", 1100, 2)]
        h.advance_watermark(50)  # the watermark never goes back
        assert h.current_watermark == 1100
        h.advance_watermark(5000)
        assert h.take_output() == [("timeout", "b", 1150, 1)]
        assert h.pending_timers() == []

        assert h.state("count", "a") == 2
        assert h.state(ValueStateDescriptor("count", Types.LONG()), "b") == 1
        assert h.state("seen", "a") == [1, 3]
        assert h.state("count", "nobody") is None
        assert h.keyed_state() == {"a": {"count": 2, "seen": [1, 3]},
                                   "b": {"count": 1, "seen": [2]}}
        assert sorted(h.keys()) == ["a", "b"]
        assert not function.closed
    assert function.closed


class Chains(KeyedProcessFunction):
    """Timers at 300, 100 and 200 (200 deleted); firing 100 registers 150 and 50."""

    def process_element(self, value, ctx):
        timers = ctx.timer_service()
        for t in (300, 100, 200):
            timers.register_event_time_timer(t)
        timers.delete_event_time_timer(200)

    def on_timer(self, timestamp, ctx):
        yield ctx.get_current_key(), timestamp, ctx.timestamp(), \
            ctx.timer_service().current_watermark()
        if timestamp == 100:
            ctx.timer_service().register_event_time_timer(150)  # due: same pass
            ctx.timer_service().register_event_time_timer(50)   # already passed: same pass
            ctx.timer_service().register_event_time_timer(1000)  # not due


def test_timer_order_dedup_and_timers_registered_while_firing():
    h = KeyedProcessFunctionHarness(Chains(), lambda r: r)
    h.process_element("k")
    h.process_element("j")
    assert h.pending_timers() == [(100, "j"), (100, "k"), (300, "j"), (300, "k")]
    h.advance_watermark(400)
    # timestamp order, ties by key; 50 and 150 registered at 100 fire in the same pass
    assert h.take_output() == [("j", 100, 100, 400), ("j", 50, 50, 400),
                               ("k", 100, 100, 400), ("k", 50, 50, 400),
                               ("j", 150, 150, 400), ("k", 150, 150, 400),
                               ("j", 300, 300, 400), ("k", 300, 300, 400)]
    assert h.pending_timers() == [(1000, "j"), (1000, "k")]
    h.end_input()  # the watermark becomes MAX: the rest fire
    assert h.take_output() == [("j", 1000, 1000, MAX), ("k", 1000, 1000, MAX)]
    h.close()


class ProcessingTimeout(KeyedProcessFunction):
    def process_element(self, value, ctx):
        now = ctx.timer_service().current_processing_time()
        ctx.timer_service().register_processing_time_timer(now + 60_000)
        yield "element", value, now

    def on_timer(self, timestamp, ctx):
        yield ("timer", ctx.get_current_key(), timestamp, ctx.time_domain(),
               ctx.timer_service().current_processing_time())


def test_processing_time_timers():
    h = KeyedProcessFunctionHarness(ProcessingTimeout(), lambda v: v, processing_time=1_000)
    h.process_element("a", timestamp=5)
    h.set_processing_time(30_000)
    h.process_element("b")
    assert h.pending_timers(TimeDomain.PROCESSING_TIME) == [(61_000, "a"), (90_000, "b")]
    assert h.pending_timers(TimeDomain.EVENT_TIME) == []
    h.advance_watermark(MAX)  # event time does not fire processing-time timers
    h.set_processing_time(61_000)
    assert h.output(with_timestamps=True) == [
        StreamRecord(("element", "a", 1_000), 5), StreamRecord(("element", "b", 30_000), None),
        # processing-time timer output has no timestamp
        StreamRecord(("timer", "a", 61_000, TimeDomain.PROCESSING_TIME, 61_000), None)]
    h.take_output()
    h.set_processing_time(10)  # never goes back
    assert h.current_processing_time == 61_000
    h.end_input()  # STREAMING: pending processing-time timers are dropped at the end
    assert h.output() == []


def test_batch_mode_fires_processing_time_timers_at_end_of_input():
    h = KeyedProcessFunctionHarness(ProcessingTimeout(), lambda v: v, batch_mode=True)
    h.process_element("a")
    h.take_output()
    h.end_input()
    assert h.output() == [("timer", "a", 60_000, TimeDomain.PROCESSING_TIME, 0)]


class WithSideOutputs(KeyedProcessFunction):
    def process_element(self, value, ctx):
        yield LATE, "late-" + value[0]
        ctx.output(EXTRA, {"k": ctx.get_current_key()})
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1)
        yield value[0]

    def on_timer(self, timestamp, ctx):
        yield LATE, f"from-timer-{timestamp}"
        yield "main-timer"


def test_side_outputs_and_timestamps_of_timer_outputs():
    h = KeyedProcessFunctionHarness(WithSideOutputs(), lambda r: r[0],
                                    side_output_tags=[LATE, EXTRA])
    h.process_element(("a", 1), timestamp=1000)
    h.advance_watermark(1001)
    assert h.output(with_timestamps=True) == [("a", 1000), ("main-timer", 1001)]
    assert h.side_output(LATE, with_timestamps=True) == [("late-a", 1000),
                                                         ("from-timer-1001", 1001)]
    assert h.take_side_output("extra") == [{"k": "a"}]
    assert h.side_output(EXTRA) == []
    with pytest.raises(KeyError, match="side_output_tags"):
        h.side_output(OutputTag("other"))


def test_side_outputs_without_a_reader_are_dropped():
    h = KeyedProcessFunctionHarness(WithSideOutputs(), lambda r: r[0])
    h.process_element(("a", 1), timestamp=7)
    assert h.output() == ["a"]


class MapStateUser(KeyedProcessFunction):
    def open(self, runtime_context):
        self.m = runtime_context.get_map_state(
            MapStateDescriptor("m", Types.STRING(), Types.INT()))

    def process_element(self, value, ctx):
        if value[1] is None:
            self.m.clear()
        else:
            self.m.put(value[1], len(value[1]))
        yield 2 ** 40 + 0.5


def test_map_state_output_type_and_errors():
    h = KeyedProcessFunctionHarness(MapStateUser(), lambda r: r[0], output_type=Types.FLOAT())
    h.process_element((1, "xy"))
    h.process_element((1, "z"))
    h.process_element((2, "q"))
    h.process_element((2, None))
    assert h.keyed_state() == {1: {"m": {"xy": 2, "z": 1}}}
    copy = h.state("m", 1)
    copy["w"] = 0  # a copy: the state is unchanged
    assert h.state("m", 1) == {"xy": 2, "z": 1}
    assert h.output() == [Types.FLOAT().convert(2 ** 40 + 0.5)] * 4
    with pytest.raises(OperatorError, match="TypeError"):
        h.process_element((3, 5))  # len(5) fails: reported as in a job
    with pytest.raises(OperatorError, match="key selector"):
        h.process_element(None)
    with pytest.raises(ValueError, match="time domain"):
        h.pending_timers("wall clock")


# --- the harness and a real job agree ------------------------------------------------

DATA = [("a", 1000), ("b", 2000), ("a", 1500), ("a", 12000), ("b", 30000), ("c", 1999)]


class Sessionish(KeyedProcessFunction):
    """Sums per key and reports the sum 1 s after the last record of a key."""

    def open(self, runtime_context):
        self.total = runtime_context.get_state(ValueStateDescriptor("total", Types.LONG()))
        self.timer = runtime_context.get_state(ValueStateDescriptor("timer", Types.LONG()))

    def process_element(self, value, ctx):
        self.total.update((self.total.value() or 0) + value[1])
        if self.timer.value() is not None:
            ctx.timer_service().delete_event_time_timer(self.timer.value())
        self.timer.update(ctx.timestamp() + 1000)
        ctx.timer_service().register_event_time_timer(ctx.timestamp() + 1000)
        yield LATE, f"{value[0]}@{ctx.timer_service().current_watermark()}"
        yield "in", value, ctx.timestamp()

    def on_timer(self, timestamp, ctx):
        yield ("done", ctx.get_current_key(), timestamp, self.total.value(),
               ctx.timer_service().current_watermark())
        self.total.clear()
        self.timer.clear()


class SecondField(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class Stamp(KeyedProcessFunction):
    def process_element(self, value, ctx):
        yield value, ctx.timestamp()


def test_same_output_as_a_job():
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(Duration.of_millis(2000)) \
        .with_timestamp_assigner(SecondField())
    env = make_env("local", parallelism=1)
    main = (env.from_collection(DATA).assign_timestamps_and_watermarks(strategy)
            .key_by(lambda r: r[0]).process(Sessionish()))
    # the timestamps records carry downstream, as the harness reports them
    stamped = main.key_by(lambda r: 0).process(Stamp())
    side = main.get_side_output(LATE)
    job_main = list(stamped.execute_and_collect())
    job_side = list(side.execute_and_collect())

    h = KeyedProcessFunctionHarness(Sessionish(), lambda r: r[0], side_output_tags=[LATE])
    for value in DATA:  # one micro-batch: every record sees the initial watermark
        h.process_element(value, timestamp=value[1])
    h.end_input()
    assert [tuple(r) for r in h.output(with_timestamps=True)] == job_main
    assert h.side_output(LATE) == job_side
    assert h.keyed_state() == {}
    assert job_main[-1] == (("done", "b", 31000, 30000 + 2000, MAX), 31000)
