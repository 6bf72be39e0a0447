"""GROUP BYs over changelogs (``api/table/changelog.py``): ``retraction_job.py`` (a GROUP BY
and a filter over another GROUP BY's changelog) against what PyFlink 2.3.0 printed for it,
a property test of the retracting aggregates against a brute-force model over random
changelogs, and one of streaming GROUP BYs (of a stream, and of another's changelog) whose
changelog, applied, ends at the BATCH-mode result, for any input order, parallelism and
micro-batch size."""
import os
from collections import Counter, defaultdict

import pytest
from hypothesis import given, settings, strategies as st

from api.common import Types
from api.common.types import Row, RowKind
from api.table import DataTypes, EnvironmentSettings, StreamTableEnvironment
from api.table.table import Table
from tests.api.table.oracle import run_job
from tests.api.table.streams import streaming_t_env
from tests.conftest import make_env

HERE = os.path.dirname(__file__)
JOB = os.path.join(HERE, "retraction_job.py")

with open(os.path.join(HERE, "retraction_pyflink_2_3_0.txt")) as f:
    PYFLINK_2_3_0_OUTPUT = f.read()  # what retraction_job.py printed on PyFlink 2.3.0


def test_aggregates_and_filters_of_a_changelog_print_what_pyflink_prints(capsys, monkeypatch):
    assert run_job(JOB, capsys, monkeypatch) == PYFLINK_2_3_0_OUTPUT


def test_what_has_no_evaluation_on_a_changelog_fails_when_the_query_is_planned(spark):
    env = make_env("local")
    t_env = streaming_t_env(env)
    t_env.create_temporary_view("t", env.from_collection(
        [("a", 1)], Types.ROW_NAMED(['g', 'v'], [Types.STRING(), Types.INT()])))
    t_env.create_temporary_view("counts", t_env.sql_query(
        "SELECT g, COUNT(*) AS n FROM t GROUP BY g"))
    with pytest.raises(NotImplementedError, match=r"'SUBSTRING\(g, 1, 1\)' .* not supported "
                       r"in STREAMING mode"):
        t_env.sql_query("SELECT SUBSTRING(g, 1, 1), n FROM counts")


class _GivenChangelog:
    """The changelog plan of a stream of Rows of their kinds (the input of a table here)."""
    updating = True

    def __init__(self, stream):
        self._stream = stream

    def node(self) -> str:
        return 'Given'

    def changelog_stream(self, row_type, uid):
        return self._stream


def _changes(steps) -> list:
    """A valid changelog of (k, v) rows: each step adds a row (+I or +U) or retracts a row
    added before and not retracted yet (-U or -D)."""
    live, changes = [], []
    for add, k, v, pick, update in steps:
        if add or not live:
            changes.append((RowKind.UPDATE_AFTER if update else RowKind.INSERT, (k, v)))
            live.append((k, v))
        else:
            changes.append((RowKind.UPDATE_BEFORE if update else RowKind.DELETE,
                            live.pop(pick % len(live))))
    return changes


QUERY = ("SELECT k, SUM(v), COUNT(v), COUNT(*), MIN(v), MAX(v), AVG(v), COUNT(DISTINCT v), "
         "SUM(DISTINCT v), MAX(DISTINCT v) FROM changes GROUP BY k")


def _aggregated(changes, parallelism: int, micro_batch_size: int) -> list:
    """The changelog of QUERY over ``changes``: (kind, row) pairs."""
    env = make_env("local", parallelism=parallelism, micro_batch_size=micro_batch_size)
    t_env = streaming_t_env(env)
    rows = [Row.of_kind(kind, *row) for kind, row in changes]
    table = Table(t_env, [('k', DataTypes.STRING()), ('v', DataTypes.INT())], None)
    table._changelog = _GivenChangelog(env.from_collection(rows, Types.PICKLED_BYTE_ARRAY()))
    table._updating = True
    t_env.create_temporary_view('changes', table)
    with t_env.to_changelog_stream(t_env.sql_query(QUERY)).execute_and_collect() as result:
        return [(r.get_row_kind(), tuple(r)) for r in result]


def _expected(values: list) -> tuple:
    """QUERY's aggregates of a group's values (Java's integer AVG)."""
    present = [v for v in values if v is not None]
    if not present:
        return None, 0, len(values), None, None, None, 0, None, None
    total, distinct = sum(present), set(present)
    mean = abs(total) // len(present) * (1 if total >= 0 else -1)
    return (total, len(present), len(values), min(present), max(present), mean,
            len(distinct), sum(distinct), max(distinct))


@settings(max_examples=15, deadline=None)
@given(steps=st.lists(st.tuples(st.booleans(), st.sampled_from("xy"),
                                st.one_of(st.none(), st.integers(-5, 5)),
                                st.integers(0, 50), st.booleans()), min_size=1, max_size=30),
       parallelism=st.sampled_from([1, 2]), micro_batch_size=st.sampled_from([1, 4, 1000]))
def test_retractions_subtract_from_their_groups_and_an_empty_group_is_deleted(
        spark, steps, parallelism, micro_batch_size):
    changes = _changes(steps)
    current = {}  # key -> its row, as the output changelog leaves it
    for kind, row in _aggregated(changes, parallelism, micro_batch_size):
        key = row[0]
        if kind in (RowKind.UPDATE_BEFORE, RowKind.DELETE):
            assert current.pop(key) == row  # a retraction is of the key's current row
        else:
            assert (key in current) is False
            current[key] = row
    groups = defaultdict(Counter)
    for kind, (k, v) in changes:
        groups[k][v] += -1 if kind in (RowKind.UPDATE_BEFORE, RowKind.DELETE) else 1
    expected = {k: (k, *_expected(list(values.elements())))
                for k, values in groups.items() if sum(values.values())}
    assert current == expected


GROUPED = ("SELECT k, SUM(v) AS s, COUNT(v) AS c, COUNT(*) AS n, MIN(v) AS lo, MAX(v) AS hi, "
           "COUNT(DISTINCT v) AS d FROM events WHERE v IS NULL OR v <> 0 GROUP BY k "
           "HAVING COUNT(*) < 4")
REGROUPED = "SELECT n, COUNT(*) AS keys, SUM(s), MIN(hi), MAX(lo) FROM grouped GROUP BY n"


def _final_rows(events, streaming: bool, parallelism: int = 1, micro_batch_size: int = 1000):
    """The rows of GROUPED and REGROUPED over ``events``: in BATCH mode, or in STREAMING
    mode those the changelogs leave (+I/+U rows, less the -U/-D rows)."""
    env = make_env("local", parallelism=parallelism, micro_batch_size=micro_batch_size)
    settings = EnvironmentSettings.in_streaming_mode() if streaming else \
        EnvironmentSettings.in_batch_mode()
    t_env = StreamTableEnvironment.create(env, environment_settings=settings)
    t_env.create_temporary_view("events", env.from_collection(events, Types.ROW_NAMED(
        ['k', 'v'], [Types.STRING(), Types.INT()])))
    grouped = t_env.sql_query(GROUPED)
    t_env.create_temporary_view("grouped", grouped)
    results = []
    for table in (grouped, t_env.sql_query(REGROUPED)):
        rows = Counter()
        with table.execute().collect() as changes:
            for row in changes:
                retracts = row.get_row_kind() in (RowKind.UPDATE_BEFORE, RowKind.DELETE)
                rows[tuple(row)] += -1 if retracts else 1
        assert all(n >= 0 for n in rows.values())  # nothing retracted that was not there
        results.append(+rows)
    return results


@settings(max_examples=10, deadline=None)
@given(events=st.lists(st.tuples(st.sampled_from("xyz"),
                                 st.one_of(st.none(), st.integers(-3, 3))), max_size=20),
       order=st.randoms(use_true_random=False), parallelism=st.sampled_from([1, 2]),
       micro_batch_size=st.sampled_from([1, 3, 1000]))
def test_a_streaming_group_by_ends_at_the_batch_result_in_any_order(
        spark, events, order, parallelism, micro_batch_size):
    shuffled = list(events)
    order.shuffle(shuffled)
    assert _final_rows(shuffled, True, parallelism, micro_batch_size) == \
        _final_rows(events, False)
