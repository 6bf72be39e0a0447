"""Ready-made retry strategies for async I/O, as in
``pyflink.datastream.async_retry_strategies``.

Attempts are counted from 1; a strategy with ``max_attempts`` n allows a retry after
attempts 1..n, so a call runs at most n + 1 times.
"""
from typing import Callable, Generic, List, Optional, TypeVar

from .functions import AsyncRetryPredicate, AsyncRetryStrategy

__all__ = [
    "RetryPredicate",
    "NoRetryStrategy",
    "FixedDelayRetryStrategy",
    "ExponentialBackoffDelayRetryStrategy",
]

OUT = TypeVar("OUT")


def _positive(name: str, value) -> None:
    if not value > 0:
        raise ValueError(f"{name} should be greater than zero, got {value!r}")


class RetryPredicate(AsyncRetryPredicate, Generic[OUT]):
    """A pair of optional predicates: on an attempt's result list and on its exception."""

    def __init__(self,
                 result_predicate: Optional[Callable[[List[OUT]], bool]],
                 exception_predicate: Optional[Callable[[Exception], bool]]):
        self._result_predicate = result_predicate
        self._exception_predicate = exception_predicate

    def result_predicate(self) -> Optional[Callable[[List[OUT]], bool]]:
        return self._result_predicate

    def exception_predicate(self) -> Optional[Callable[[Exception], bool]]:
        return self._exception_predicate


class NoRetryStrategy(AsyncRetryStrategy, Generic[OUT]):
    """Never retries."""

    def can_retry(self, current_attempts: int) -> bool:
        return False

    def get_backoff_time_millis(self, current_attempts: int) -> int:
        return -1

    def get_retry_predicate(self) -> AsyncRetryPredicate[OUT]:
        return RetryPredicate(None, None)


class FixedDelayRetryStrategy(AsyncRetryStrategy, Generic[OUT]):
    """Retries up to ``max_attempts`` times, waiting ``backoff_time_millis`` before each."""

    def __init__(self,
                 max_attempts: int,
                 backoff_time_millis: int,
                 result_predicate: Optional[Callable[[List[OUT]], bool]],
                 exception_predicate: Optional[Callable[[Exception], bool]]):
        _positive("max_attempts", max_attempts)
        _positive("backoff_time_millis", backoff_time_millis)
        self._max_attempts = max_attempts
        self._backoff_time_millis = backoff_time_millis
        self._predicate = RetryPredicate(result_predicate, exception_predicate)

    def can_retry(self, current_attempts: int) -> bool:
        return current_attempts <= self._max_attempts

    def get_backoff_time_millis(self, current_attempts: int) -> int:
        return self._backoff_time_millis

    def get_retry_predicate(self) -> AsyncRetryPredicate[OUT]:
        return self._predicate


class ExponentialBackoffDelayRetryStrategy(AsyncRetryStrategy, Generic[OUT]):
    """Retries up to ``max_attempts`` times; the first delay is ``initial_delay`` ms and
    each later one the previous times ``multiplier``, at most ``max_retry_delay`` ms.

    The previous delay is kept on the strategy object, which all records of the operator
    share (as in PyFlink).
    """

    def __init__(self,
                 max_attempts: int,
                 initial_delay: int,
                 max_retry_delay: int,
                 multiplier: float,
                 result_predicate: Optional[Callable[[List[OUT]], bool]],
                 exception_predicate: Optional[Callable[[Exception], bool]]):
        for name, value in (("max_attempts", max_attempts), ("initial_delay", initial_delay),
                            ("max_retry_delay", max_retry_delay), ("multiplier", multiplier)):
            _positive(name, value)
        self._max_attempts = max_attempts
        self._initial_delay = initial_delay
        self._max_retry_delay = max_retry_delay
        self._multiplier = multiplier
        self._last_retry_delay = initial_delay
        self._predicate = RetryPredicate(result_predicate, exception_predicate)

    def can_retry(self, current_attempts: int) -> bool:
        return current_attempts <= self._max_attempts

    def get_backoff_time_millis(self, current_attempts: int) -> int:
        if current_attempts <= 1:
            delay = self._initial_delay
        else:
            delay = int(min(self._last_retry_delay * self._multiplier, self._max_retry_delay))
        self._last_retry_delay = delay
        return delay

    def get_retry_predicate(self) -> AsyncRetryPredicate[OUT]:
        return self._predicate


NO_RETRY_STRATEGY: AsyncRetryStrategy = NoRetryStrategy()
