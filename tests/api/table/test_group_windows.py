"""Group windows of the Table API in STREAMING mode (``api/table/window.py``,
``group_windows.py``): ``group_window_job.py`` against what PyFlink 2.3.0 printed for it, a
property test of sliding windows against a brute-force aggregate per window at any
parallelism and micro-batch size, and errors of what is not available, raised when the
query is planned."""
import datetime
import os
from collections import defaultdict

import pytest
from hypothesis import given, settings, strategies as st

from api.common import Types
from api.table import DataTypes, EnvironmentSettings, StreamTableEnvironment
from api.table.expressions import col, lit
from api.table.window import Over, Slide, Tumble
from tests.api.table.oracle import run_job, tableau_blocks
from tests.api.table.streams import rowtime_view, streaming_t_env
from tests.conftest import make_env

HERE = os.path.dirname(__file__)
JOB = os.path.join(HERE, "group_window_job.py")
EPOCH = datetime.datetime(1970, 1, 1)

with open(os.path.join(HERE, "group_window_pyflink_2_3_0.txt")) as f:
    PYFLINK_2_3_0_OUTPUT = f.read()  # what group_window_job.py printed on PyFlink 2.3.0


def _every_block(header: list) -> bool:
    return True  # each is a window aggregate: a window's groups come in no defined order


def test_group_windows_print_what_pyflink_prints(capsys, monkeypatch):
    assert tableau_blocks(run_job(JOB, capsys, monkeypatch), _every_block) == \
        tableau_blocks(PYFLINK_2_3_0_OUTPUT, _every_block)


def _events(events, parallelism=1, micro_batch_size=100):
    env = make_env("local", parallelism=parallelism, micro_batch_size=micro_batch_size)
    t_env = streaming_t_env(env)
    # a watermark delay longer than the input's time span: no record is late
    rowtime_view(env, t_env, 'events', events, ('k', Types.STRING(), DataTypes.STRING()), 60)
    return t_env.from_path('events')


@settings(max_examples=6, deadline=None)
@given(events=st.lists(st.tuples(st.sampled_from("xy"), st.integers(-20, 20),
                                 st.integers(0, 59_999)), min_size=1, max_size=30),
       parallelism=st.sampled_from([1, 2]), micro_batch_size=st.sampled_from([1, 4, 1000]))
def test_a_sliding_window_aggregate_is_the_aggregate_of_each_window(
        events, parallelism, micro_batch_size):
    windows = defaultdict(list)
    for key, value, ms in events:
        for start in range(ms // 5_000 * 5_000, ms - 10_000, -5_000):  # size 10 s, slide 5 s
            windows[(start, key)].append(value)
    expected = sorted((k, EPOCH + datetime.timedelta(milliseconds=start + 10_000), sum(vs),
                       len(set(vs))) for (start, k), vs in windows.items())
    table = _events(events, parallelism, micro_batch_size).window(
        Slide.over(lit(10).seconds).every(lit(5).seconds).on(col('ts')).alias('w')) \
        .group_by(col('k'), col('w')) \
        .select(col('k'), col('w').end, col('v').sum, col('v').count.distinct)
    with table.execute().collect() as rows:
        assert sorted(tuple(r) for r in rows) == expected


def test_what_is_not_available_fails_when_the_query_is_planned(spark):
    table = _events([("x", 1, 1_000)])
    tumble = Tumble.over(lit(10).seconds).on(col('ts')).alias('w')
    with pytest.raises(ValueError, match="GroupBy must contain exactly one window alias 'w'"):
        table.window(tumble).group_by(col('k')).select(col('k'), col('v').sum)
    with pytest.raises(NotImplementedError, match="The proctime property of event-time "
                                                  "windows are not supported"):
        table.window(tumble).group_by(col('w')).select(col('w').proctime)
    with pytest.raises(ValueError, match="expected a time interval, e.g. lit"):
        Tumble.over(lit(10)).on(col('ts')).alias('w')
    with pytest.raises(ValueError, match="'ms' is not the rowtime"):
        table.window(Tumble.over(lit(1).seconds).on(col('ms')).alias('w')) \
            .group_by(col('w')).select(col('v').sum)
    with pytest.raises(NotImplementedError, match=r"Table.over_window\(\) is not available"):
        table.over_window(Over.partition_by(col('k')).order_by(col('ts')).alias('o'))
    batch = StreamTableEnvironment.create(
        make_env("local"), environment_settings=EnvironmentSettings.in_batch_mode())
    with pytest.raises(NotImplementedError, match="Group windows of the Table API are not "
                                                  "supported in BATCH mode"):
        batch.from_elements([(1,)], ['a']).window(tumble).group_by(col('w')) \
            .select(col('a').sum)
