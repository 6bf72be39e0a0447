"""AsyncDataStream jobs, differential against PyFlink 2.3.0.

Every expected value was observed by running the same program on PyFlink 2.3.0 (the
oracle venv, parallelism 1 unless a test says otherwise). Where PyFlink's output order
depends on timing (unordered_wait) the tests compare sorted outputs, and check only the
part of the completion order that a wide timing margin decides.

Function classes are defined inside helpers so that cloudpickle ships them by value to
Spark workers.
"""
import asyncio
import inspect
import time
from typing import List

import pytest

from api.common import Row, Time, TimestampAssigner, Types, WatermarkStrategy
from api.datastream import (AsyncDataStream, AsyncFunction, AsyncRetryPredicate,
                            AsyncRetryStrategy, ProcessFunction, async_retry_predicates,
                            async_retry_strategies)
from api.datastream.functions import AsyncFunctionDescriptor
from api.datastream.state import ValueStateDescriptor
from engine.errors import JobExecutionException
from tests.conftest import make_env


def collect(stream) -> list:
    with stream.execute_and_collect() as results:
        return list(results)


def failure(stream) -> str:
    with pytest.raises(JobExecutionException) as info:
        collect(stream)
    return str(info.value)


def delay_function():
    class Delay(AsyncFunction[int, str]):
        """Later inputs finish sooner (30 ms apart); multiples of 3 give two outputs."""

        async def async_invoke(self, value: int) -> List[str]:
            await asyncio.sleep((10 - value % 10) * 0.03)
            return [f"v{value}", f"w{value}"] if value % 3 == 0 else [f"v{value}"]
    return Delay()


def fail_first_function(k, only=None):
    class FailFirst(AsyncFunction):
        """Raises on the first ``k`` attempts (of value ``only``, or of every value)."""

        def __init__(self):
            self.calls = {}

        async def async_invoke(self, value):
            n = self.calls[value] = self.calls.get(value, 0) + 1
            if n <= k and only in (None, value):
                raise ValueError(f"boom {value} attempt {n}")
            return [(value, n)]
    return FailFirst()


ORDERED_0_11 = ["v0", "w0", "v1", "v2", "v3", "w3", "v4", "v5", "v6", "w6", "v7", "v8", "v9",
                "w9", "v10", "v11"]


# --- outputs and order --------------------------------------------------------------

def test_ordered_wait_emits_in_input_order(env_factory):
    env = env_factory(micro_batch_size=5)  # order holds across micro-batches too
    ds = env.from_collection(list(range(12)), Types.INT())
    assert collect(AsyncDataStream.ordered_wait(ds, delay_function(), Time.seconds(5), 100,
                                                Types.STRING())) == ORDERED_0_11


def test_unordered_wait_emits_as_calls_finish(env_factory):
    ds = env_factory().from_collection(list(range(12)), Types.INT())
    out = collect(AsyncDataStream.unordered_wait(ds, delay_function(), Time.seconds(5), 100,
                                                 Types.STRING()))
    # PyFlink: v9 w9 v8 v7 v6 w6 v5 v4 v3 w3 v2 v1 v11 v0 w0 v10
    assert sorted(out) == sorted(ORDERED_0_11)
    assert out.index("v9") < out.index("v0")  # 30 ms against 300 ms


def test_capacity_one_keeps_input_order():
    ds = make_env("local").from_collection(list(range(12)), Types.INT())
    out = collect(AsyncDataStream.unordered_wait(ds, delay_function(), Time.seconds(5), 1))
    assert out == ORDERED_0_11


def test_parallelism_2():
    ds = make_env("local", parallelism=2).from_collection(list(range(12)), Types.INT())
    out = collect(AsyncDataStream.unordered_wait(ds, delay_function(), Time.seconds(5)))
    assert sorted(out) == sorted(ORDERED_0_11)


def test_any_iterable_result_is_a_list_of_outputs():
    def returning(result):
        class F(AsyncFunction):
            async def async_invoke(self, value):
                return result
        return F()

    ds = make_env("local").from_collection([1])
    assert collect(AsyncDataStream.ordered_wait(ds, returning("ab"), Time.seconds(5))) == \
        ["a", "b"]
    assert collect(AsyncDataStream.ordered_wait(ds, returning((1, 2)), Time.seconds(5))) == \
        [1, 2]


def test_outputs_keep_the_input_timestamps(env_factory):
    def functions():
        class ByValue(TimestampAssigner):
            def extract_timestamp(self, value, record_timestamp):
                return value * 1000

        class Slow(AsyncFunction):
            async def async_invoke(self, value):
                await asyncio.sleep(0.05 * (5 - value))
                return [value, value * 10]

        class ShowTimestamp(ProcessFunction):
            def process_element(self, value, ctx):
                yield value, ctx.timestamp()
        return ByValue(), Slow(), ShowTimestamp()

    by_value, slow, show = functions()
    ds = env_factory().from_collection([1, 2, 3, 4]).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(by_value))
    out = collect(AsyncDataStream.unordered_wait(ds, slow, Time.seconds(5)).process(show))
    # PyFlink: (4, 4000) (40, 4000) (3, 3000) (30, 3000) (2, 2000) (20, 2000) (1, 1000) ...
    assert sorted(out) == [(1, 1000), (2, 2000), (3, 3000), (4, 4000), (10, 1000),
                           (20, 2000), (30, 3000), (40, 4000)]


def test_keyed_stream_gives_rows_of_key_and_element(env_factory):
    def echo():
        class Echo(AsyncFunction):
            async def async_invoke(self, value):
                return [repr(value)]
        return Echo()

    ks = env_factory(parallelism=2).from_collection(
        [("a", 1), ("b", 2)], Types.TUPLE([Types.STRING(), Types.INT()])).key_by(lambda x: x[0])
    out = collect(AsyncDataStream.ordered_wait(ks, echo(), Time.seconds(5)))
    assert sorted(out) == ["Row(f0='a', f1=('a', 1))", "Row(f0='b', f1=('b', 2))"]


def test_keyed_timed_stream_keeps_timestamps():
    class ByField(TimestampAssigner):
        def extract_timestamp(self, value, record_timestamp):
            return value[1] * 1000

    class Echo(AsyncFunction):
        async def async_invoke(self, value: Row):
            await asyncio.sleep(0.05 * (5 - value.f1[1]))
            return [value.f0, value.f1[1]]

    class ShowTimestamp(ProcessFunction):
        def process_element(self, value, ctx):
            yield value, ctx.timestamp()

    ks = make_env("local").from_collection([("a", 1), ("b", 2), ("a", 3), ("c", 4)]) \
        .assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(ByField())) \
        .key_by(lambda x: x[0])
    out = collect(AsyncDataStream.unordered_wait(ks, Echo(), Time.seconds(5))
                  .process(ShowTimestamp()))
    # PyFlink: ('c', 4000) (4, 4000) ('a', 3000) (3, 3000) ('b', 2000) (2, 2000) ('a', 1000) ...
    assert sorted(out, key=repr) == sorted(
        [("c", 4000), (4, 4000), ("a", 3000), (3, 3000), ("b", 2000), (2, 2000),
         ("a", 1000), (1, 1000)], key=repr)


# --- concurrency --------------------------------------------------------------------

def test_calls_run_concurrently_up_to_capacity(env_factory):
    """40 calls of 50 ms with capacity 10 take about 4 * 50 ms (PyFlink: 0.26 s), not
    40 * 50 ms; measured inside the operator, where the calls run."""
    def span_function():
        class Span(AsyncFunction):
            async def async_invoke(self, value):
                start = time.monotonic()
                await asyncio.sleep(0.05)
                return [(start, time.monotonic())]
        return Span()

    ds = env_factory().from_collection(list(range(40)))
    out = collect(AsyncDataStream.unordered_wait(ds, span_function(), Time.seconds(5), 10))
    assert len(out) == 40
    span = max(end for _, end in out) - min(start for start, _ in out)
    assert 0.2 <= span < 1.0


def test_no_more_than_capacity_calls_in_flight(env_factory):
    def in_flight():
        class InFlight(AsyncFunction):
            def open(self, runtime_context):
                self.now = self.peak = 0

            async def async_invoke(self, value):
                self.now += 1
                self.peak = max(self.peak, self.now)
                await asyncio.sleep(0.02 * (value % 4))
                self.now -= 1
                return [self.peak]
        return InFlight()

    for wait in (AsyncDataStream.ordered_wait, AsyncDataStream.unordered_wait):
        ds = env_factory().from_collection(list(range(30)))
        assert max(collect(wait(ds, in_flight(), Time.seconds(5), 3))) == 3  # as PyFlink


# --- timeouts -----------------------------------------------------------------------

def test_timeout_calls_the_functions_timeout(env_factory):
    def sleepy():
        class Sleepy(AsyncFunction):
            async def async_invoke(self, value):
                await asyncio.sleep(2 if value % 2 else 0)
                return [str(value)]

            def timeout(self, value):
                return ["timeout-" + str(value)]
        return Sleepy()

    ds = env_factory().from_collection(list(range(6)), Types.INT())
    out = collect(AsyncDataStream.ordered_wait(ds, sleepy(), Time.milliseconds(300), 100))
    assert out == ["0", "timeout-1", "2", "timeout-3", "4", "timeout-5"]


def test_default_timeout_fails_the_job_naming_operator_and_record():
    class Sleepy(AsyncFunction):
        async def async_invoke(self, value):
            await asyncio.sleep(1 if value == 3 else 0)
            return [value]

    ds = make_env("local").from_collection(list(range(6)), Types.INT())
    message = failure(AsyncDataStream.ordered_wait(ds, Sleepy(), Time.milliseconds(200)))
    assert ("Operator 'async wait operator' failed on record 3: TimeoutError: Async function "
            "call has timed out for input: 3") in message


def test_zero_timeout_waits_as_long_as_it_takes():
    class Sleepy(AsyncFunction):
        async def async_invoke(self, value):
            await asyncio.sleep(0.2 if value == 3 else 0)
            return [value]

    ds = make_env("local").from_collection(list(range(6)), Types.INT())
    assert collect(AsyncDataStream.ordered_wait(ds, Sleepy(), Time.seconds(0))) == \
        list(range(6))


# --- retries ------------------------------------------------------------------------

def test_fixed_delay_retries_until_success(env_factory):
    strategy = AsyncRetryStrategy.fixed_delay(
        2, 10, None, async_retry_predicates.has_exception_predicate)
    ds = env_factory().from_collection(list(range(6)), Types.INT())
    out = collect(AsyncDataStream.ordered_wait_with_retry(
        ds, fail_first_function(2), Time.seconds(5), strategy))
    assert out == [(v, 3) for v in range(6)]


def test_retry_of_one_record_unordered():
    strategy = AsyncRetryStrategy.fixed_delay(
        2, 10, None, async_retry_predicates.has_exception_predicate)
    ds = make_env("local").from_collection(list(range(6)), Types.INT())
    out = collect(AsyncDataStream.unordered_wait_with_retry(
        ds, fail_first_function(2, only=3), Time.seconds(5), strategy))
    # PyFlink: [(0, 1), (1, 1), (2, 1), (4, 1), (5, 1), (3, 3)]
    assert sorted(out) == [(0, 1), (1, 1), (2, 1), (3, 3), (4, 1), (5, 1)]
    assert out[-1] == (3, 3)


def test_exponential_backoff_retries_until_success():
    strategy = AsyncRetryStrategy.exponential_backoff(
        3, 10, 100, 2.0, None, async_retry_predicates.has_exception_predicate)
    ds = make_env("local").from_collection(list(range(6)), Types.INT())
    out = collect(AsyncDataStream.ordered_wait_with_retry(
        ds, fail_first_function(3), Time.seconds(5), strategy))
    assert out == [(v, 4) for v in range(6)]


def test_retry_on_result_emits_the_last_result():
    def empty_first(k):
        class EmptyFirst(AsyncFunction):
            def __init__(self):
                self.calls = {}

            async def async_invoke(self, value):
                n = self.calls[value] = self.calls.get(value, 0) + 1
                return [] if n <= k else [(value, n)]
        return EmptyFirst()

    def run(k, max_attempts):
        ds = make_env("local").from_collection(list(range(6)), Types.INT())
        strategy = AsyncRetryStrategy.fixed_delay(
            max_attempts, 10, async_retry_predicates.empty_result_predicate, None)
        return collect(AsyncDataStream.unordered_wait_with_retry(
            ds, empty_first(k), Time.seconds(5), strategy))

    assert sorted(run(2, 3)) == [(v, 3) for v in range(6)]
    assert run(5, 2) == []  # retries ran out: the last (empty) result stands


def test_timeout_covers_every_attempt():
    class AlwaysFails(AsyncFunction):
        def __init__(self):
            self.calls = {}

        async def async_invoke(self, value):
            self.calls[value] = self.calls.get(value, 0) + 1
            raise ValueError("down")

        def timeout(self, value):
            return [("timeout", value, self.calls[value])]

    strategy = AsyncRetryStrategy.fixed_delay(
        10, 300, None, async_retry_predicates.has_exception_predicate)
    ds = make_env("local").from_collection([1, 2])
    out = collect(AsyncDataStream.ordered_wait_with_retry(
        ds, AlwaysFails(), Time.milliseconds(700), strategy))
    assert out == [("timeout", 1, 3), ("timeout", 2, 3)]


def test_final_failure_fails_the_job_naming_operator_and_record(env_factory):
    strategy = AsyncRetryStrategy.fixed_delay(
        2, 10, None, async_retry_predicates.has_exception_predicate)
    ds = env_factory().from_collection(list(range(6)), Types.INT())
    message = failure(AsyncDataStream.ordered_wait_with_retry(
        ds, fail_first_function(3, only=3), Time.seconds(5), strategy))
    # PyFlink: "... during handling input '3'", ValueError('boom 3 attempt 3')
    assert ("Operator 'async wait operator' failed on record 3: ValueError: boom 3 attempt 3"
            in message)
    assert "in async_invoke" in message  # the user's traceback


def test_failure_without_retry_strategy():
    ds = make_env("local").from_collection(list(range(6)), Types.INT())
    message = failure(AsyncDataStream.unordered_wait(ds, fail_first_function(1, only=4),
                                                     Time.seconds(5)))
    assert "failed on record 4: ValueError: boom 4 attempt 1" in message


@pytest.mark.parametrize("result, named", [(None, "None"), (7, "int")])
def test_result_that_is_not_a_list_fails_the_job(result, named):
    class Bad(AsyncFunction):
        async def async_invoke(self, value):
            return result if value == 2 else [value]

    ds = make_env("local").from_collection(list(range(4)))
    message = failure(AsyncDataStream.ordered_wait(ds, Bad(), Time.seconds(5)))
    assert (f"failed on record 2: TypeError: Bad.async_invoke (or timeout) must return a "
            f"list of results, got {named}") in message


def test_keyed_state_is_not_available():
    class WithState(AsyncFunction):
        def open(self, runtime_context):
            runtime_context.get_state(ValueStateDescriptor("s", Types.INT()))

        async def async_invoke(self, value):
            return [value]

    ks = make_env("local").from_collection([("a", 1)]).key_by(lambda x: x[0])
    message = failure(AsyncDataStream.ordered_wait(ks, WithState(), Time.seconds(5)))
    assert "failed on open()" in message and "Keyed state can only be used" in message


# --- building -----------------------------------------------------------------------

def echo_function():
    class Echo(AsyncFunction):
        async def async_invoke(self, value):
            return [value]
    return Echo()


def test_operator_name_and_output_type():
    ds = make_env("local").from_collection([1, 2])
    stream = AsyncDataStream.ordered_wait(ds, echo_function(), Time.seconds(1), 5, Types.LONG())
    assert stream.get_name() == "async wait operator"
    assert stream.get_type() == Types.LONG()
    assert AsyncDataStream.unordered_wait(ds, echo_function(), Time.seconds(1)).get_type() == \
        Types.PICKLED_BYTE_ARRAY()


def test_build_time_errors():
    class NotAsync(AsyncFunction):
        def async_invoke(self, value):
            return [value]

    ds = make_env("local").from_collection([1])
    retry = AsyncRetryStrategy.fixed_delay(
        3, 10, None, async_retry_predicates.has_exception_predicate)
    with pytest.raises(TypeError, match="'async_invoke' of NotAsync must be a coroutine"):
        AsyncDataStream.ordered_wait(ds, NotAsync(), Time.seconds(1))
    with pytest.raises(ValueError, match="need a timeout greater than zero"):
        AsyncDataStream.ordered_wait_with_retry(ds, echo_function(), Time.seconds(0), retry)
    with pytest.raises(ValueError, match="async_retry_strategy is None"):
        AsyncDataStream.unordered_wait_with_retry(ds, echo_function(), Time.seconds(1), None)
    for capacity in (0, -1, 2.5):
        with pytest.raises(ValueError, match="capacity"):
            AsyncDataStream.unordered_wait(ds, echo_function(), Time.seconds(1), capacity)


def test_retry_strategies_as_pyflink_defines_them():
    # values observed on PyFlink 2.3.0
    expo = AsyncRetryStrategy.exponential_backoff(5, 10, 50, 2.0, None, None)
    assert [expo.get_backoff_time_millis(i) for i in range(1, 7)] == [10, 20, 40, 50, 50, 50]
    assert [expo.can_retry(i) for i in range(1, 7)] == [True] * 5 + [False]
    expo = AsyncRetryStrategy.exponential_backoff(5, 10, 50, 1.5, None, None)
    assert [expo.get_backoff_time_millis(i) for i in range(1, 7)] == [10, 15, 22, 33, 49, 50]
    fixed = AsyncRetryStrategy.fixed_delay(2, 30, async_retry_predicates.empty_result_predicate,
                                           None)
    assert [fixed.can_retry(i) for i in (1, 2, 3)] == [True, True, False]
    assert fixed.get_backoff_time_millis(2) == 30
    assert fixed.get_retry_predicate().result_predicate()([]) is True
    assert fixed.get_retry_predicate().exception_predicate() is None
    none = AsyncRetryStrategy.no_restart()
    assert none is async_retry_strategies.NO_RETRY_STRATEGY
    assert (none.can_retry(1), none.get_backoff_time_millis(1)) == (False, -1)
    for args in [(0, 1, None, None), (1, 0, None, None)]:
        with pytest.raises(ValueError, match="greater than zero"):
            AsyncRetryStrategy.fixed_delay(*args)


def test_retry_predicates():
    assert async_retry_predicates.empty_result_predicate(None)
    assert async_retry_predicates.empty_result_predicate([])
    assert not async_retry_predicates.empty_result_predicate([0])
    assert async_retry_predicates.has_exception_predicate(ValueError())
    assert not async_retry_predicates.has_exception_predicate(None)
    assert async_retry_predicates.exception_type_predicate(KeyError(), LookupError)
    assert not async_retry_predicates.exception_type_predicate(ValueError(), KeyError)


def test_generic_classes_subscript_as_in_pyflink():
    class ToText(AsyncFunction[int, str]):
        async def async_invoke(self, value: int) -> List[str]:
            return [str(value)]

    def annotated(f: AsyncFunction[int, str], s: AsyncRetryStrategy[str],
                  p: AsyncRetryPredicate[str]) -> None:
        pass

    assert AsyncFunction.__parameters__[0].__name__ == "IN"
    assert [t.__name__ for t in AsyncRetryStrategy.__parameters__] == ["OUT"]
    for cls in (async_retry_strategies.RetryPredicate, async_retry_strategies.NoRetryStrategy,
                async_retry_strategies.FixedDelayRetryStrategy,
                async_retry_strategies.ExponentialBackoffDelayRetryStrategy):
        assert cls[str] is not None
    ds = make_env("local").from_collection([1, 2], Types.INT())
    assert collect(AsyncDataStream.ordered_wait(ds, ToText(), Time.seconds(1))) == ["1", "2"]


def test_names_and_parameters_as_in_pyflink():
    """Parameter names of PyFlink 2.3.0's async API (keyword calls must work)."""
    params = {
        AsyncDataStream.unordered_wait: "data_stream async_function timeout capacity "
                                        "output_type",
        AsyncDataStream.ordered_wait: "data_stream async_function timeout capacity output_type",
        AsyncDataStream.unordered_wait_with_retry: "data_stream async_function timeout "
                                                   "async_retry_strategy capacity output_type",
        AsyncDataStream.ordered_wait_with_retry: "data_stream async_function timeout "
                                                 "async_retry_strategy capacity output_type",
        AsyncRetryStrategy.fixed_delay: "max_attempts backoff_time_millis result_predicate "
                                        "exception_predicate",
        AsyncRetryStrategy.exponential_backoff: "max_attempts initial_delay max_retry_delay "
                                                "multiplier result_predicate "
                                                "exception_predicate",
        AsyncFunctionDescriptor: "async_function timeout capacity async_retry_strategy "
                                 "output_mode",
        async_retry_predicates.exception_type_predicate: "error expected_error_type",
    }
    for function, names in params.items():
        assert list(inspect.signature(function).parameters) == names.split(), function
    assert async_retry_strategies.__all__ == [
        "RetryPredicate", "NoRetryStrategy", "FixedDelayRetryStrategy",
        "ExponentialBackoffDelayRetryStrategy"]
    assert [m.name for m in AsyncFunctionDescriptor.OutputMode] == ["ORDERED", "UNORDERED"]
    assert inspect.iscoroutinefunction(AsyncFunction.async_invoke)
    assert AsyncDataStream.ordered_wait.__defaults__ == (100, None)
