"""The program of test_sql_types.py: run with argument "pyflink" (PyFlink 2.3.0) or "api"
(this project); the same code after the imports. The types Flink gives SQL and Table API
expressions (integer division, CASE of string literals, literals, COALESCE, DECIMAL
division) in a projection, a GROUP BY and a window aggregate in STREAMING mode, and in a
BATCH query: print_schema() and the tableau of their rows."""
import sys

if sys.argv[1] == "pyflink":
    from pyflink.common.typeinfo import Types
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.table import DataTypes, EnvironmentSettings, Schema, StreamTableEnvironment
    from pyflink.table.expressions import col, if_then_else
else:
    from api.common.typeinfo import Types
    from api.datastream import StreamExecutionEnvironment
    from api.table import DataTypes, EnvironmentSettings, Schema, StreamTableEnvironment
    from api.table.expressions import col, if_then_else

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
t_env = StreamTableEnvironment.create(env)
EVENTS = [("a", 1, "2024-01-01 00:00:01"), ("b", 5, "2024-01-01 00:00:03"),
          ("a", 3, "2024-01-01 00:00:04"), ("a", -3, "2024-01-01 00:00:09"),
          ("b", 2, "2024-01-01 00:00:12"), (None, 3, "2024-01-01 00:00:13"),
          ("b", 7, "2024-01-01 00:00:21"), ("a", 6, "2024-01-01 00:00:35")]
events = env.from_collection(EVENTS, type_info=Types.ROW_NAMED(
    ['k', 'v', 't'], [Types.STRING(), Types.INT(), Types.STRING()]))
schema = Schema.new_builder() \
    .column('k', DataTypes.STRING()).column('v', DataTypes.INT()) \
    .column('t', DataTypes.STRING()) \
    .column_by_expression('ts', "CAST(t AS TIMESTAMP(3))") \
    .watermark('ts', "ts - INTERVAL '1' SECOND").build()
t_env.create_temporary_view('events', events, schema)


def show(title, table):
    print(title)
    table.print_schema()
    table.execute().print()


def query(sql, environment=t_env):
    show(sql, environment.sql_query(sql))


query("SELECT k, v / 2 AS h, v % 3 AS m, CASE WHEN v > 3 THEN 'big' ELSE 'small' END AS size, "
      "CASE WHEN v > 3 THEN 'big' END AS s2, "
      "CASE v WHEN 1 THEN 'one' WHEN 3 THEN 'three' ELSE 'many' END AS s3, 'x' AS c, "
      "v / 2.0 AS f, COALESCE(k, 'none') AS c2, k || 'x' AS c3 FROM events")
query("SELECT k, SUM(v) / 2 AS h, CASE WHEN SUM(v) > 3 THEN 'big' ELSE 'small' END AS size "
      "FROM events GROUP BY k")
query("SELECT window_start, SUM(v) / 2 AS h, "
      "CASE WHEN COUNT(*) > 1 THEN 'many' ELSE 'one' END AS c "
      "FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
      "GROUP BY window_start, window_end")
show("Table API", t_env.from_path('events').select(
    col('k'), (col('v') / 2).alias('h'),
    if_then_else(col('v') > 3, 'big', 'small').alias('size')))
batch = StreamTableEnvironment.create(
    env, environment_settings=EnvironmentSettings.in_batch_mode())
batch.create_temporary_view('b', batch.from_elements([(1, 'a'), (7, 'b'), (-7, 'c')],
                                                   ['v', 'k']))
query("SELECT v / 2 AS h, CASE WHEN v > 3 THEN 'big' ELSE 'small' END AS size, 'x' AS c "
      "FROM b", batch)
