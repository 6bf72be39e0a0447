"""Restart policies: what the driver does when a micro-batch fails.

A restart is Flink's: the job goes back to its last committed batch (state, source
offsets, watermark) with freshly opened operators, and runs on. Failed tasks are
retried by Spark first only under ``ClusterDefault`` (the cluster's own task retries,
``spark.task.maxFailures``); under the other policies a failing task fails its batch at
once and the policy alone decides, so restarts are counted as Flink counts them.
"""
from collections import deque
from typing import Optional


class RestartPolicy:
    """Decides, at each failure of the job, whether and after how long it restarts."""

    #: Whether Spark retries a task whose user code failed before the batch fails.
    retry_tasks = False

    def on_failure(self, now_ms: int) -> Optional[int]:
        """Records a failure at ``now_ms``; returns the delay (ms) before the restart, or
        None: the job fails."""
        return None


class ClusterDefault(RestartPolicy):
    """``fall_back_restart()``: the cluster's (Spark's) task retries; no job restart."""
    retry_tasks = True


class NoRestart(RestartPolicy):
    """``no_restart()``: the first failure fails the job."""


class FixedDelay(RestartPolicy):
    """``fixed_delay_restart(attempts, delay)``: up to ``attempts`` restarts in the job's
    life, each ``delay_ms`` after its failure."""

    def __init__(self, attempts: int, delay_ms: int):
        self.attempts = attempts
        self.delay_ms = delay_ms
        self.failures = 0

    def on_failure(self, now_ms: int) -> Optional[int]:
        self.failures += 1
        return self.delay_ms if self.failures <= self.attempts else None


class FailureRate(RestartPolicy):
    """``failure_rate_restart(max_failures, interval, delay)``: restarts ``delay_ms`` after
    a failure unless it is the ``max_failures``-th within ``interval_ms`` (Flink's
    FailureRateRestartBackoffTimeStrategy)."""

    def __init__(self, max_failures: int, interval_ms: int, delay_ms: int):
        self.max_failures = max_failures
        self.interval_ms = interval_ms
        self.delay_ms = delay_ms
        self.failures = deque()

    def on_failure(self, now_ms: int) -> Optional[int]:
        failures = self.failures
        if len(failures) >= self.max_failures:
            failures.popleft()
        failures.append(now_ms)
        if len(failures) >= self.max_failures and now_ms - failures[0] <= self.interval_ms:
            return None
        return self.delay_ms
