"""What PyFlink 2.3.0 prints for queries over an upsert changelog (recorded in
``upsert_changelog_pyflink_2_3_0.txt`` for test_upsert_changelog.py): run with
``python upsert_changelog_oracle.py`` in a venv with apache-flink==2.3.0. The changelog is
``from_changelog_stream(..., ChangelogMode.upsert())``, which Flink's planner normalizes as
it does an upsert-kafka table's (ChangelogNormalize, a query's filter and columns pushed
into it); the test reads the same upserts and deletes from an upsert-kafka topic."""
from pyflink.common import Row, Types
from pyflink.common.types import RowKind
from pyflink.datastream import StreamExecutionEnvironment
from pyflink.table import DataTypes, Schema, StreamTableEnvironment
from pyflink.table.changelog_mode import ChangelogMode

from pyflink.table.expressions import col
from upsert_changelog_queries import QUERIES, UPSERTS, table_queries

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
t_env = StreamTableEnvironment.create(env)
rows = [Row(*values) if values[1:] != (None, None) else Row(values[0], None, None)
        for values in UPSERTS]
for row, values in zip(rows, UPSERTS):
    row.set_row_kind(RowKind.DELETE if values[1:] == (None, None) else RowKind.UPDATE_AFTER)
ds = env.from_collection(rows, Types.ROW_NAMED(['id', 'g', 'v'], [Types.STRING(), Types.STRING(),
                                                                 Types.INT()]))
table = t_env.from_changelog_stream(
    ds, Schema.new_builder().column('id', DataTypes.STRING().not_null())
    .column('g', DataTypes.STRING()).column('v', DataTypes.INT()).primary_key('id').build(),
    ChangelogMode.upsert())
t_env.create_temporary_view('t', table)
for query in QUERIES:
    print(query)
    t_env.sql_query(query).execute().print()
for label, query in table_queries(table, col):
    print(label)
    query.execute().print()
