"""Tables of SQL connectors (CREATE TABLE ... WITH ('connector' = 'datagen' | 'print' |
'blackhole')) against PyFlink 2.3.0: ``sql_connectors_job.py`` runs the reference documents'
two examples unchanged, and more; and the DDL reader."""
import os
import re

import pytest

from api.table import DataTypes, EnvironmentSettings, ResultKind, TableEnvironment
from api.table.ddl import parse_create_table, parse_data_type
from tests.api.table.oracle import run_job

JOB = os.path.join(os.path.dirname(__file__), "sql_connectors_job.py")

PYFLINK_2_3_0_OUTPUT = """\
1> ('int', 100, True)
2> ('int', 100, True)
2> ('int', 100, True)
2> ('int', 100, True)
2> ('int', 100, True)
2> ('int', 100, True)
1> ('int', 100, True)
1> ('int', 100, True)
1> ('int', 100, True)
1> ('int', 100, True)
1> +I[3, b]
1> +I[3, c]
1> +I[2, a]
1> +I[5, b]
1> +I[7, c]
OK
(
  `id` BIGINT,
  `v` INT,
  `name` VARCHAR(5),
  `ts` TIMESTAMP(3) *ROWTIME*,
  WATERMARK FOR `ts`: TIMESTAMP(3) AS `ts` - INTERVAL '1' SECOND
)
out> +I[3, 7]
out> +I[4, 7]
out> +I[10, 7]
out> +I[20, 7]
out> +I[30, 7]
out> +I[40, 7]
['<Row(1, 3)>', '<Row(2, 3)>', '<Row(3, 3)>', '<Row(4, 3)>']
Connector 'print' can only be used as a sink. It cannot be used as a source.
1
+I[k, 3]
+I[k, 2]
+-------------+-------------+
|          id |         _c1 |
+-------------+-------------+
|           1 |           2 |
|           2 |           2 |
|           3 |           2 |
|           4 |           2 |
|           5 |           2 |
+-------------+-------------+
5 rows in set
Querying an unbounded table 'default_catalog.default_database.endless' in batch mode is not allowed. The table source is unbounded.
"""

_ROLLING = re.compile(r'\+I\[(\d+), ([abc])\]')


def _normalized(text: str):
    """The output without subtask prefixes (which subtask prints a row differs), and the
    sink example's rolling sums (which depend on the order records meet in the reduce) as
    their count and final sum per key."""
    lines = [re.sub(r'^\d+> ', '', line) for line in text.splitlines()]
    rolling = [_ROLLING.fullmatch(line) for line in lines]
    finals = {}
    for match in filter(None, rolling):
        finals[match.group(2)] = max(finals.get(match.group(2), 0), int(match.group(1)))
    return [line for line, m in zip(lines, rolling) if not m], len(list(filter(None, rolling))), \
        finals


def test_the_reference_examples_and_sql_connectors_print_what_pyflink_prints(
        spark, capsys, monkeypatch):
    assert _normalized(run_job(JOB, capsys, monkeypatch)) == \
        _normalized(PYFLINK_2_3_0_OUTPUT) == (_normalized(PYFLINK_2_3_0_OUTPUT)[0], 5,
                                              {'a': 2, 'b': 5, 'c': 7})


def test_create_table_is_read_into_a_schema_and_options():
    definition = parse_create_table("""
        CREATE TEMPORARY TABLE IF NOT EXISTS `my table` (
          `id` BIGINT NOT NULL COMMENT 'the key',
          price DECIMAL(10, 2),
          tags ARRAY<STRING>, attributes MAP<STRING, ROW<a INT, `b c` DOUBLE PRECISION>>,
          ts TIMESTAMP(3) WITHOUT TIME ZONE,
          at_ TIMESTAMP(6) WITH LOCAL TIME ZONE,
          off BIGINT METADATA FROM 'offset' VIRTUAL,
          total AS price * 2,
          WATERMARK FOR ts AS ts - INTERVAL '5' SECOND,
          PRIMARY KEY (id) NOT ENFORCED
        ) COMMENT 'a table' WITH ('connector' = 'print', 'print-identifier' = 'it''s')""")
    assert definition.name == 'my table' and definition.if_not_exists
    assert definition.options == {'connector': 'print', 'print-identifier': "it's"}
    assert str(definition.schema) == """(
  `id` BIGINT NOT NULL,
  `price` DECIMAL(10, 2),
  `tags` ARRAY<STRING>,
  `attributes` MAP<STRING, ROW<`a` INT, `b c` DOUBLE>>,
  `ts` TIMESTAMP(3),
  `at_` TIMESTAMP_LTZ(6),
  `off` BIGINT METADATA FROM 'offset' VIRTUAL,
  `total` AS [`price` * 2],
  WATERMARK FOR `ts` AS [`ts` - INTERVAL '5' SECOND],
  CONSTRAINT `PK_id` PRIMARY KEY (`id`) NOT ENFORCED
)"""
    assert definition.physical_columns()[0] == ('id', DataTypes.BIGINT(False))


def test_flink_types_are_read_and_the_rest_fails_naming_it():
    assert parse_data_type('VARCHAR') == DataTypes.STRING()  # no length: any length
    assert parse_data_type('char') == DataTypes.CHAR(1)
    assert parse_data_type('TIMESTAMP_LTZ(3) NOT NULL') == DataTypes.TIMESTAMP_LTZ(3, False)
    assert parse_data_type('ROW(x INT)') == DataTypes.ROW([DataTypes.FIELD('x',
                                                                          DataTypes.INT())])
    with pytest.raises(ValueError, match=r"MULTISET"):
        parse_data_type('MULTISET<INT>')
    with pytest.raises(ValueError, match="left over"):
        parse_data_type('INT INT')
    with pytest.raises(ValueError, match="needs WITH"):
        parse_create_table("CREATE TABLE t (a INT)")


def test_sql_tables_fail_as_flink_fails_or_naming_what_is_missing(spark):
    t_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
    with pytest.raises(ValueError, match=r"Unsupported options found for 'datagen'.*"
                                         r"fields.a.nope"):
        t_env.execute_sql("CREATE TABLE s (a INT) WITH ('connector' = 'datagen', "
                          "'fields.a.nope' = '1')")
    t_env.execute_sql("CREATE TABLE endless (a INT) WITH ('connector' = 'datagen')")
    with pytest.raises(ValueError, match="Querying an unbounded table"):
        t_env.execute_sql("SELECT a FROM endless")
    streaming = TableEnvironment.create(EnvironmentSettings.in_streaming_mode())
    with pytest.raises(NotImplementedError, match="unbounded.*'number-of-rows'"):
        streaming.execute_sql("CREATE TABLE s (a INT) WITH ('connector' = 'datagen')")
    with pytest.raises(ValueError, match="Could not find any factory for identifier 'nope'"):
        t_env.execute_sql("CREATE TABLE k (a INT) WITH ('connector' = 'nope')")
    t_env.execute_sql("CREATE TABLE s (a INT) WITH ('connector' = 'datagen', "
                      "'number-of-rows' = '3')")
    t_env.execute_sql("CREATE TABLE p (a INT, b INT) WITH ('connector' = 'print')")
    with pytest.raises(ValueError, match="query has 1 columns, the sink 2"):
        t_env.execute_sql("INSERT INTO p SELECT a FROM s")
    with pytest.raises(ValueError, match="'s' is not a sink table"):
        t_env.execute_sql("INSERT INTO s SELECT a FROM s")
    with pytest.raises(ValueError, match="a table of that name exists"):
        t_env.execute_sql("CREATE TABLE p (a INT) WITH ('connector' = 'blackhole')")
    assert t_env.execute_sql("DROP TABLE p").get_result_kind() == ResultKind.SUCCESS
    with pytest.raises(ValueError, match="does not exist"):
        t_env.execute_sql("DROP TABLE p")
    with t_env.execute_sql("SELECT COUNT(*) FROM s").collect() as rows:
        assert [r[0] for r in rows] == [3]
