"""Ready-made retry predicates for async I/O, as in
``pyflink.datastream.async_retry_predicates``: pass them to
``AsyncRetryStrategy.fixed_delay`` or ``exponential_backoff``, e.g.
``functools.partial(exception_type_predicate, expected_error_type=TimeoutError)``.
"""


def empty_result_predicate(result: list) -> bool:
    """Retry when an attempt returned no result (None or an empty list)."""
    return result is None or len(result) == 0


def has_exception_predicate(error) -> bool:
    """Retry on any exception."""
    return error is not None


def exception_type_predicate(error, expected_error_type) -> bool:
    """Retry on exceptions of ``expected_error_type``."""
    return isinstance(error, expected_error_type)
