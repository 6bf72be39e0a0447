"""RestartStrategies: the configurations, their getters and descriptions (Flink's Java
descriptions, with intervals printed as Java Durations; PyFlink 2.3.0's own calls fail,
the Java classes behind them being gone)."""
from datetime import timedelta

import pytest

from api.common import RestartStrategies
from api.datastream import StreamExecutionEnvironment


def test_fixed_delay():
    strategy = RestartStrategies.fixed_delay_restart(3, 1000)
    assert strategy.get_restart_attempts() == 3
    assert strategy.get_delay_between_attempts_interval() == timedelta(seconds=1)
    assert strategy.get_description() == "Restart with fixed delay (PT1S). #3 restart attempts."
    assert strategy == RestartStrategies.fixed_delay_restart(3, timedelta(seconds=1))
    assert strategy != RestartStrategies.fixed_delay_restart(4, 1000)


def test_failure_rate():
    strategy = RestartStrategies.failure_rate_restart(5, timedelta(minutes=1), 15000)
    assert strategy.get_max_failure_rate() == 5
    assert strategy.get_failure_interval() == timedelta(minutes=1)
    assert strategy.get_delay_between_attempts_interval() == timedelta(seconds=15)
    assert strategy.get_description() == ("Failure rate restart with maximum of 5 failures "
                                          "within interval PT1M and fixed delay PT15S.")


def test_no_restart_and_fall_back():
    assert RestartStrategies.no_restart().get_description() == "Restart deactivated."
    assert RestartStrategies.no_restart() == RestartStrategies.no_restart()
    assert RestartStrategies.fall_back_restart().get_description() == \
        "Cluster level default restart strategy"


def test_intervals_are_milliseconds_or_timedeltas():
    with pytest.raises(TypeError, match="delay_between_attempts_interval"):
        RestartStrategies.fixed_delay_restart(3, 1.5)


def test_the_environment_records_the_strategy():
    env = StreamExecutionEnvironment.get_execution_environment()
    assert env.get_restart_strategy() == RestartStrategies.fall_back_restart()
    env.set_restart_strategy(RestartStrategies.no_restart())
    assert env.get_restart_strategy() == RestartStrategies.no_restart()
    assert env.get_config().get_restart_strategy() == RestartStrategies.no_restart()
