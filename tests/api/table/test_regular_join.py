"""Regular joins of streams in STREAMING mode (``api/table/regular_join.py``, planned in
``interval_join.py``): ``regular_join_job.py`` against what PyFlink 2.3.0 printed for it, a
property test against a brute-force nested-loop join at any parallelism and micro-batch
size, and outer joins failing where an append-only stream is wanted, as in Flink."""
import os
from collections import Counter

import pytest
from hypothesis import given, settings, strategies as st

from api.common import Types
from api.common.types import RowKind
from api.util.exceptions import TableException
from api.table.expressions import col
from tests.api.table.oracle import run_job, tableau_blocks
from tests.api.table.streams import streaming_t_env
from tests.conftest import make_env

HERE = os.path.dirname(__file__)
JOB = os.path.join(HERE, "regular_join_job.py")

with open(os.path.join(HERE, "regular_join_pyflink_2_3_0.txt")) as f:
    PYFLINK_2_3_0_OUTPUT = f.read()  # what regular_join_job.py printed on PyFlink 2.3.0


def _every_block(header: list) -> bool:
    return True


def _materialized(text: str) -> list:
    """Each printed table as its title and schema, and the rows its changelog leaves (+I
    adds a row, -D removes it): the two inputs of a join arrive interleaved in no defined
    order, which decides which padded rows of an outer join come and go, in Flink as
    here."""
    tables = []
    for header, rows in tableau_blocks(text, _every_block):
        kept = Counter()
        for row in rows:
            kept[row[4:]] += 1 if row.startswith('| +') else -1
        tables.append(([h for h in header if not h.endswith('in set')],
                       sorted((r, n) for r, n in kept.items() if n)))
    return tables


def test_regular_joins_print_what_pyflink_prints(capsys, monkeypatch):
    assert _materialized(run_job(JOB, capsys, monkeypatch)) == \
        _materialized(PYFLINK_2_3_0_OUTPUT)


def _tables(left, right, parallelism=1, micro_batch_size=100):
    env = make_env("local", parallelism=parallelism, micro_batch_size=micro_batch_size)
    t_env = streaming_t_env(env)
    for name, rows in (('l', left), ('r', right)):
        t_env.create_temporary_view(name, env.from_collection(rows, Types.ROW_NAMED(
            [name + 'k', name + 'v'], [Types.INT(), Types.INT()])))
    return t_env


KEYS = st.one_of(st.none(), st.integers(1, 3))
ROWS = st.lists(st.tuples(KEYS, st.integers(0, 4)), max_size=10)


def _brute_force(left, right, kind):
    """The rows of the join of every pair (nested loops) with lk = rk and lv >= rv, the
    rows of an outer side that join none padded with NULLs."""
    def joins(l_row, r_row):
        return l_row[0] is not None and l_row[0] == r_row[0] and l_row[1] >= r_row[1]
    rows = [(lk, lv, rk, rv) for lk, lv in left for rk, rv in right if joins((lk, lv), (rk, rv))]
    if kind in ('LEFT', 'FULL'):
        rows += [(lk, lv, None, None) for lk, lv in left
                 if not any(joins((lk, lv), r) for r in right)]
    if kind in ('RIGHT', 'FULL'):
        rows += [(None, None, rk, rv) for rk, rv in right
                 if not any(joins(r, (rk, rv)) for r in left)]
    return sorted(rows, key=repr)


def _changelog_result(table) -> list:
    """The rows the table's changelog leaves: +I adds a row, -D removes it."""
    kept = Counter()
    with table.execute().collect() as rows:
        for row in rows:
            kept[tuple(row)] += 1 if row.get_row_kind() == RowKind.INSERT else -1
    assert min(kept.values(), default=0) >= 0  # nothing removed that was not there
    return sorted(kept.elements(), key=repr)


@settings(max_examples=12, deadline=None)
@given(left=ROWS, right=ROWS, kind=st.sampled_from(['INNER', 'LEFT', 'RIGHT', 'FULL']),
       parallelism=st.sampled_from([1, 2]), micro_batch_size=st.sampled_from([1, 3, 1000]))
def test_a_regular_join_is_the_nested_loop_join(left, right, kind, parallelism,
                                                micro_batch_size):
    t_env = _tables(left, right, parallelism, micro_batch_size)
    sql = t_env.sql_query(f"SELECT lk, lv, rk, rv FROM l {kind} JOIN r ON lk = rk AND lv >= rv")
    method = {'INNER': 'join', 'LEFT': 'left_outer_join', 'RIGHT': 'right_outer_join',
              'FULL': 'full_outer_join'}[kind]
    api = getattr(t_env.from_path('l'), method)(
        t_env.from_path('r'), (col('lk') == col('rk')) & (col('lv') >= col('rv')))
    expected = _brute_force(left, right, kind)
    assert _changelog_result(sql) == expected
    assert _changelog_result(api) == expected


def test_an_outer_join_is_not_an_append_stream(spark):
    t_env = _tables([(1, 1)], [(1, 2)])
    table = t_env.sql_query("SELECT * FROM l LEFT JOIN r ON lk = rk")
    with pytest.raises(TableException, match=r"doesn't support consuming update changes "
                                             r"which is produced by node Join\(joinType="
                                             r"\[LeftOuterJoin\], where=\[lk = rk\]"):
        t_env.to_append_stream(table, Types.ROW([Types.INT()] * 4))
    inner = t_env.sql_query("SELECT lk, lv FROM l JOIN r ON lk = rk")
    assert [tuple(r) for r in t_env.to_append_stream(inner, Types.ROW([Types.INT()] * 2))
            .execute_and_collect(limit=1)] == [(1, 1)]
