"""AsyncDataStream, as in ``pyflink.datastream.async_data_stream``: applies an
AsyncFunction to a stream with many calls in flight at once.

Example (a slow model endpoint, 100 calls at a time, 10 s per element)::

    AsyncDataStream.unordered_wait(ds, CallModel(), Time.seconds(10), 100, Types.STRING())

On a KeyedStream the function receives ``Row(f0=key, f1=element)``, as PyFlink gives it.
Async functions have no keyed state (``get_state`` fails in ``open``), as in PyFlink.
"""
import inspect
from functools import partial

from engine.runtime.operators.async_io import AsyncWaitOperator

from api.common import Row, Time, TypeInformation
from . import async_retry_strategies
from .data_stream import DataStream, KeyedStream
from .functions import AsyncFunction, AsyncFunctionDescriptor, AsyncRetryStrategy

OPERATOR_NAME = "async wait operator"  # PyFlink's name for it


class AsyncDataStream(object):
    """Applies an AsyncFunction to a DataStream: ordered or unordered, with or without
    retries."""

    @staticmethod
    def unordered_wait(data_stream: DataStream, async_function: AsyncFunction, timeout: Time,
                       capacity: int = 100, output_type: TypeInformation = None) -> DataStream:
        """Calls ``async_function`` for each element, at most ``capacity`` calls in flight;
        outputs leave as their calls finish. A call still running after ``timeout`` (0: no
        limit) is cancelled and answered by ``async_function.timeout(value)``."""
        return _async_wait(data_stream, async_function, timeout,
                           async_retry_strategies.NO_RETRY_STRATEGY, capacity, output_type,
                           AsyncFunctionDescriptor.OutputMode.UNORDERED)

    @staticmethod
    def unordered_wait_with_retry(data_stream: DataStream, async_function: AsyncFunction,
                                  timeout: Time, async_retry_strategy: AsyncRetryStrategy,
                                  capacity: int = 100,
                                  output_type: TypeInformation = None) -> DataStream:
        """``unordered_wait`` retrying calls as ``async_retry_strategy`` says; ``timeout``
        covers all attempts of one element."""
        return _async_wait(data_stream, async_function, timeout, async_retry_strategy, capacity,
                           output_type, AsyncFunctionDescriptor.OutputMode.UNORDERED)

    @staticmethod
    def ordered_wait(data_stream: DataStream, async_function: AsyncFunction, timeout: Time,
                     capacity: int = 100, output_type: TypeInformation = None) -> DataStream:
        """Like ``unordered_wait``, but outputs leave in the order of their inputs."""
        return _async_wait(data_stream, async_function, timeout,
                           async_retry_strategies.NO_RETRY_STRATEGY, capacity, output_type,
                           AsyncFunctionDescriptor.OutputMode.ORDERED)

    @staticmethod
    def ordered_wait_with_retry(data_stream: DataStream, async_function: AsyncFunction,
                                timeout: Time, async_retry_strategy: AsyncRetryStrategy,
                                capacity: int = 100,
                                output_type: TypeInformation = None) -> DataStream:
        """``ordered_wait`` retrying calls as ``async_retry_strategy`` says; ``timeout``
        covers all attempts of one element."""
        return _async_wait(data_stream, async_function, timeout, async_retry_strategy, capacity,
                           output_type, AsyncFunctionDescriptor.OutputMode.ORDERED)


def _async_wait(data_stream: DataStream, async_function: AsyncFunction, timeout: Time,
                async_retry_strategy: AsyncRetryStrategy, capacity: int,
                output_type: TypeInformation,
                output_mode: AsyncFunctionDescriptor.OutputMode) -> DataStream:
    """The stream of the async wait operator that the four ``AsyncDataStream`` methods add."""
    descriptor = AsyncFunctionDescriptor(async_function, timeout, capacity,
                                         async_retry_strategy, output_mode)
    timeout_ms = _validated(descriptor)
    factory = partial(
        AsyncWaitOperator, async_function, timeout_ms, capacity, async_retry_strategy,
        output_mode == AsyncFunctionDescriptor.OutputMode.ORDERED,
        partial(_keyed_record, data_stream._key_selector)
        if isinstance(data_stream, KeyedStream) else None)
    return data_stream._operator(OPERATOR_NAME, factory, output_type)


def _keyed_record(key_selector, value) -> Row:
    return Row(f0=key_selector.get_key(value), f1=value)


def _validated(descriptor: AsyncFunctionDescriptor) -> int:
    """Checks what PyFlink checks (and the capacity); returns the timeout in ms."""
    function, strategy = descriptor.async_function, descriptor.async_retry_strategy
    if not inspect.iscoroutinefunction(getattr(function, "async_invoke", None)):
        raise TypeError(f"'async_invoke' of {type(function).__name__} must be a coroutine "
                        "function: declare it with 'async def'")
    capacity = descriptor.capacity
    if isinstance(capacity, bool) or not isinstance(capacity, int) or capacity <= 0:
        raise ValueError(f"capacity (the most async calls in flight) should be a positive "
                         f"integer, got {capacity!r}")
    if strategy is None:
        raise ValueError("async_retry_strategy is None: pass AsyncRetryStrategy.no_restart() "
                         "for no retries")
    timeout_ms = descriptor.timeout.to_milliseconds()
    if strategy is not async_retry_strategies.NO_RETRY_STRATEGY and timeout_ms <= 0:
        raise ValueError("async calls with retries need a timeout greater than zero, got "
                         f"{timeout_ms} ms")
    if strategy.get_retry_predicate() is None:
        raise ValueError(f"get_retry_predicate() of {type(strategy).__name__} returned None")
    return timeout_ms
