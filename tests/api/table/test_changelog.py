"""Streaming GROUP BY aggregates as Flink's changelog (``api/table/changelog.py``):
``changelog_job.py`` against the output PyFlink 2.3.0 printed for it, the same changelog at
any parallelism and micro-batch size, a property test against a brute-force aggregate,
and a job stopped with a savepoint that resumes its groups' state."""
import os
import time
from collections import Counter, defaultdict

from hypothesis import given, settings, strategies as st

from api.common import Types
from api.common.watermark_strategy import WatermarkStrategy
from api.common.types import RowKind
from api.datastream.connectors.datagen import DataGeneratorSource
from api.datastream.connectors.file_system import BucketAssigner, Encoder, FileSink
from api.datastream.functions import MapFunction
from api.table import EnvironmentSettings, StreamTableEnvironment
from api.table.expressions import col
from tests.api.table.oracle import run_job
from tests.conftest import finished_lines, make_env

JOB = os.path.join(os.path.dirname(__file__), "changelog_job.py")

PYFLINK_2_3_0_OUTPUT = """\
(
  `k` STRING,
  `s` INT NOT NULL,
  `c` BIGINT NOT NULL,
  `lo` INT NOT NULL,
  `hi` INT NOT NULL,
  `mean` INT NOT NULL
)
+I[a,1,1,1,1,1]
+I[b,5,1,5,5,5]
-U[a,1,1,1,1,1]
+U[a,4,2,1,3,2]
-U[a,4,2,1,3,2]
+U[a,7,3,1,3,2]
-U[b,5,1,5,5,5]
+U[b,7,2,2,5,3]
-U[a,7,3,1,3,2]
+U[a,6,4,-1,3,1]
(true,(a,1))
(true,(b,5))
(false,(a,1))
(true,(a,3))
TableException org.apache.flink.table.api.TableException: toAppendStream doesn't support \
consuming update changes which is produced by node GroupAggregate(groupBy=[k], \
select=[k, MAX(v) AS EXPR$0])
+----+--------------------------------+-------------+----------------------+-------------+-------------+-------------+
| op |                              k |           s |                    c |          lo |          hi |        mean |
+----+--------------------------------+-------------+----------------------+-------------+-------------+-------------+
| +I |                              a |           1 |                    1 |           1 |           1 |           1 |
| +I |                              b |           5 |                    1 |           5 |           5 |           5 |
| -U |                              a |           1 |                    1 |           1 |           1 |           1 |
| +U |                              a |           4 |                    2 |           1 |           3 |           2 |
| -U |                              a |           4 |                    2 |           1 |           3 |           2 |
| +U |                              a |           7 |                    3 |           1 |           3 |           2 |
| -U |                              b |           5 |                    1 |           5 |           5 |           5 |
| +U |                              b |           7 |                    2 |           2 |           5 |           3 |
| -U |                              a |           7 |                    3 |           1 |           3 |           2 |
| +U |                              a |           6 |                    4 |          -1 |           3 |           1 |
+----+--------------------------------+-------------+----------------------+-------------+-------------+-------------+
10 rows in set
[('+I', "<Row('a', 1)>"), ('+I', "<Row('b', 5)>"), ('-U', "<Row('a', 1)>"), ('+U', "<Row('a', 3)>")]
+----+--------------------------------+----------------------+-------------+
| op |                              k |                    n |           s |
+----+--------------------------------+----------------------+-------------+
| +I |                              a |                    1 |           1 |
| +I |                              b |                    1 |           5 |
| -U |                              a |                    1 |           1 |
| +U |                              a |                    2 |           4 |
| -U |                              a |                    2 |           4 |
| +U |                              a |                    3 |           7 |
| -U |                              b |                    1 |           5 |
| +U |                              b |                    2 |           7 |
| -U |                              a |                    3 |           7 |
| +U |                              a |                    4 |           6 |
+----+--------------------------------+----------------------+-------------+
10 rows in set
+----+--------------------------------+----------------------+
| op |                              k |                    d |
+----+--------------------------------+----------------------+
| +I |                              a |                    1 |
| +I |                              b |                    1 |
| -U |                              a |                    1 |
| +U |                              a |                    2 |
| -U |                              b |                    1 |
| +U |                              b |                    2 |
| -U |                              a |                    2 |
| +U |                              a |                    3 |
+----+--------------------------------+----------------------+
8 rows in set
(
  `k` STRING,
  `EXPR$1` BIGINT NOT NULL,
  `EXPR$2` INT,
  `m` INT,
  `EXPR$4` BIGINT NOT NULL
)
+----+--------------------------------+----------------------+-------------+-------------+----------------------+
| op |                              k |               EXPR$1 |      EXPR$2 |           m |               EXPR$4 |
+----+--------------------------------+----------------------+-------------+-------------+----------------------+
| +I |                              a |                    1 |           1 |           1 |                    1 |
| +I |                              b |                    1 |      <NULL> |      <NULL> |                    0 |
| -U |                              a |                    1 |           1 |           1 |                    1 |
| +U |                              a |                    2 |           1 |           1 |                    1 |
| -U |                              b |                    1 |      <NULL> |      <NULL> |                    0 |
| +U |                              b |                    2 |           2 |           2 |                    1 |
+----+--------------------------------+----------------------+-------------+-------------+----------------------+
6 rows in set
+----+--------------------------------+--------------------------------+--------------------------------+
| op |                              k |                              m |                              s |
+----+--------------------------------+--------------------------------+--------------------------------+
| +I |                              a |                            1.5 |                            1.5 |
| -U |                              a |                            1.5 |                            1.5 |
| +U |                              a |                           1.75 |                            3.5 |
| +I |                              b |                           -1.0 |                           -1.0 |
+----+--------------------------------+--------------------------------+--------------------------------+
4 rows in set
"""


def test_a_streaming_group_by_prints_the_changelog_pyflink_prints(capsys, monkeypatch):
    assert run_job(JOB, capsys, monkeypatch) == PYFLINK_2_3_0_OUTPUT


ROW_TYPE = Types.ROW_NAMED(['k', 'v'], [Types.STRING(), Types.INT()])


def _changelog(events, parallelism: int, micro_batch_size: int) -> list:
    """(kind, key, sum, count, count(*), min, max, avg, count distinct) of the changelog
    of ``events`` ((key, value) pairs, values may be None)."""
    env = make_env("local", parallelism=parallelism, micro_batch_size=micro_batch_size)
    t_env = StreamTableEnvironment.create(
        env, environment_settings=EnvironmentSettings.in_streaming_mode())
    t_env.create_temporary_view("events", env.from_collection(events, ROW_TYPE))
    table = t_env.sql_query("SELECT k, SUM(v) AS s, COUNT(v), COUNT(*) AS n, MIN(v), "
                            "MAX(v), AVG(v), COUNT(DISTINCT v) FROM events GROUP BY k")
    with t_env.to_changelog_stream(table).execute_and_collect() as rows:
        return [(r.get_row_kind(), *r) for r in rows]


def _per_key(changelog: list) -> dict:
    keys = defaultdict(list)
    for change in changelog:
        keys[change[1]].append(change)
    return dict(keys)


def _aggregates(values: list) -> tuple:
    present = [v for v in values if v is not None]
    if not present:
        return None, 0, len(values), None, None, None, 0
    total = sum(present)
    mean = abs(total) // len(present) * (1 if total >= 0 else -1)  # Java's int division
    return (total, len(present), len(values), min(present), max(present), mean,
            len(set(present)))


EVENTS = [(k, v) for k, v in zip("abcabcaab", [3, 1, None, 3, 4, 2, -5, 3, 4])]


def test_the_changelog_does_not_depend_on_parallelism_or_micro_batch_size(spark):
    expected = _per_key(_changelog(EVENTS, 1, 100_000))
    assert [c[0] for c in expected['c']] == [RowKind.INSERT, RowKind.UPDATE_BEFORE,
                                             RowKind.UPDATE_AFTER]
    assert expected['c'][-1][1:] == ('c', 2, 1, 2, 2, 2, 2, 1)
    for parallelism, size in [(2, 1), (2, 100_000), (1, 1)]:
        assert _per_key(_changelog(EVENTS, parallelism, size)) == expected


@settings(max_examples=12, deadline=None)
@given(events=st.lists(st.tuples(st.sampled_from("xyz"),
                                 st.one_of(st.none(), st.integers(-50, 50))),
                       min_size=1, max_size=25),
       parallelism=st.sampled_from([1, 2]), micro_batch_size=st.sampled_from([1, 3, 1000]))
def test_each_key_ends_at_its_aggregate_and_each_retraction_is_the_last_row(
        events, parallelism, micro_batch_size):
    for key, changes in _per_key(_changelog(events, parallelism, micro_batch_size)).items():
        assert changes[0][0] == RowKind.INSERT
        last = changes[0]
        for before, after in zip(changes[1::2], changes[2::2]):
            assert before[0] == RowKind.UPDATE_BEFORE and after[0] == RowKind.UPDATE_AFTER
            assert before[1:] == last[1:] != after[1:]
            last = after
        assert len(changes) % 2 == 1
        assert last[2:] == _aggregates([v for k, v in events if k == key])


def test_a_group_by_of_two_keys_at_parallelism_2_changes_each_group_as_pyflink(spark):
    env = make_env("spark", parallelism=2)
    t_env = StreamTableEnvironment.create(env)
    records = env.from_collection([("a", 1, 2), ("a", 2, 3), ("a", 1, 4), ("b", 1, 1)],
                                  Types.TUPLE([Types.STRING(), Types.INT(), Types.LONG()]))
    table = t_env.from_data_stream(records).alias("k", "j", "v")
    result = table.group_by(col("k"), col("j")).select(col("j"), col("k"),
                                                        col("v").sum.alias("s"), col("v").max)
    assert [str(c) for c in result.get_schema().get_field_data_types()] == [
        'INT NOT NULL', 'STRING', 'BIGINT NOT NULL', 'BIGINT NOT NULL']
    with t_env.to_changelog_stream(result).execute_and_collect() as rows:
        changes = _per_key([(str(r.get_row_kind()), (r[0], r[1]), *r[2:]) for r in rows])
    # PyFlink 2.3.0 printed (its subtasks and the order across groups differ here)
    # 1> +I[1,b,1,1]; 2> +I[1,a,2,2] / +I[2,a,3,3] / -U[1,a,2,2] / +U[1,a,6,4]
    assert changes == {(1, 'b'): [('+I', (1, 'b'), 1, 1)],
                       (1, 'a'): [('+I', (1, 'a'), 2, 2), ('-U', (1, 'a'), 2, 2),
                                  ('+U', (1, 'a'), 6, 4)],
                       (2, 'a'): [('+I', (2, 'a'), 3, 3)]}


def test_a_group_by_of_an_unbounded_stream_updates_as_records_arrive(spark):
    env = make_env("local", micro_batch_size=4)
    t_env = StreamTableEnvironment.create(env)
    numbers = env.from_source(DataGeneratorSource(lambda i: (i % 2, i), count=None,
                                                  type_info=Types.TUPLE([Types.LONG()] * 2)),
                              WatermarkStrategy.no_watermarks(), "numbers")
    table = t_env.from_data_stream(numbers).alias('k', 'v')
    sums = table.group_by(col('k')).select(col('k'), col('v').sum.alias('s'))
    rows = t_env.to_changelog_stream(sums).execute_and_collect(limit=7)
    assert ['%s%s' % (r.get_row_kind(), list(r)) for r in rows] == [
        '+I[0, 0]', '+I[1, 1]', '-U[0, 0]', '+U[0, 2]', '-U[1, 1]', '+U[1, 4]', '-U[0, 2]']


class Slow(MapFunction):
    def map(self, value):
        time.sleep(0.002)
        return value


def _changelog_line(row) -> str:
    return '%s[%s,%s]' % (row.get_row_kind(), row[0], row[1])


def _savepointed_job(env, out):
    t_env = StreamTableEnvironment.create(env)
    events = env.from_collection(SAVEPOINT_EVENTS, Types.TUPLE([Types.STRING(), Types.INT()]))
    slow = events.uid("events").map(Slow(), events.get_type()).set_parallelism(1).uid("slow")
    table = t_env.from_data_stream(slow).alias('k', 'v')
    totals = table.group_by(col('k')).select(col('k'), col('v').sum.alias('s'))
    (t_env.to_changelog_stream(totals).map(_changelog_line, Types.STRING())
        .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder())
                 .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner()).build()))


SAVEPOINT_EVENTS = [("k%d" % (i % 3), i) for i in range(120)]


def test_a_group_by_stopped_with_a_savepoint_resumes_its_groups(tmp_path):
    conf = {"state.savepoints.dir": str(tmp_path / "savepoints")}
    env = make_env("local", parallelism=2, micro_batch_size=10, **conf)
    out = tmp_path / "out"
    _savepointed_job(env, out)
    client = env.execute_async("totals")
    path = client.stop_with_savepoint(False).result(timeout=60)
    client.get_job_execution_result().result(timeout=60)
    first = finished_lines(out)
    assert first and len(first) < 2 * len(SAVEPOINT_EVENTS) - 3  # stopped early
    env = make_env("local", parallelism=1, micro_batch_size=10,
                   **{"execution.savepoint.path": path}, **conf)
    _savepointed_job(env, out)
    env.execute("totals")
    expected, totals = [], {}
    for key, value in SAVEPOINT_EVENTS:
        if key in totals:
            expected += [f"-U[{key},{totals[key]}]", f"+U[{key},{totals[key] + value}]"]
        else:
            expected.append(f"+I[{key},{value}]")
        totals[key] = totals.get(key, 0) + value
    assert Counter(finished_lines(out)) == Counter(expected)
