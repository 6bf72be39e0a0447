"""The async wait operator on its own: one chunk in, its outputs out, with the timestamps,
orders, concurrency, timeouts and retries of PyFlink 2.3.0's async I/O.

Expected values that a job would show were observed on PyFlink 2.3.0 (same functions,
parallelism 1); see tests/api/datastream/test_async_data_stream.py for the jobs.
"""
import asyncio
import time

import pytest

from api.common import Row
from api.datastream import AsyncFunction, AsyncRetryStrategy, async_retry_predicates
from api.datastream.async_retry_strategies import NO_RETRY_STRATEGY
from engine.errors import OperatorError
from engine.runtime.operators.async_io import AsyncWaitOperator
from engine.runtime.task import OperatorTask

NAME = "async wait operator"


def open_operator(function, timeout_ms=5000, capacity=100, strategy=NO_RETRY_STRATEGY,
                  ordered=True, timed=True, keyed_record=None):
    """An opened operator (subtask 0 of 1) whose output chunks land in ``op.collected``."""
    op = AsyncWaitOperator(function, timeout_ms, capacity, strategy, ordered, keyed_record)
    op.setup(NAME, OperatorTask(None, 0, 1, 128, {}, timed=timed))
    op.collected = []
    op.output = op.collected.extend
    op.open()
    return op


def run(function, elements, **kwargs) -> list:
    op = open_operator(function, **kwargs)
    try:
        op.process_chunk(elements)
    finally:
        op.close()
    return op.collected


class Delay(AsyncFunction[int, str]):
    """Later inputs finish sooner; multiples of 3 give two outputs."""

    async def async_invoke(self, value):
        await asyncio.sleep((10 - value % 10) * 0.03)
        return [f"v{value}", f"w{value}"] if value % 3 == 0 else [f"v{value}"]


class FailFirst(AsyncFunction):
    """Raises on the first ``k`` attempts per value, then returns (value, attempt)."""

    def __init__(self, k, error=ValueError):
        self.k, self.error, self.calls = k, error, {}

    async def async_invoke(self, value):
        n = self.calls[value] = self.calls.get(value, 0) + 1
        if n <= self.k:
            raise self.error(f"boom {value} attempt {n}")
        return [(value, n)]


def test_ordered_keeps_input_order_and_timestamps():
    out = run(Delay(), [(t * 1000, t) for t in range(6)])
    assert out == [(0, "v0"), (0, "w0"), (1000, "v1"), (2000, "v2"), (3000, "v3"),
                   (3000, "w3"), (4000, "v4"), (5000, "v5")]


def test_unordered_emits_in_completion_order_with_input_timestamps():
    class Countdown(AsyncFunction):
        """Input v finishes after (3 - v) * 100 ms."""

        async def async_invoke(self, value):
            await asyncio.sleep((3 - value) * 0.1)
            return [value, -value]

    out = run(Countdown(), [(t * 1000, t) for t in range(4)], ordered=False)
    assert out == [(3000, 3), (3000, -3), (2000, 2), (2000, -2), (1000, 1), (1000, -1),
                   (0, 0), (0, 0)]


def test_untimed_job_emits_plain_values():
    assert run(Delay(), [4, 3], timed=False) == ["v4", "v3", "w3"]


@pytest.mark.parametrize("ordered", [True, False])
def test_at_most_capacity_calls_in_flight(ordered):
    class InFlight(AsyncFunction):
        now = peak = 0

        async def async_invoke(self, value):
            InFlight.now += 1
            InFlight.peak = max(InFlight.peak, InFlight.now)
            await asyncio.sleep(0.01 * (value % 4))
            InFlight.now -= 1
            return [value]

    out = run(InFlight(), list(range(30)), capacity=3, ordered=ordered, timed=False)
    assert sorted(out) == list(range(30))
    assert InFlight.peak == 3


def test_capacity_bounds_the_time_of_slow_calls():
    """40 calls of 50 ms, 10 at a time, take about 4 * 50 ms, not 40 * 50 ms."""
    class Slow(AsyncFunction):
        async def async_invoke(self, value):
            await asyncio.sleep(0.05)
            return [value]

    start = time.monotonic()
    assert run(Slow(), list(range(40)), capacity=10, timed=False) == list(range(40))
    assert time.monotonic() - start < 1.0


def test_timeout_emits_what_timeout_returns_and_cancels_the_late_call():
    finished = []

    class Sleepy(AsyncFunction):
        async def async_invoke(self, value):
            await asyncio.sleep(2 if value % 2 else 0)
            finished.append(value)
            return [str(value)]

        def timeout(self, value):
            return ["timeout-" + str(value)]

    out = run(Sleepy(), [(7, v) for v in range(4)], timeout_ms=300)
    assert out == [(7, "0"), (7, "timeout-1"), (7, "2"), (7, "timeout-3")]
    assert finished == [0, 2]


def test_default_timeout_fails_naming_operator_and_record():
    class Sleepy(AsyncFunction):
        async def async_invoke(self, value):
            await asyncio.sleep(1 if value == 3 else 0)
            return [value]

    with pytest.raises(OperatorError) as info:
        run(Sleepy(), [(None, v) for v in range(6)], timeout_ms=200)
    assert info.value.operator == NAME
    assert info.value.record_repr == "record 3"
    assert info.value.cause == "TimeoutError: Async function call has timed out for input: 3"


def test_timeout_zero_means_no_timeout():
    class Sleepy(AsyncFunction):
        async def async_invoke(self, value):
            await asyncio.sleep(0.05)
            return [value]

    assert run(Sleepy(), [1, 2], timeout_ms=0, timed=False) == [1, 2]


def test_a_failing_timeout_fails_the_record():
    class NoFallback(AsyncFunction):
        async def async_invoke(self, value):
            await asyncio.sleep(1)

        def timeout(self, value):
            raise KeyError("no fallback")

    with pytest.raises(OperatorError) as info:
        run(NoFallback(), [5], timeout_ms=100, timed=False)
    assert (info.value.record_repr, info.value.cause) == ("record 5", "KeyError: 'no fallback'")


def fixed(max_attempts, result_predicate=None, exception_predicate=None, backoff=10):
    return AsyncRetryStrategy.fixed_delay(max_attempts, backoff, result_predicate,
                                          exception_predicate)


@pytest.mark.parametrize("k, max_attempts", [(2, 2), (2, 3)])
def test_retries_on_matching_exceptions(k, max_attempts):
    """max_attempts n allows n retries (PyFlink: k=2 failures with n=2 succeed on try 3)."""
    strategy = fixed(max_attempts,
                     exception_predicate=async_retry_predicates.has_exception_predicate)
    out = run(FailFirst(k), list(range(6)), strategy=strategy, timed=False)
    assert out == [(v, 3) for v in range(6)]


def test_exponential_backoff_retries():
    strategy = AsyncRetryStrategy.exponential_backoff(
        3, 10, 100, 2.0, None, async_retry_predicates.has_exception_predicate)
    assert run(FailFirst(3), [0, 1], strategy=strategy, timed=False) == [(0, 4), (1, 4)]


def test_exhausted_retries_fail_with_the_last_error():
    strategy = fixed(2, exception_predicate=async_retry_predicates.has_exception_predicate)
    with pytest.raises(OperatorError) as info:
        run(FailFirst(3), [0], strategy=strategy, timed=False)
    assert (info.value.record_repr, info.value.cause) == ("record 0",
                                                          "ValueError: boom 0 attempt 3")


def test_only_errors_the_predicate_accepts_are_retried():
    def only_key_errors(error):
        return async_retry_predicates.exception_type_predicate(error, KeyError)

    with pytest.raises(OperatorError) as info:
        run(FailFirst(1), [0], strategy=fixed(5, exception_predicate=only_key_errors),
            timed=False)
    assert info.value.cause == "ValueError: boom 0 attempt 1"
    function = FailFirst(1, error=KeyError)
    out = run(function, [0], strategy=fixed(5, exception_predicate=only_key_errors),
              timed=False)
    assert out == [(0, 2)]


def test_retries_on_result_and_emits_the_last_result_when_retries_run_out():
    class EmptyFirst(AsyncFunction):
        def __init__(self, k):
            self.k, self.calls = k, {}

        async def async_invoke(self, value):
            n = self.calls[value] = self.calls.get(value, 0) + 1
            return [] if n <= self.k else [(value, n)]

    empty = async_retry_predicates.empty_result_predicate
    assert run(EmptyFirst(2), [0, 1], strategy=fixed(3, result_predicate=empty),
               timed=False) == [(0, 3), (1, 3)]
    assert run(EmptyFirst(5), [0, 1], strategy=fixed(2, result_predicate=empty),
               timed=False) == []


def test_timeout_covers_all_attempts():
    """Attempts at 0, 300 and 600 ms keep failing; at 700 ms timeout() answers."""
    class AlwaysFails(AsyncFunction):
        def __init__(self):
            self.calls = {}

        async def async_invoke(self, value):
            self.calls[value] = self.calls.get(value, 0) + 1
            raise ValueError("down")

        def timeout(self, value):
            return [("timeout", value, self.calls[value])]

    strategy = fixed(10, exception_predicate=async_retry_predicates.has_exception_predicate,
                     backoff=300)
    out = run(AlwaysFails(), [1, 2], strategy=strategy, timeout_ms=700, timed=False)
    assert out == [("timeout", 1, 3), ("timeout", 2, 3)]


def test_a_failure_stops_the_other_calls_of_the_chunk():
    class OneBad(AsyncFunction):
        async def async_invoke(self, value):
            if value == 0:
                raise ValueError("bad")
            await asyncio.sleep(10)
            return [value]

    start = time.monotonic()
    with pytest.raises(OperatorError) as info:
        run(OneBad(), list(range(5)), timed=False)
    assert info.value.record_repr == "record 0"
    assert time.monotonic() - start < 5


@pytest.mark.parametrize("result, outputs, error", [
    ("ab", ["a", "b"], None),         # any iterable is a list of outputs, as in PyFlink
    ((1, 2), [1, 2], None),
    (None, None, "TypeError: Bad.async_invoke (or timeout) must return a list of results, "
                 "got None"),
    (7, None, "TypeError: Bad.async_invoke (or timeout) must return a list of results, "
              "got int"),
])
def test_result_must_be_iterable(result, outputs, error):
    class Bad(AsyncFunction):
        async def async_invoke(self, value):
            return result

    if error is None:
        assert run(Bad(), [1], timed=False) == outputs
    else:
        with pytest.raises(OperatorError) as info:
            run(Bad(), [1], timed=False)
        assert info.value.cause == error


@pytest.mark.parametrize("timed", [True, False])
def test_keyed_input_records_carry_their_key(timed):
    class Echo(AsyncFunction):
        async def async_invoke(self, value):
            return [repr(value)]

    elements = [(1000, ("a", 1)), (2000, ("b", 2))] if timed else [("a", 1), ("b", 2)]
    out = run(Echo(), elements, timed=timed, keyed_record=lambda v: Row(f0=v[0], f1=v))
    values = ["Row(f0='a', f1=('a', 1))", "Row(f0='b', f1=('b', 2))"]
    assert out == (list(zip([1000, 2000], values)) if timed else values)


def test_event_loop_lives_from_open_to_close_and_serves_every_chunk():
    class LoopId(AsyncFunction):
        async def async_invoke(self, value):
            return [id(asyncio.get_running_loop())]

    op = open_operator(LoopId(), timed=False)
    op.process_chunk([1])
    op.process_chunk([2])
    loop = op._loop
    assert op.collected == [id(loop), id(loop)]
    op.close()
    assert loop.is_closed()


def test_runs_where_the_calling_thread_already_runs_an_event_loop():
    """As in a notebook driving the in-process executor: results and errors still arrive."""
    op = open_operator(FailFirst(1, error=KeyError), timed=False)

    async def caller():
        op.process_chunk([])
        with pytest.raises(OperatorError, match="boom 1 attempt 1"):
            op.process_chunk([1])
        op.process_chunk([1])

    asyncio.run(caller())
    op.close()
    assert op.collected == [(1, 2)]
