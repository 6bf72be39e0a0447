"""Schema: its declarations printed as PyFlink prints them, and ``from_data_stream(ds,
schema)`` against PyFlink 2.3.0 (``schema_job.py``: computed and rowtime metadata columns,
watermarks, the resolved schema, views)."""
import os

import pytest

from api.common.typeinfo import Types
from api.table import DataTypes, Schema, StreamTableEnvironment
from api.table.expressions import col
from tests.api.table.oracle import run_job
from tests.conftest import make_env

JOB = os.path.join(os.path.dirname(__file__), "schema_job.py")

PYFLINK_2_3_0_OUTPUT = """\
TO_TIMESTAMP_LTZ(ms, 3)
(
  `id` INT,
  `word` STRING,
  `ms` BIGINT,
  `ts` AS TO_TIMESTAMP_LTZ(ms, 3),
  `twice` AS times(ms, 2),
  WATERMARK FOR `ts` AS [ts - INTERVAL '5' SECOND]
)
(
  `id` INT,
  `word` STRING,
  `ms` BIGINT,
  `ts` TIMESTAMP_LTZ(3) *ROWTIME* AS TO_TIMESTAMP_LTZ(ms, 3),
  `twice` BIGINT AS times(ms, 2),
  WATERMARK FOR `ts`: TIMESTAMP_LTZ(3) AS ts - INTERVAL '5' SECOND
)
+----+-------------+--------------------------------+----------------------+-------------------------+----------------------+
| op |          id |                           word |                   ms |                      ts |                twice |
+----+-------------+--------------------------------+----------------------+-------------------------+----------------------+
| +I |           1 |                             Hi |                 1000 | 1970-01-01 00:00:01.000 |                 2000 |
| +I |           2 |                          Hello |                 2500 | 1970-01-01 00:00:02.500 |                 5000 |
+----+-------------+--------------------------------+----------------------+-------------------------+----------------------+
2 rows in set
(
  `id` INT,
  `ms` BIGINT,
  `ts` AS TO_TIMESTAMP_LTZ(ms, 3),
  `next_id` AS [id + 1],
  WATERMARK FOR `ts` AS [ts - INTERVAL '1' SECOND]
)
(
  `id` INT,
  `ms` BIGINT,
  `ts` TIMESTAMP_LTZ(3) *ROWTIME*,
  `next_id` INT
)
+----+-------------+----------------------+-------------------------+-------------+
| op |          id |                   ms |                      ts |     next_id |
+----+-------------+----------------------+-------------------------+-------------+
| +I |           1 |                 1000 | 1970-01-01 00:00:01.000 |           2 |
| +I |           2 |                 2500 | 1970-01-01 00:00:02.500 |           3 |
+----+-------------+----------------------+-------------------------+-------------+
2 rows in set
(
  `ts` TIMESTAMP_LTZ(3) *ROWTIME*,
  `next_id` INT
)
(
  `id` INT,
  `word` STRING,
  `ms` BIGINT,
  `up` STRING AS upper(word)
)
+----+--------------------------------+-------------+
| op |                             up |          id |
+----+--------------------------------+-------------+
| +I |                             HI |           1 |
| +I |                          HELLO |           2 |
+----+--------------------------------+-------------+
2 rows in set
(
  `a` INT NOT NULL,
  `off` BIGINT METADATA FROM 'offset' VIRTUAL,
  `part` INT METADATA,
  CONSTRAINT `PK_a` PRIMARY KEY (`a`) NOT ENFORCED
)
Invalid column name 'ts' for rowtime attribute in watermark declaration. Available columns are: [id, word, ms]
(
  `rowtime` [TIMESTAMP_LTZ(3)] METADATA,
  WATERMARK FOR `rowtime` AS [SOURCE_WATERMARK()]
)
(
  `id` INT,
  `word` STRING,
  `ms` BIGINT,
  `rowtime` TIMESTAMP_LTZ(3) *ROWTIME* METADATA,
  WATERMARK FOR `rowtime`: TIMESTAMP_LTZ(3) AS SOURCE_WATERMARK()
)
+----+-------------+--------------------------------+----------------------+-------------------------+
| op |          id |                           word |                   ms |                 rowtime |
+----+-------------+--------------------------------+----------------------+-------------------------+
| +I |           1 |                             Hi |                 1000 | 1970-01-01 00:00:01.000 |
| +I |           2 |                          Hello |                 2500 | 1970-01-01 00:00:02.500 |
+----+-------------+--------------------------------+----------------------+-------------------------+
2 rows in set
(
  `a` [INT NOT NULL],
  `t` [TIMESTAMP_LTZ(3)] METADATA FROM 'rowtime' VIRTUAL
)
Could not find timestamp in DataStream API record. Make sure that timestamps have been assigned before and the event-time characteristic is enabled.
"""


def test_from_data_stream_with_a_schema_prints_what_pyflink_prints(spark, capsys,
                                                                    monkeypatch):
    assert run_job(JOB, capsys, monkeypatch) == PYFLINK_2_3_0_OUTPUT


def test_a_schema_is_checked_as_it_is_built():
    builder = Schema.new_builder().primary_key('a')
    with pytest.raises(ValueError, match="Multiple primary keys"):
        builder.primary_key('b')
    with pytest.raises(TypeError, match="made by the Table API's DataTypes"):
        Schema.new_builder().column('a', Types.INT())
    assert str(Schema.new_builder().build()) == '()'
    copied = Schema.new_builder().from_schema(
        Schema.new_builder().column('a', DataTypes.INT()).build()).build()
    assert str(copied) == '(\n  `a` INT\n)'


def test_what_a_stream_cannot_give_a_schema_fails_naming_it(spark):
    env = make_env("local")
    t_env = StreamTableEnvironment.create(env)
    ds = env.from_collection([(1, 'a')], type_info=Types.ROW_NAMED(
        ['id', 'word'], [Types.INT(), Types.STRING()]))
    with pytest.raises(ValueError, match="Invalid metadata key 'offset'.*'rowtime'"):
        t_env.from_data_stream(ds, Schema.new_builder().column_by_metadata(
            'off', DataTypes.BIGINT(), 'offset').build())
    with pytest.raises(ValueError, match="must be of type TIMESTAMP"):
        t_env.from_data_stream(ds, Schema.new_builder().watermark('id', 'id').build())
    with pytest.raises(ValueError, match=r"no column\(s\) \['nope'\]"):
        t_env.from_data_stream(ds, Schema.new_builder().column('nope', DataTypes.INT())
                               .build())
    # a computed column of another column type than Flink would give is Spark's
    table = t_env.from_data_stream(ds, Schema.new_builder().column_by_expression(
        'n', col('id') + 1).build())
    assert table.get_schema().get_field_names() == ['id', 'word', 'n']
