"""Async I/O: one user coroutine (``async_invoke``) per record, many awaited at once.

Each operator instance owns an asyncio event loop. A chunk's records are started
``capacity`` at a time, and ``process_chunk`` returns only when every one of them has
finished: the chunk (at most a micro-batch) is the synchronisation point, so nothing is
in flight when a batch commits. Outputs keep their input's timestamp and leave in input
order (ordered) or in completion order (unordered).

Per record, as in PyFlink: attempts are retried while the retry strategy's predicates
ask for it and ``can_retry(attempt)`` allows; ``timeout`` bounds all attempts together,
and when it passes the pending attempt is cancelled and ``function.timeout(value)``
gives the result instead. A record that finally fails fails the job.
"""
import asyncio
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Optional

from engine.errors import OperatorError
from engine.runtime.operators.base import UdfOperator


def _never(_):
    return False


def _loop_running_here() -> bool:
    try:
        asyncio.get_running_loop()
        return True
    except RuntimeError:
        return False


class AsyncWaitOperator(UdfOperator):
    """Runs an AsyncFunction.

    ``timeout_ms`` <= 0 means no timeout. ``keyed_record(value)``, when given, builds the
    record the function sees on a keyed stream (PyFlink gives it the key too).
    """

    def __init__(self, function, timeout_ms: int, capacity: int, retry_strategy,
                 ordered: bool, keyed_record: Optional[Callable] = None):
        super().__init__(function)
        self.timeout_s = timeout_ms / 1000 if timeout_ms > 0 else None
        self.capacity = capacity
        self.retry_strategy = retry_strategy
        self.ordered = ordered
        self.keyed_record = keyed_record
        self._loop = None

    def open(self):
        super().open()
        predicate = self.retry_strategy.get_retry_predicate()
        self._retry_on_result = predicate.result_predicate() or _never
        self._retry_on_error = predicate.exception_predicate() or _never
        self._loop = asyncio.new_event_loop()

    def close(self):
        if self._loop is not None:
            self._loop.close()
            self._loop = None
        super().close()

    # --- one chunk ------------------------------------------------------------------
    def process_chunk(self, records):
        inputs = list(self._inputs(records))
        finished = []  # (input index, timestamp, results), in completion order
        self._run_to_end(self._run(inputs, finished))
        if self.ordered:
            finished.sort(key=lambda item: item[0])
        out = []
        emit = self.cursor.collector(out)
        for _, self.cursor.timestamp, results in finished:
            for result in results:
                emit(result)
        self.output(out)

    def _run_to_end(self, coroutine) -> None:
        if not _loop_running_here():
            self._loop.run_until_complete(coroutine)
            return
        # This thread already runs an event loop (a notebook, an async program using the
        # in-process executor): ours must run in another thread.
        with ThreadPoolExecutor(1) as thread:
            thread.submit(self._loop.run_until_complete, coroutine).result()

    def _inputs(self, records):
        """Yields each input's (value, timestamp); the timestamp is None in an untimed job."""
        make, cursor = self.keyed_record, self.cursor
        for value in cursor.records(records):
            yield (value if make is None else make(value)), cursor.timestamp

    async def _run(self, inputs: list, finished: list):
        """Completes every input with at most ``capacity`` of them in flight."""
        pending = iter(enumerate(inputs))  # shared: each worker takes the next input

        async def worker():
            for index, (value, timestamp) in pending:
                finished.append((index, timestamp, await self._complete(value)))

        workers = [asyncio.ensure_future(worker())
                   for _ in range(min(self.capacity, len(inputs)))]
        try:
            await asyncio.gather(*workers)
        finally:  # after a failure, stop the others before the error leaves the chunk
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)

    async def _complete(self, value) -> list:
        """The outputs of one record: its attempts within the timeout, else ``timeout()``."""
        try:
            attempts = asyncio.ensure_future(self._attempts(value))
            done, _ = await asyncio.wait({attempts}, timeout=self.timeout_s)
            if done:
                result = attempts.result()
            else:
                attempts.cancel()
                await asyncio.gather(attempts, return_exceptions=True)  # leave none pending
                result = self.function.timeout(value)
            return self._checked(result)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            raise OperatorError.wrap(self.name, value, e) from None

    async def _attempts(self, value):
        """Calls ``async_invoke`` until the retry strategy is satisfied or gives up."""
        strategy, invoke = self.retry_strategy, self.function.async_invoke
        attempt = 1
        while True:
            try:
                result, error = await invoke(value), None
            except Exception as e:
                result, error = None, e
            wants_retry = (self._retry_on_error(error) if error is not None
                           else result is not None and self._retry_on_result(result))
            if not (wants_retry and strategy.can_retry(attempt)):
                break
            await asyncio.sleep(strategy.get_backoff_time_millis(attempt) / 1000)
            attempt += 1
        if error is not None:
            raise error
        return result

    def _checked(self, result) -> list:
        if result is None or not isinstance(result, Iterable):
            raise TypeError(
                f"{type(self.function).__name__}.async_invoke (or timeout) must return a list "
                f"of results, got {'None' if result is None else type(result).__name__}")
        return list(result)
