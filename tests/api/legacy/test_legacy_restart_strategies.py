"""Restart strategies (``env.set_restart_strategy``, as in the reference: "The configuration
specifies which restart strategy will be used for the execution graph in case of a
restart"): a failed micro-batch restarts the job from its last committed batch, as Flink
restarts from its last checkpoint, while the strategy allows it."""
import os
import time

import pytest

from api.common import RestartStrategies
from api.datastream import MapFunction

from engine.errors import JobExecutionException
from engine.driver.restart import FailureRate
from tests.conftest import make_env


class FailsOnValue(MapFunction):
    """Raises on ``value`` the first ``times`` times it sees it (counted in a file, so
    across restarts and processes); records each ``open``."""

    def __init__(self, value, times, directory):
        self.value = value
        self.times = times
        self.directory = str(directory)
        os.makedirs(self.directory, exist_ok=True)

    def _count(self, name, add=False):
        path = os.path.join(self.directory, name)
        count = os.path.getsize(path) if os.path.exists(path) else 0
        if add:
            with open(path, "a") as f:
                f.write("x")
        return count

    def open(self, runtime_context):
        self._count("opens", add=True)

    def map(self, value):
        if value == self.value and self._count("failures") < self.times:
            self._count("failures", add=True)
            raise RuntimeError(f"failure on {value}")
        return value


def rolling_sums(env, directory, fail_times, values=range(10)):
    """Rolling sums per parity of ``values``, failing on 7 ``fail_times`` times; the job
    reads two values per micro-batch, so batches before 7's are committed first."""
    stream = env.from_collection(list(values)).map(FailsOnValue(7, fail_times, directory)) \
        .key_by(lambda v: v % 2).reduce(lambda a, b: a + b)
    return list(stream.execute_and_collect())


def expected_sums(values=range(10)):
    totals, out = {}, []
    for v in values:
        totals[v % 2] = totals.get(v % 2, 0) + v
        out.append(totals[v % 2])
    return out


def test_fixed_delay_restarts_from_the_last_committed_batch(tmp_path, env_factory):
    env = env_factory(micro_batch_size=2)
    env.set_restart_strategy(RestartStrategies.fixed_delay_restart(2, 200))
    started = time.monotonic()
    got = rolling_sums(env, tmp_path, fail_times=2)
    # two restarts, 200 ms apart; keyed state and the (exactly-once) collected results as
    # if nothing had failed; the operators were opened again at each restart
    assert time.monotonic() - started >= 0.4
    assert sorted(got) == sorted(expected_sums())
    assert os.path.getsize(tmp_path / "failures") == 2
    assert os.path.getsize(tmp_path / "opens") >= 3


def test_fixed_delay_fails_the_job_after_its_attempts(tmp_path):
    env = make_env("local", micro_batch_size=2)
    env.set_restart_strategy(RestartStrategies.fixed_delay_restart(1, 0))
    with pytest.raises(JobExecutionException, match="failure on 7"):
        rolling_sums(env, tmp_path, fail_times=2)
    assert os.path.getsize(tmp_path / "failures") == 2


def test_no_restart_fails_at_the_first_failure(tmp_path):
    env = make_env("local", micro_batch_size=2)
    env.set_restart_strategy(RestartStrategies.no_restart())
    with pytest.raises(JobExecutionException, match="failure on 7"):
        rolling_sums(env, tmp_path, fail_times=1)
    assert os.path.getsize(tmp_path / "failures") == 1


def test_failure_rate(tmp_path):
    env = make_env("local", micro_batch_size=2)
    # 3 failures within a minute: the third fails the job
    env.set_restart_strategy(RestartStrategies.failure_rate_restart(3, 60_000, 0))
    with pytest.raises(JobExecutionException, match="failure on 7"):
        rolling_sums(env, tmp_path / "a", fail_times=5)
    assert os.path.getsize(tmp_path / "a" / "failures") == 3
    # failures further apart than the interval: restarts go on
    env.set_restart_strategy(RestartStrategies.failure_rate_restart(2, 50, 100))
    assert sorted(rolling_sums(env, tmp_path / "b", fail_times=4)) == sorted(expected_sums())


def test_failure_rate_counts_as_flink():
    policy = FailureRate(max_failures=2, interval_ms=1000, delay_ms=5)
    assert policy.on_failure(0) == 5        # one failure within the interval
    assert policy.on_failure(2000) == 5     # the first is out of the interval
    assert policy.on_failure(2500) is None  # two within 1000 ms


def test_the_default_falls_back_to_the_clusters_task_retries(tmp_path):
    env = make_env("local", micro_batch_size=2)
    assert env.get_restart_strategy() == RestartStrategies.fall_back_restart()
    with pytest.raises(JobExecutionException, match="failure on 7"):  # no job restart
        rolling_sums(env, tmp_path, fail_times=1)
    with pytest.raises(TypeError, match="RestartStrategies"):
        env.set_restart_strategy("fixed-delay")
    with pytest.raises(ValueError, match="restart_attempts"):
        RestartStrategies.fixed_delay_restart(-1, 0)
