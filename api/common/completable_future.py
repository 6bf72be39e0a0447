"""CompletableFuture, as in ``pyflink.common.completable_future``."""
import concurrent.futures

__all__ = ['CompletableFuture']


class CompletableFuture:
    """A future result: ``result()`` waits for it, ``done()`` tells whether it is there."""

    def __init__(self, future: concurrent.futures.Future):
        self._future = future

    def result(self, timeout=None):
        return self._future.result(timeout)

    def done(self) -> bool:
        return self._future.done()

    def exception(self, timeout=None):
        return self._future.exception(timeout)

    def cancel(self) -> bool:
        return self._future.cancel()

    def cancelled(self) -> bool:
        return self._future.cancelled()


def completed(value) -> CompletableFuture:
    future = concurrent.futures.Future()
    future.set_result(value)
    return CompletableFuture(future)
