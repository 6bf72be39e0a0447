"""Streaming SQL planned on the engine's operators (``api/table/stream_sql.py``,
``window_tvf.py``): ``window_sql_job.py`` against the output PyFlink 2.3.0 printed for it,
window aggregates at any parallelism and micro-batch size, a property test of TUMBLE
against a brute-force aggregate per window, and errors of unsupported constructs raised
when the statement is planned."""
import datetime
import os
from collections import defaultdict

import pytest
from hypothesis import given, settings, strategies as st

from api.common import Types
from api.table import DataTypes, EnvironmentSettings, StreamTableEnvironment
from tests.api.table.oracle import run_job, tableau_blocks
from tests.api.table.streams import rowtime_view, streaming_t_env
from tests.conftest import make_env

JOB = os.path.join(os.path.dirname(__file__), "window_sql_job.py")

with open(os.path.join(os.path.dirname(__file__), "window_sql_pyflink_2_3_0.txt")) as f:
    PYFLINK_2_3_0_OUTPUT = f.read()  # what window_sql_job.py printed on PyFlink 2.3.0


def _grouped_by_window(header: list) -> bool:
    return any('GROUP BY window_start' in h for h in header)


def test_streaming_sql_prints_what_pyflink_prints(capsys, monkeypatch):
    assert tableau_blocks(run_job(JOB, capsys, monkeypatch), _grouped_by_window) == \
        tableau_blocks(PYFLINK_2_3_0_OUTPUT, _grouped_by_window)


def _events_env(events, parallelism, micro_batch_size, delay):
    env = make_env("local", parallelism=parallelism, micro_batch_size=micro_batch_size)
    t_env = streaming_t_env(env)
    rowtime_view(env, t_env, 'events', events, ('k', Types.STRING(), DataTypes.STRING()),
                 delay)
    return t_env


def _window_rows(t_env, sql):
    with t_env.sql_query(sql).execute().collect() as rows:
        return sorted(tuple(r) for r in rows)


TUMBLE = ("SELECT window_start, k, SUM(v) AS s, COUNT(*) AS n, MAX(v) AS hi FROM TABLE("
          "TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
          "GROUP BY window_start, window_end, k")
EVENTS = [("a", 1, 1_000), ("b", 2, 4_000), ("a", 3, 12_000), ("a", 4, 9_000),
          ("b", 5, 25_000), ("b", 6, 21_000), ("a", 7, 30_500)]
EPOCH = datetime.datetime(1970, 1, 1)


def test_window_aggregates_do_not_depend_on_parallelism_or_micro_batch_size(spark):
    expected = _window_rows(_events_env(EVENTS, 1, 100_000, delay=5), TUMBLE)
    assert expected == [
        (EPOCH, 'a', 5, 2, 4), (EPOCH, 'b', 2, 1, 2),
        (EPOCH + datetime.timedelta(seconds=10), 'a', 3, 1, 3),
        (EPOCH + datetime.timedelta(seconds=20), 'b', 11, 2, 6),
        (EPOCH + datetime.timedelta(seconds=30), 'a', 7, 1, 7)]
    for parallelism, size in [(2, 1), (2, 100_000), (1, 2)]:
        assert _window_rows(_events_env(EVENTS, parallelism, size, delay=5),
                            TUMBLE) == expected


@settings(max_examples=8, deadline=None)
@given(events=st.lists(st.tuples(st.sampled_from("xy"), st.integers(-20, 20),
                                 st.integers(0, 59_999)), min_size=1, max_size=30),
       offset=st.integers(-9_999, 9_999),
       parallelism=st.sampled_from([1, 2]), micro_batch_size=st.sampled_from([1, 4, 1000]))
def test_a_tumbling_window_aggregate_is_the_aggregate_of_each_window(
        events, offset, parallelism, micro_batch_size):
    windows = defaultdict(list)
    for key, value, ms in events:
        if value != 0:  # the WHERE
            windows[((ms - offset) // 10_000 * 10_000 + offset, key)].append(value)
    expected = sorted((EPOCH + datetime.timedelta(milliseconds=start), k, sum(vs), len(vs),
                       max(vs), len(set(vs))) for (start, k), vs in windows.items())
    # a watermark delay longer than the input's time span: no record is late
    t_env = _events_env(events, parallelism, micro_batch_size, delay=60)
    assert _window_rows(t_env, (
        "SELECT window_start, k, SUM(v), COUNT(*), MAX(v), COUNT(DISTINCT v) FROM TABLE("
        "TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '%d' "
        "MILLISECOND)) WHERE v <> 0 GROUP BY window_start, window_end, k" % offset)) == expected


def test_unsupported_constructs_fail_when_the_statement_is_planned(spark):
    t_env = _events_env(EVENTS, 1, 100, delay=1)
    with pytest.raises(NotImplementedError, match=r"OVER windows are not supported in "
                       r"STREAMING mode: SELECT k, SUM\(v\) OVER"):
        t_env.sql_query("SELECT k, SUM(v) OVER (PARTITION BY k ORDER BY ts) FROM events")
    with pytest.raises(NotImplementedError, match="SESSION windows without GROUP BY"):
        t_env.sql_query("SELECT * FROM TABLE(SESSION(TABLE events, DESCRIPTOR(ts), "
                        "INTERVAL '5' SECOND))")
    with pytest.raises(NotImplementedError, match="TUMBLE windows with 3 interval"):
        t_env.sql_query("SELECT * FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), "
                        "INTERVAL '5' SECOND, INTERVAL '1' SECOND, INTERVAL '1' SECOND))")
    with pytest.raises(ValueError, match=r"TUMBLE table function parameters must satisfy "
                       r"abs\(offset\) < size, but got size 5000 ms and offset -5000 ms"):
        t_env.sql_query("SELECT * FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), "
                        "INTERVAL '5' SECOND, INTERVAL '-5' SECOND))")
    with pytest.raises(NotImplementedError, match="WHERE conditions on window columns"):
        t_env.sql_query("SELECT window_start, COUNT(*) FROM TABLE(TUMBLE(TABLE events, "
                        "DESCRIPTOR(ts), INTERVAL '5' SECOND)) WHERE window_end > ts "
                        "GROUP BY window_start, window_end")
    with pytest.raises(ValueError, match="'ms' is not the rowtime"):
        t_env.sql_query("SELECT * FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ms), "
                        "INTERVAL '5' SECOND))")
    with pytest.raises(NotImplementedError, match="GROUP BY expressions"):
        t_env.sql_query("SELECT COUNT(*) FROM events GROUP BY v + 1")
    batch = StreamTableEnvironment.create(
        make_env("local"), environment_settings=EnvironmentSettings.in_batch_mode())
    batch.create_temporary_view('t', batch.from_elements([(1,)], ['a']))
    with pytest.raises(NotImplementedError, match="Windowing table functions .* BATCH mode"):
        batch.sql_query("SELECT * FROM TABLE(TUMBLE(TABLE t, DESCRIPTOR(a), "
                        "INTERVAL '5' SECOND))")
