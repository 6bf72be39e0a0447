"""RestartStrategies, as in ``pyflink.common.restart_strategy``.

``env.set_restart_strategy(...)`` decides what happens when a micro-batch fails (user
code raising, bad input, a sink failing to commit, too many failed checkpoints): the
driver restarts the job from its last committed batch -- state, source offsets and
watermark as committed, operators opened afresh (``open`` runs again) -- as Flink
restarts from its last checkpoint:

- ``no_restart()``: the first failure fails the job.
- ``fixed_delay_restart(n, delay)``: up to ``n`` restarts, each ``delay`` after its failure.
- ``failure_rate_restart(rate, interval, delay)``: restarts ``delay`` after a failure,
  until ``rate`` failures fall within ``interval``.
- ``fall_back_restart()`` (the default): the cluster's strategy, i.e. Spark's: a failing
  task is retried by Spark (``spark.task.maxFailures``, ``local[N,F]``), then the job fails.

Under the first three, Spark does not retry a task whose user code failed, so every
failure counts as one here. Output written before a restart is not taken back from
print and SinkFunction sinks (at least once, as in Flink); transactional sinks (FileSink,
Kafka exactly-once, JDBC, collect) discard the failed batch's output.
"""
from abc import ABC, abstractmethod
from datetime import timedelta
from typing import Union

from engine.driver import restart

__all__ = ['RestartStrategies', 'RestartStrategyConfiguration']


def _interval(name: str, value: Union[int, timedelta]) -> timedelta:
    """An interval given as milliseconds or a timedelta."""
    if isinstance(value, timedelta):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return timedelta(milliseconds=value)
    raise TypeError(f"The parameter '{name}' only supports integer (milliseconds) and "
                    f"datetime.timedelta, current input type is {type(value)}.")


def _check_int(name: str, value, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"The parameter '{name}' must be an integer of at least {minimum}, "
                         f"got {value!r}.")


def _ms(interval: timedelta) -> int:
    return interval // timedelta(milliseconds=1)


def _java_duration(interval: timedelta) -> str:
    """How Java's Duration prints in Flink's descriptions: PT1S, PT1M30S, PT0.5S."""
    micros = interval // timedelta(microseconds=1)
    seconds, micros = divmod(micros, 1_000_000)
    hours, seconds = divmod(seconds, 3600)
    minutes, seconds = divmod(seconds, 60)
    text = "PT" + (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    if seconds or micros or text == "PT":
        fraction = f".{micros:06d}".rstrip("0") if micros else ""
        text += f"{seconds}{fraction}S"
    return text


class RestartStrategyConfiguration(ABC):
    """What to do when a job fails; built by the RestartStrategies factory methods."""

    @abstractmethod
    def get_description(self) -> str:
        """A human-readable description of the strategy."""

    def _values(self) -> tuple:
        return ()

    @abstractmethod
    def _engine_policy(self) -> restart.RestartPolicy:
        """A fresh engine policy of this strategy, for one run of a job."""

    def __eq__(self, other):
        return type(other) is type(self) and other._values() == self._values()

    def __hash__(self):
        return hash((type(self).__name__,) + self._values())

    def __repr__(self):
        return self.get_description()


class RestartStrategies:
    """Factory of RestartStrategyConfigurations (see the module docstring)."""

    class NoRestartStrategyConfiguration(RestartStrategyConfiguration):
        """Never restart."""

        def get_description(self) -> str:
            return "Restart deactivated."

        def _engine_policy(self) -> restart.RestartPolicy:
            return restart.NoRestart()

    class FixedDelayRestartStrategyConfiguration(RestartStrategyConfiguration):
        """Restart up to ``restart_attempts`` times, waiting a fixed delay before each."""

        def __init__(self, restart_attempts: int,
                     delay_between_attempts_interval: Union[int, timedelta]):
            _check_int("restart_attempts", restart_attempts, 0)
            self._restart_attempts = restart_attempts
            self._delay = _interval("delay_between_attempts_interval",
                                    delay_between_attempts_interval)

        def get_restart_attempts(self) -> int:
            return self._restart_attempts

        def get_delay_between_attempts_interval(self) -> timedelta:
            return self._delay

        def get_description(self) -> str:
            return (f"Restart with fixed delay ({_java_duration(self._delay)}). "
                    f"#{self._restart_attempts} restart attempts.")

        def _values(self) -> tuple:
            return self._restart_attempts, self._delay

        def _engine_policy(self) -> restart.RestartPolicy:
            return restart.FixedDelay(self._restart_attempts, _ms(self._delay))

    class FailureRateRestartStrategyConfiguration(RestartStrategyConfiguration):
        """Restart until more than ``max_failure_rate`` failures happen within
        ``failure_interval``, waiting a fixed delay before each restart."""

        def __init__(self, max_failure_rate: int, failure_interval: Union[int, timedelta],
                     delay_between_attempts_interval: Union[int, timedelta]):
            _check_int("max_failure_rate", max_failure_rate, 1)
            self._max_failure_rate = max_failure_rate
            self._failure_interval = _interval("failure_interval", failure_interval)
            self._delay = _interval("delay_between_attempts_interval",
                                    delay_between_attempts_interval)

        def get_max_failure_rate(self) -> int:
            return self._max_failure_rate

        def get_failure_interval(self) -> timedelta:
            return self._failure_interval

        def get_delay_between_attempts_interval(self) -> timedelta:
            return self._delay

        def get_description(self) -> str:
            return (f"Failure rate restart with maximum of {self._max_failure_rate} failures "
                    f"within interval {_java_duration(self._failure_interval)} and fixed delay "
                    f"{_java_duration(self._delay)}.")

        def _values(self) -> tuple:
            return self._max_failure_rate, self._failure_interval, self._delay

        def _engine_policy(self) -> restart.RestartPolicy:
            return restart.FailureRate(self._max_failure_rate, _ms(self._failure_interval),
                                       _ms(self._delay))

    class FallbackRestartStrategyConfiguration(RestartStrategyConfiguration):
        """Use the cluster's default restart strategy (the default)."""

        def get_description(self) -> str:
            return "Cluster level default restart strategy"

        def _engine_policy(self) -> restart.RestartPolicy:
            return restart.ClusterDefault()

    @staticmethod
    def no_restart() -> 'RestartStrategies.NoRestartStrategyConfiguration':
        return RestartStrategies.NoRestartStrategyConfiguration()

    @staticmethod
    def fall_back_restart() -> 'RestartStrategies.FallbackRestartStrategyConfiguration':
        return RestartStrategies.FallbackRestartStrategyConfiguration()

    @staticmethod
    def fixed_delay_restart(restart_attempts: int, delay_between_attempts: Union[int, timedelta]
                            ) -> 'RestartStrategies.FixedDelayRestartStrategyConfiguration':
        """``restart_attempts`` restarts, ``delay_between_attempts`` (ms or timedelta) apart."""
        return RestartStrategies.FixedDelayRestartStrategyConfiguration(
            restart_attempts, delay_between_attempts)

    @staticmethod
    def failure_rate_restart(failure_rate: int, failure_interval: Union[int, timedelta],
                             delay_interval: Union[int, timedelta]
                             ) -> 'RestartStrategies.FailureRateRestartStrategyConfiguration':
        """At most ``failure_rate`` failures per ``failure_interval``, restarts
        ``delay_interval`` apart (intervals in ms or as timedelta)."""
        return RestartStrategies.FailureRateRestartStrategyConfiguration(
            failure_rate, failure_interval, delay_interval)
