"""Regular inner joins of streams in STREAMING mode (``api/table/regular_join.py``, planned in
``interval_join.py``): ``regular_join_job.py`` against what PyFlink 2.3.0 printed for it, a
property test against a brute-force nested-loop join at any parallelism and micro-batch
size, and the plan-time error of outer regular joins in the Table API."""
import os

import pytest
from hypothesis import given, settings, strategies as st

from api.common import Types
from api.table.expressions import col
from tests.api.table.oracle import run_job, tableau_blocks
from tests.api.table.streams import streaming_t_env
from tests.conftest import make_env

HERE = os.path.dirname(__file__)
JOB = os.path.join(HERE, "regular_join_job.py")

with open(os.path.join(HERE, "regular_join_pyflink_2_3_0.txt")) as f:
    PYFLINK_2_3_0_OUTPUT = f.read()  # what regular_join_job.py printed on PyFlink 2.3.0


def _every_block(header: list) -> bool:
    return True  # the two inputs of a join arrive interleaved in no defined order


def test_regular_joins_print_what_pyflink_prints(capsys, monkeypatch):
    assert tableau_blocks(run_job(JOB, capsys, monkeypatch), _every_block) == \
        tableau_blocks(PYFLINK_2_3_0_OUTPUT, _every_block)


def _tables(left, right, parallelism=1, micro_batch_size=100):
    env = make_env("local", parallelism=parallelism, micro_batch_size=micro_batch_size)
    t_env = streaming_t_env(env)
    for name, rows in (('l', left), ('r', right)):
        t_env.create_temporary_view(name, env.from_collection(rows, Types.ROW_NAMED(
            [name + 'k', name + 'v'], [Types.INT(), Types.INT()])))
    return t_env


KEYS = st.one_of(st.none(), st.integers(1, 3))
ROWS = st.lists(st.tuples(KEYS, st.integers(0, 4)), max_size=10)


@settings(max_examples=10, deadline=None)
@given(left=ROWS, right=ROWS, parallelism=st.sampled_from([1, 2]),
       micro_batch_size=st.sampled_from([1, 3, 1000]))
def test_a_regular_join_is_the_nested_loop_join(left, right, parallelism, micro_batch_size):
    expected = sorted((lk, lv, rv) for lk, lv in left for rk, rv in right
                      if lk is not None and lk == rk and lv >= rv)
    t_env = _tables(left, right, parallelism, micro_batch_size)
    sql = t_env.sql_query("SELECT lk, lv, rv FROM l JOIN r ON lk = rk AND lv >= rv")
    api = t_env.from_path('l').join(t_env.from_path('r'), col('lk') == col('rk')) \
        .where(col('lv') >= col('rv')).select(col('lk'), col('lv'), col('rv'))
    for table in (sql, api):
        with table.execute().collect() as rows:
            assert sorted(tuple(r) for r in rows) == expected


def test_outer_regular_joins_of_the_table_api_fail_when_planned(spark):
    t_env = _tables([(1, 1)], [(1, 2)])
    left, right = t_env.from_path('l'), t_env.from_path('r')
    with pytest.raises(NotImplementedError, match=r"LEFT OUTER regular joins of streams "
                                                  r"\(outer joins without time bounds"):
        left.left_outer_join(right, col('lk') == col('rk'))
