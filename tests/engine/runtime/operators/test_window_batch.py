"""The batch-at-a-time window operator gives exactly the general window operator's output
(same records, same order), whatever the assigner, lateness, watermarks, processing
time, parallelism and window function."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from api.common import Time, Types, WatermarkStrategy
from api.datastream import AggregateFunction, OutputTag, ProcessWindowFunction, WindowFunction
from api.datastream.state import ValueStateDescriptor
from api.datastream.window import (SlidingEventTimeWindows, SlidingProcessingTimeWindows,
                                   TumblingEventTimeWindows, TumblingProcessingTimeWindows)
from api.testing import TestStream
from engine.errors import JobExecutionException
from engine.runtime.operators import window_batch
from engine.runtime.operators.window import WindowFunctionCall, WindowOperator
from engine.runtime.operators.window_batch import BatchWindowOperator, window_operator
from engine.time.triggers import CountTrigger, EventTimeTrigger, ProcessingTimeTrigger
from tests.conftest import make_env

CLEARED = ValueStateDescriptor("cleared", Types.INT())
ASSIGNERS = {
    "tumbling": lambda: TumblingEventTimeWindows.of(Time.seconds(2)),
    "tumbling-offset": lambda: TumblingEventTimeWindows.of(Time.seconds(3), Time.seconds(-1)),
    "sliding": lambda: SlidingEventTimeWindows.of(Time.seconds(3), Time.seconds(1)),
    "sliding-gaps": lambda: SlidingEventTimeWindows.of(Time.seconds(1), Time.seconds(2)),
    "processing-tumbling": lambda: TumblingProcessingTimeWindows.of(Time.seconds(2)),
    "processing-sliding": lambda: SlidingProcessingTimeWindows.of(Time.seconds(3),
                                                                  Time.seconds(1)),
}


class OrderedAggregate(AggregateFunction):
    """An accumulator that remembers the order its values came in."""

    def create_accumulator(self):
        return ()

    def add(self, value, accumulator):
        return accumulator + (value[1],)

    def get_result(self, accumulator):
        return accumulator

    def merge(self, a, b):
        return a + b


class WithWindow(ProcessWindowFunction):
    """Shows the window, the watermark and how many windows of the key were cleared
    before this one fired (so the order of ``process`` and ``clear`` calls shows)."""

    def process(self, key, context, elements):
        cleared = context.global_state().get_state(CLEARED).value() or 0
        window = context.window()
        for element in elements:
            yield key, window.start, window.end, context.current_watermark(), cleared, element

    def clear(self, context):
        cleared = context.global_state().get_state(CLEARED)
        cleared.update((cleared.value() or 0) + 1)


class Applied(WindowFunction):
    def apply(self, key, window, inputs):
        return [(key, window.start, list(inputs))]


def non_associative(a, b):
    """A float fold whose result depends on the order and grouping of its inputs."""
    return a[0], a[1] * 0.5 + b[1] * 1.5 + 0.1


FUNCTIONS = {
    "reduce": lambda w: w.reduce(non_associative),
    "reduce-process": lambda w: w.reduce(non_associative, WithWindow()),
    "aggregate": lambda w: w.aggregate(OrderedAggregate()),
    "aggregate-apply": lambda w: w.aggregate(OrderedAggregate(), Applied()),
}

steps = st.lists(st.one_of(
    st.tuples(st.just("elements"),
              st.lists(st.tuples(st.sampled_from("abc"), st.floats(-5, 5, width=16),
                                 st.integers(0, 12_000)), max_size=8)),
    st.tuples(st.just("watermark"), st.one_of(
        st.integers(0, 12_000),
        st.integers(0, 24).map(lambda n: n * 500 - 1))),  # a window's end or cleanup time
    st.tuples(st.just("processing_time"), st.integers(0, 2500))), max_size=12)


def script(drawn):
    stream = TestStream()
    for kind, argument in drawn:
        if kind == "elements":
            stream.add_elements([((key, value), ts) for key, value, ts in argument])
        elif kind == "watermark":
            stream.advance_watermark_to(argument)
        else:
            stream.advance_processing_time(argument)
    return stream


def run(drawn, assigner, function, lateness, parallelism):
    late = OutputTag("late")
    env = make_env("local", parallelism=parallelism)
    windowed = (env.from_source(script(drawn), WatermarkStrategy.no_watermarks(), "script")
                .key_by(lambda r: r[0]).window(ASSIGNERS[assigner]()))
    if not assigner.startswith("processing"):
        windowed = windowed.allowed_lateness(lateness)
    main = FUNCTIONS[function](windowed.side_output_late_data(late))
    late_records = main.get_side_output(late).execute_and_collect()
    return list(main.execute_and_collect()), list(late_records)


@settings(max_examples=120, deadline=None)
@given(drawn=steps, assigner=st.sampled_from(sorted(ASSIGNERS)),
       function=st.sampled_from(sorted(FUNCTIONS)), lateness=st.sampled_from([0, 1500]),
       parallelism=st.sampled_from([1, 2, 3]))
def test_batch_window_operator_gives_the_general_operators_output(
        drawn, assigner, function, lateness, parallelism):
    batched = run(drawn, assigner, function, lateness, parallelism)
    with pytest.MonkeyPatch.context() as general_only:
        general_only.setattr(window_batch, "_DEFAULT_TRIGGERS", {})
        general = run(drawn, assigner, function, lateness, parallelism)
    assert batched == general


def test_only_the_default_triggers_with_incremental_contents_go_batch_at_a_time():
    tumbling = TumblingEventTimeWindows.of(Time.seconds(1))
    processing = TumblingProcessingTimeWindows.of(Time.seconds(1))
    reduce = ("reducing", lambda a, b: a, True)

    def operator(assigner, trigger, contents=reduce):
        return type(window_operator(assigner, trigger, contents,
                                    WindowFunctionCall(None, "none", single=True)))

    assert operator(tumbling, EventTimeTrigger()) is BatchWindowOperator
    assert operator(processing, ProcessingTimeTrigger()) is BatchWindowOperator
    assert operator(tumbling, ProcessingTimeTrigger()) is WindowOperator
    assert operator(tumbling, CountTrigger.of(2)) is WindowOperator
    assert operator(tumbling, EventTimeTrigger(), ("list", None, True)) is WindowOperator


def test_a_failing_reduce_names_the_window_operator_and_the_record():
    def failing(a, b):
        if b[1] == 3:
            raise ZeroDivisionError("no threes")
        return a[0], a[1] + b[1]

    stream = TestStream().add_elements([(("k", 1), 100), (("k", 3), 200)])
    env = make_env("local")
    env.from_source(stream, WatermarkStrategy.no_watermarks(), "script") \
        .key_by(lambda r: r[0]).window(TumblingEventTimeWindows.of(Time.seconds(1))) \
        .reduce(failing).print()
    with pytest.raises(JobExecutionException,
                       match=r"Operator 'Window\(Reduce\)' failed on record \('k', 3\)"
                             r".*ZeroDivisionError: no threes"):
        env.execute()


def test_an_element_without_a_timestamp_is_refused_as_on_the_general_path():
    env = make_env("local")
    env.from_collection([("k", 1)]).key_by(lambda r: r[0]) \
        .window(TumblingEventTimeWindows.of(Time.seconds(1))).reduce(non_associative).print()
    with pytest.raises(JobExecutionException,
                       match=r"Window\(Reduce\)' failed on record \('k', 1\).*no timestamp"):
        env.execute()
