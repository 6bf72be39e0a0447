"""Interval joins in STREAMING mode (``api/table/interval_join.py``): ``interval_join_sql_job.py``
against the output PyFlink 2.3.0 printed for it, results at any parallelism and
micro-batch size, a property test against a brute-force nested-loop join, how a row behind
the watermark joins, and errors of joins of other shapes raised when the statement is
planned."""
import os

import pytest
from hypothesis import given, settings, strategies as st

from api.common import Types
from api.table import DataTypes
from api.table.changelog import Calc
from api.table.interval_join import IntervalJoin
from api.table.window_tvf import timestamp_of
from engine.time.watermarks import MIN_WATERMARK
from tests.api.table.oracle import run_job
from tests.api.table.streams import rowtime_view, streaming_t_env
from tests.conftest import make_env

JOB = os.path.join(os.path.dirname(__file__), "interval_join_sql_job.py")

with open(os.path.join(os.path.dirname(__file__), "interval_join_sql_pyflink_2_3_0.txt")) as f:
    PYFLINK_2_3_0_OUTPUT = f.read()  # what interval_join_sql_job.py printed on PyFlink 2.3.0


def _blocks(text: str) -> list:
    """Each printed table as (its query, schema and frame lines, its sorted rows), then the
    sorted lines printed by to_data_stream: the two inputs of a join arrive interleaved in
    no defined order, in Flink as here."""
    blocks, current = [], []
    for line in text.splitlines():
        current.append(line)
        if line.endswith('rows in set'):
            rows = [r for r in current if r.startswith('| +')]
            blocks.append(([h for h in current if h not in rows], sorted(rows)))
            current = []
    return blocks + [sorted(current)]


def test_interval_joins_print_what_pyflink_prints(capsys, monkeypatch):
    assert _blocks(run_job(JOB, capsys, monkeypatch)) == _blocks(PYFLINK_2_3_0_OUTPUT)


BASE = 1_700_000_000_000  # epoch milliseconds of the inputs' times


def _t_env(orders, shipments, parallelism=1, micro_batch_size=100_000, delay=1):
    """Views 'orders' (id, v, ms) and 'shipments' (id, v, ms), both with the rowtime
    ts = TO_TIMESTAMP_LTZ(ms, 3) and the watermark ts - ``delay`` seconds."""
    env = make_env("local", parallelism=parallelism, micro_batch_size=micro_batch_size)
    t_env = streaming_t_env(env)
    for name, rows in (('orders', orders), ('shipments', shipments)):
        rowtime_view(env, t_env, name, [(k, v, BASE + ms) for k, v, ms in rows],
                     ('id', Types.INT(), DataTypes.INT()), delay)
    return t_env


def _rows(t_env, sql):
    with t_env.sql_query(sql).execute().collect() as rows:
        return sorted((tuple(r) for r in rows), key=repr)


ORDERS = [(1, 10, 1_000), (2, 4, 2_000), (1, 7, 16_000), (3, 9, 20_000), (2, 3, 30_000)]
SHIPMENTS = [(1, 2, 4_000), (2, 5, 9_000), (1, 1, 21_000), (3, 1, 22_000), (2, 1, 28_000),
             (1, 3, 40_000)]
QUERY = ("SELECT o.id, o.v, s.v, s.ms - o.ms AS d FROM orders o {kind} shipments s "
         "ON o.id = s.id AND s.ts BETWEEN o.ts AND o.ts + INTERVAL '5' SECOND AND o.v > s.v")


def test_interval_joins_do_not_depend_on_parallelism_or_micro_batch_size(spark):
    inner = _rows(_t_env(ORDERS, SHIPMENTS), QUERY.format(kind='JOIN'))
    assert inner == sorted([(1, 7, 1, 5_000), (1, 10, 2, 3_000), (3, 9, 1, 2_000)], key=repr)
    left = _rows(_t_env(ORDERS, SHIPMENTS), QUERY.format(kind='LEFT JOIN'))
    assert left == sorted(inner + [(2, 4, None, None), (2, 3, None, None)], key=repr)
    for parallelism, size in [(2, 1), (2, 100_000), (1, 2)]:
        t_env = _t_env(ORDERS, SHIPMENTS, parallelism, size)
        assert _rows(t_env, QUERY.format(kind='JOIN')) == inner
        assert _rows(t_env, QUERY.format(kind='LEFT JOIN')) == left


def _brute_force(orders, shipments, kind, lower, upper):
    """The join of every pair (nested loops), ``lower <= o.ms - s.ms <= upper`` and o.v >
    s.v, with the unmatched rows of an outer side padded."""
    joined, matched_orders, matched_shipments = [], set(), set()
    for i, (ok, ov, oms) in enumerate(orders):
        for j, (sk, sv, sms) in enumerate(shipments):
            if ok == sk and lower <= oms - sms <= upper and ov > sv:
                joined.append((ok, ov, sv, sms - oms))
                matched_orders.add(i)
                matched_shipments.add(j)
    if kind in ('LEFT JOIN', 'FULL JOIN'):
        joined += [(k, v, None, None) for i, (k, v, _) in enumerate(orders)
                   if i not in matched_orders]
    if kind == 'FULL JOIN':
        joined += [(None, None, v, None) for j, (_, v, _) in enumerate(shipments)
                   if j not in matched_shipments]
    return sorted(joined, key=repr)


TIMES = st.integers(0, 40).map(lambda n: n * 500)  # milliseconds: often on a bound


@settings(max_examples=25, deadline=None)
@given(orders=st.lists(st.tuples(st.integers(1, 3), st.integers(0, 5), TIMES), max_size=12),
       shipments=st.lists(st.tuples(st.integers(1, 3), st.integers(0, 5), TIMES),
                          max_size=12),
       kind=st.sampled_from(['JOIN', 'LEFT JOIN', 'FULL JOIN']),
       bounds=st.sampled_from([(-3_000, 2_000, False), (0, 5_000, True), (-4_000, -1_000, True),
                               (500, 500, False)]),
       parallelism=st.sampled_from([1, 2]), micro_batch_size=st.sampled_from([1, 3, 1000]))
def test_an_interval_join_is_the_nested_loop_join_within_the_bounds(
        orders, shipments, kind, bounds, parallelism, micro_batch_size):
    lower, upper, strict = bounds  # o.ts - s.ts in [lower, upper] (or (lower, upper))

    def shifted(column, millis):
        return f"{column} {'-' if millis < 0 else '+'} INTERVAL '{abs(millis) / 1000:g}' SECOND"
    if strict:
        condition = f"o.ts > {shifted('s.ts', lower)} AND s.ts > {shifted('o.ts', -upper)}"
        lower, upper = lower + 1, upper - 1
    else:
        condition = f"o.ts BETWEEN {shifted('s.ts', lower)} AND {shifted('s.ts', upper)}"
    sql = (f"SELECT o.id, o.v, s.v, s.ms - o.ms FROM orders o {kind} shipments s "
           f"ON o.id = s.id AND {condition} AND o.v > s.v")
    # a watermark delay longer than the inputs' time span: no row is behind the watermark
    t_env = _t_env(orders, shipments, parallelism, micro_batch_size, delay=30)
    assert _rows(t_env, sql) == _brute_force(orders, shipments, kind, lower, upper)


class _State:
    """A keyed state of the one key of the test below: MapState and ValueState alike."""

    def __init__(self):
        self.entries = {}

    def items(self):
        return list(self.entries.items())

    def get(self, key):
        return self.entries.get(key)

    def put(self, key, value):
        self.entries[key] = value

    def remove(self, key):
        del self.entries[key]

    def clear(self):
        self.entries.clear()

    def value(self):
        return self.entries.get(None)

    def update(self, value):
        self.entries[None] = value


class _Context:
    def __init__(self):
        self.watermark, self.timers = MIN_WATERMARK, []

    def get_current_key(self):
        return (1,)

    def timer_service(self):
        return self

    def current_watermark(self):
        return self.watermark

    def register_event_time_timer(self, timestamp):
        self.timers.append(timestamp)


def test_a_row_behind_the_watermark_joins_only_the_rows_still_kept():
    class RuntimeContext:
        def get_map_state(self, descriptor):
            return _State()
        get_state = get_map_state

    def at(seconds):
        return (timestamp_of(seconds * 1000),)
    # LEFT JOIN, left.ts - right.ts in [-5 s, 0]: rows of a side wait while rows of the
    # other side not behind the watermark may join them
    join = IntervalJoin('LEFT', (-5_000, 0), 1, 1, None, Calc(None, ()), 0, 0)
    join.open(RuntimeContext())
    join._calc = lambda row: tuple(None if t is None else t.second for t in row)
    ctx = _Context()
    assert list(join.process_element2(at(12), ctx)) == []               # kept
    ctx.watermark = 11_000
    assert list(join.process_element1(at(10), ctx)) == [(10, 12)]       # late, joins, kept
    assert ctx.timers == [14_501, 17_501]  # when each side's rows may have expired
    ctx.watermark = 20_000
    assert list(join.on_timer(14_501, ctx)) == []
    assert list(join.on_timer(17_501, ctx)) == []                       # joined: no padding
    assert join._caches[0].items() == [] and join._caches[1].items() == []
    assert list(join.process_element2(at(14), ctx)) == []               # nothing to join
    assert list(join.process_element1(at(13), ctx)) == [(13, None)]     # late, padded
    assert join._caches[0].items() == [] and join._caches[1].items() == []


def test_joins_of_other_shapes_fail_when_the_statement_is_planned(spark):
    t_env = _t_env(ORDERS, SHIPMENTS)
    with pytest.raises(NotImplementedError, match="Joins of more than two views"):
        t_env.sql_query("SELECT o.id FROM orders o, shipments s, orders p WHERE o.id = s.id "
                        "AND s.ts BETWEEN o.ts AND o.ts + INTERVAL '5' SECOND")
    with pytest.raises(NotImplementedError, match="GROUP BY of joins"):
        t_env.sql_query("SELECT o.id, COUNT(*) FROM orders o, shipments s WHERE o.id = s.id "
                        "AND s.ts BETWEEN o.ts AND o.ts + INTERVAL '5' SECOND GROUP BY o.id")
    with pytest.raises(ValueError, match="Column 'x.id' not found"):
        t_env.sql_query("SELECT o.id FROM orders o, shipments s WHERE x.id = s.id "
                        "AND s.ts BETWEEN o.ts AND o.ts + INTERVAL '5' SECOND")
