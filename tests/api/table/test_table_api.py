"""The Table API (expressions, relational methods, functions, from_elements,
TableResult.print) against PyFlink 2.3.0: ``table_api_job.py`` prints what PyFlink printed;
and what is refused."""
import os

import pytest

from api.common.typeinfo import Types
from api.table import DataTypes, EnvironmentSettings, StreamTableEnvironment
from api.table.expressions import call, col
from api.table.udf import ScalarFunction, udf
from api.util.exceptions import TableException
from tests.api.table.oracle import run_job
from tests.conftest import make_env

JOB = os.path.join(os.path.dirname(__file__), "table_api_job.py")

PYFLINK_2_3_0_OUTPUT = """\
== select stream
(
  `id` INT,
  `up` STRING,
  `v2` BIGINT,
  `_c3` INT
)
+----+-------------+--------------------------------+----------------------+-------------+
| op |          id |                             up |                   v2 |         _c3 |
+----+-------------+--------------------------------+----------------------+-------------+
| +I |           1 |                             HI |                   21 |           2 |
| +I |           2 |                          HELLO |                   41 |           5 |
| +I |           3 |                    HELLO WORLD |                   61 |          11 |
| +I |           4 |                         <NULL> |                   11 |      <NULL> |
+----+-------------+--------------------------------+----------------------+-------------+
4 rows in set
== where
+----+-------------+--------------------------------+----------------------+
| op |          id |                           word |                    v |
+----+-------------+--------------------------------+----------------------+
| +I |           2 |                          Hello |                   20 |
| +I |           3 |                    Hello world |                   30 |
+----+-------------+--------------------------------+----------------------+
2 rows in set
== empty
Empty set
== collect
<Row(1, 'Hi')> +I
<Row(2, 'Hello')> +I
<Row(3, 'Hello world')> +I
<Row(4, None)> +I
== select batch
(
  `id` INT,
  `up` STRING,
  `v2` BIGINT,
  `_c3` INT
)
+-------------+--------------------------------+----------------------+-------------+
|          id |                             up |                   v2 |         _c3 |
+-------------+--------------------------------+----------------------+-------------+
|           1 |                             HI |                   21 |           2 |
|           2 |                          HELLO |                   41 |           5 |
|           3 |                    HELLO WORLD |                   61 |          11 |
|           4 |                         <NULL> |                   11 |      <NULL> |
+-------------+--------------------------------+----------------------+-------------+
4 rows in set
== where
+-------------+--------------------------------+----------------------+
|          id |                           word |                    v |
+-------------+--------------------------------+----------------------+
|           2 |                          Hello |                   20 |
|           3 |                    Hello world |                   30 |
+-------------+--------------------------------+----------------------+
2 rows in set
== empty
Empty set
== collect
<Row(1, 'Hi')> +I
<Row(2, 'Hello')> +I
<Row(3, 'Hello world')> +I
<Row(4, None)> +I
== group
(
  `k` INT,
  `s` BIGINT,
  `c` BIGINT NOT NULL,
  `EXPR$2` BIGINT,
  `EXPR$3` BIGINT,
  `EXPR$4` BIGINT
)
+-------------+----------------------+----------------------+----------------------+----------------------+----------------------+
|           k |                    s |                    c |               EXPR$2 |               EXPR$3 |               EXPR$4 |
+-------------+----------------------+----------------------+----------------------+----------------------+----------------------+
|           0 |                   25 |                    2 |                   12 |                   20 |                    5 |
|           1 |                   40 |                    2 |                   20 |                   30 |                   10 |
+-------------+----------------------+----------------------+----------------------+----------------------+----------------------+
2 rows in set
+--------------------------------+
|                           word |
+--------------------------------+
|                         <NULL> |
|                             Hi |
|                    Hello world |
|                          Hello |
+--------------------------------+
4 rows in set
+-------------+--------------------------------+----------------------+
|          id |                           word |                    v |
+-------------+--------------------------------+----------------------+
|           2 |                          Hello |                   20 |
|           3 |                    Hello world |                   30 |
|           1 |                             Hi |                   10 |
|           4 |                         <NULL> |                    5 |
+-------------+--------------------------------+----------------------+
4 rows in set
+-------------+--------------------------------+----------------------+
|          id |                           word |                    v |
+-------------+--------------------------------+----------------------+
|           4 |                         <NULL> |                    5 |
|           1 |                             Hi |                   10 |
+-------------+--------------------------------+----------------------+
2 rows in set
+-------------+--------------------------------+----------------------+
|          id |                           word |                    v |
+-------------+--------------------------------+----------------------+
|           1 |                             Hi |                   10 |
|           2 |                          Hello |                   20 |
+-------------+--------------------------------+----------------------+
2 rows in set
== expressions
+--------------------------------+----------------------+-------------+-------------+--------------------------------+--------------------------------+--------+--------+--------------------------------+--------------------------------+--------+--------+--------------------------------+--------------------------------+-------------+--------------------------------+--------------------------------+--------------------------------+--------+--------------+--------------------------------+-------------+
|                              d |                  div |        idiv |           m |                             dv |                             dd |      n |      b |                              s |                              c |     eq |  logic |                           _c12 |                              l |         neg |                             vs |                            big |                             pt |      t |          dec |                             fl |        sqlx |
+--------------------------------+----------------------+-------------+-------------+--------------------------------+--------------------------------+--------+--------+--------------------------------+--------------------------------+--------+--------+--------------------------------+--------------------------------+-------------+--------------------------------+--------------------------------+--------------------------------+--------+--------------+--------------------------------+-------------+
|                            1.5 |                    3 |           0 |           1 |                           10.0 |             3.3333333333333335 |  FALSE |   TRUE |                          small |                           Hi!x |  FALSE |   TRUE |                             hi |                            abc |          -1 |                             10 |                         1.0E20 |            0.30000000000000004 |   TRUE |        10.00 |                           10.0 |         101 |
|                            1.5 |                    6 |           1 |           2 |                           20.0 |              6.666666666666667 |  FALSE |   TRUE |                            big |                        Hello!x |   TRUE |   TRUE |                          hello |                            abc |          -2 |                             20 |                         1.0E20 |            0.30000000000000004 |   TRUE |        20.00 |                           20.0 |         102 |
|                            1.5 |                   10 |           1 |           0 |                           30.0 |                           10.0 |  FALSE |  FALSE |                            big |                  Hello world!x |  FALSE |   TRUE |                    hello world |                            abc |          -3 |                             30 |                         1.0E20 |            0.30000000000000004 |   TRUE |        30.00 |                           30.0 |         103 |
|                            1.5 |                    1 |           2 |           2 |                            5.0 |             1.6666666666666667 |   TRUE |  FALSE |                          small |                         <NULL> |  FALSE |   TRUE |                         <NULL> |                            abc |          -4 |                              5 |                         1.0E20 |            0.30000000000000004 |   TRUE |         5.00 |                            5.0 |         104 |
+--------------------------------+----------------------+-------------+-------------+--------------------------------+--------------------------------+--------+--------+--------------------------------+--------------------------------+--------+--------+--------------------------------+--------------------------------+-------------+--------------------------------+--------------------------------+--------------------------------+--------+--------------+--------------------------------+-------------+
4 rows in set
== types
(
  `d` DOUBLE,
  `b` BOOLEAN,
  `day` DATE,
  `ts` TIMESTAMP(9),
  `dec` DECIMAL(38, 18),
  `longs` STRING,
  `cjk` STRING
)
+--------------------------------+--------+------------+-------------------------------+------------------------------------------+--------------------------------+--------------------------------+
|                              d |      b |        day |                            ts |                                      dec |                          longs |                            cjk |
+--------------------------------+--------+------------+-------------------------------+------------------------------------------+--------------------------------+--------------------------------+
|                           1.25 |   TRUE | 2024-01-02 | 2024-01-02 03:04:05.120000000 |                     1.500000000000000000 | aaaaaaaaaaaaaaaaaaaaaaaaaaa... |                         中文字 |
+--------------------------------+--------+------------+-------------------------------+------------------------------------------+--------------------------------+--------------------------------+
1 row in set
+-------------------------+--------------------------------+--------------------------------------------------+
|                     ts3 |                              f | a_very_long_column_name_longer_than_thirty_chars |
+-------------------------+--------------------------------+--------------------------------------------------+
| 2024-01-02 03:04:05.120 |                           1.25 |         aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa |
+-------------------------+--------------------------------+--------------------------------------------------+
1 row in set
== table operations
(
  `a` INT,
  `b` STRING,
  `c` BIGINT
)
(
  `id` INT,
  `w` STRING,
  `v` BIGINT
)
(
  `id` INT,
  `v` BIGINT
)
+-------------+--------------------------------+----------------------+-------------+
|          id |                           word |                    v |           z |
+-------------+--------------------------------+----------------------+-------------+
|           1 |                             Hi |                   11 |           7 |
|           2 |                          Hello |                   21 |           7 |
|           3 |                    Hello world |                   31 |           7 |
|           4 |                         <NULL> |                    6 |           7 |
+-------------+--------------------------------+----------------------+-------------+
4 rows in set
(
  `id` INT,
  `word` STRING,
  `v` BIGINT,
  `_c3` BIGINT
)
+-------------+--------------------------------+
|          id |                           name |
+-------------+--------------------------------+
|           1 |                              x |
|           3 |                              y |
+-------------+--------------------------------+
2 rows in set
+-------------+--------------------------------+
|          id |                           name |
+-------------+--------------------------------+
|           1 |                              x |
|           2 |                         <NULL> |
|           3 |                              y |
|           4 |                         <NULL> |
+-------------+--------------------------------+
4 rows in set
+-------------+
|          id |
+-------------+
|           1 |
|           2 |
|           3 |
|           4 |
|           1 |
|           3 |
|           5 |
+-------------+
7 rows in set
== functions
+----------------------+----------------------+
|                    p |                  _c1 |
+----------------------+----------------------+
|                   11 |                    2 |
|                   21 |                    3 |
|                   31 |                    4 |
|                    6 |                    5 |
+----------------------+----------------------+
4 rows in set
+----------------------+
|                    q |
+----------------------+
|                   31 |
|                    6 |
+----------------------+
2 rows in set
== from_elements
(
  `id` BIGINT,
  `data` STRING
)
+----------------------+--------------------------------+
|                   id |                           data |
+----------------------+--------------------------------+
|                    1 |                             Hi |
|                    2 |                          Hello |
+----------------------+--------------------------------+
2 rows in set
(
  `_1` BIGINT,
  `_2` STRING,
  `_3` DOUBLE,
  `_4` BOOLEAN,
  `_5` DECIMAL(38, 18),
  `_6` DATE,
  `_7` TIMESTAMP_LTZ(6),
  `_8` ARRAY<BIGINT>,
  `_9` MAP<STRING NOT NULL, BIGINT>
)
(
  `a` INT,
  `b` STRING
)
(
  `a` BIGINT,
  `b` STRING
)
+----------------------+--------------------------------+
|                    x |                              y |
+----------------------+--------------------------------+
|                    1 |                         <NULL> |
|               <NULL> |                              b |
+----------------------+--------------------------------+
2 rows in set
+--------------------------------+----------------------+
|                           word |                count |
+--------------------------------+----------------------+
|                          flink |                    2 |
|                          spark |                    1 |
+--------------------------------+----------------------+
2 rows in set
"""


def test_the_table_api_prints_what_pyflink_prints(spark, capsys, monkeypatch):
    assert run_job(JOB, capsys, monkeypatch) == PYFLINK_2_3_0_OUTPUT


def _table(streaming: bool):
    env = make_env("local")
    settings = EnvironmentSettings.in_streaming_mode() if streaming else \
        EnvironmentSettings.in_batch_mode()
    t_env = StreamTableEnvironment.create(env, environment_settings=settings)
    rows = env.from_collection([(1, 'a'), (2, 'b'), (3, 'a')], type_info=Types.ROW_NAMED(
        ['id', 'word'], [Types.INT(), Types.STRING()]))
    return t_env, t_env.from_data_stream(rows)


def test_updating_results_other_than_group_by_aggregates_are_refused_in_streaming_mode(spark):
    t_env, table = _table(streaming=True)
    grouped = table.group_by(col('word')).select(col('word'), col('id').count.alias('n'))
    with grouped.execute().collect() as rows:  # a changelog: api/table/changelog.py
        changes = [(r.get_row_kind(), r[0]) for r in rows]
        assert len(changes) == 4
    with grouped.select(col('word')).execute().collect() as rows:  # each change projected
        assert sorted([(r.get_row_kind(), r[0]) for r in rows], key=str) == \
            sorted(changes, key=str)
    refused = [table.group_by(col('word')).select(col('word'), (col('id').sum + 1).alias('n')),
               table.select(col('word')).distinct()]
    for updating in refused:
        with pytest.raises(NotImplementedError, match=r"changelog.*-U/\+U.*in_batch_mode"):
            updating.execute()
    t_env.create_temporary_view("words", table)
    # SQL GROUP BYs with WHERE and HAVING are changelogs too (api/table/stream_sql.py)
    counts = t_env.sql_query("SELECT word, COUNT(*) AS n FROM words WHERE id > 1 "
                             "GROUP BY word HAVING COUNT(*) > 1")
    with pytest.raises(TableException, match="doesn't support consuming update changes"):
        t_env.to_data_stream(counts)
    with t_env.to_retract_stream(counts, Types.ROW([Types.STRING(), Types.LONG()])) \
            .execute_and_collect() as messages:
        assert all(isinstance(m[0], bool) for m in messages)
    with pytest.raises(TableException, match=r"anonymous_datastream_sink\$\d+\*' doesn't "
                       r"support consuming update changes .* GroupAggregate\(groupBy=\[word\], "
                       r"select=\[word, COUNT\(id\) AS EXPR\$0\]\)"):
        t_env.to_data_stream(grouped)
    t_env.execute_sql("CREATE TABLE out (word STRING, n BIGINT) WITH ('connector' = "
                      "'filesystem', 'path' = '/nonexistent', 'format' = 'csv')")
    with pytest.raises(TableException, match=r"Table sink 'default_catalog.default_database"
                       r".out' doesn't support consuming update changes .* GroupAggregate"):
        grouped.execute_insert("out")  # (a print sink takes the changelog: +I, -U, +U)
    with pytest.raises(NotImplementedError, match="Sort on a non-time-attribute field"):
        table.order_by(col('id'))
    # appending queries run: projections, filters, inner joins, union all
    with table.where(col('id') > 1).union_all(table).execute().collect() as rows:
        assert len(list(rows)) == 5


def test_columns_are_expressions_and_names_are_checked(spark):
    _, table = _table(streaming=False)
    assert str(table.id + 1) == 'plus(id, 1)'
    with pytest.raises(AttributeError, match=r"no column named 'nope', available columns: "
                                             r"\[id, word\]"):
        table.nope
    with pytest.raises(ValueError, match=r"both tables have columns named \['id', 'word'\]"):
        table.join(table, col('id') == col('id'))
    with pytest.raises(ValueError, match="already"):
        table.add_columns(col('id').alias('word'))
    with pytest.raises(ValueError, match=r"no column\(s\) \['x'\]"):
        table.drop_columns(col('x'))
    with pytest.raises(NotImplementedError, match=r"Table.over_window\(\) is not available"):
        table.over_window()
    # strings are SQL expressions (PyFlink 2.3 takes only Expressions)
    with table.select("id * 10 AS ten").execute().collect() as rows:
        assert [r[0] for r in rows] == [10, 20, 30]


class Scaled(ScalarFunction):
    """A ScalarFunction with state set up in open()."""

    def open(self, function_context):
        self.factor = 3

    def eval(self, value):
        return value * self.factor


def test_python_functions_of_every_form(spark):
    t_env, table = _table(streaming=False)
    scaled = udf(Scaled(), result_type=DataTypes.INT())
    t_env.create_temporary_system_function("scaled", scaled)
    shout = udf(lambda s: s.upper() + '!', result_type=DataTypes.STRING(), deterministic=False)
    result = table.select(call('scaled', col('id')).alias('s'), shout(col('word')).alias('w'))
    assert [str(t) for t in result.get_schema().get_field_data_types()] == ['INT', 'STRING']
    with result.execute().collect() as rows:
        assert [tuple(r) for r in rows] == [(3, 'A!'), (6, 'B!'), (9, 'A!')]
    assert t_env.drop_temporary_function("scaled") and \
        not t_env.drop_temporary_function("scaled")
    with pytest.raises(NotImplementedError, match="only 'general'"):
        udf(lambda x: x, result_type=DataTypes.INT(), func_type='pandas')
    with pytest.raises(TypeError, match="made by udf"):
        t_env.create_temporary_function("f", lambda x: x)
