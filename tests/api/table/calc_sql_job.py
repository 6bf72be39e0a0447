"""The program of test_calc_sql.py: run with argument "pyflink" (PyFlink 2.3.0) or "api"
(this project); the same code after the imports. Projections and filters in STREAMING mode
(Flink's Calc), in SQL and in the Table API: names and types of their columns, the rowtime
attribute, their rows (+I) through execute(), to_data_stream and a print sink."""
import sys

if sys.argv[1] == "pyflink":
    from pyflink.common.typeinfo import Types
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.table import DataTypes, Schema, StreamTableEnvironment
    from pyflink.table.expressions import col, lit
else:
    from api.common.typeinfo import Types
    from api.datastream import StreamExecutionEnvironment
    from api.table import DataTypes, Schema, StreamTableEnvironment
    from api.table.expressions import col, lit

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
t_env = StreamTableEnvironment.create(env)
EVENTS = [("ann", 1, "2024-01-01 00:00:01"), ("bob", -5, "2024-01-01 00:00:03"),
          ("cy", 3, "2024-01-01 00:00:04"), (None, 0, "2024-01-01 00:00:09"),
          ("bob", 12, "2024-01-01 00:00:12"), ("ann", 4, "2024-01-01 00:00:13")]
events = env.from_collection(EVENTS, type_info=Types.ROW_NAMED(
    ['name', 'v', 't'], [Types.STRING(), Types.INT(), Types.STRING()]))
schema = Schema.new_builder() \
    .column('name', DataTypes.STRING()).column('v', DataTypes.INT()) \
    .column('t', DataTypes.STRING()) \
    .column_by_expression('ts', "CAST(t AS TIMESTAMP(3))") \
    .watermark('ts', "ts - INTERVAL '1' SECOND").build()
t_env.create_temporary_view('events', events, schema)


def show(table, title):
    print(title)
    table.print_schema()
    table.execute().print()


def query(sql):
    show(t_env.sql_query(sql), sql)


query("SELECT UPPER(name), v * 2 FROM events WHERE v > 0")
query("SELECT name AS who, v + 1 AS w, ts FROM events WHERE v BETWEEN 0 AND 5 OR name IS NULL")
query("SELECT CASE WHEN v > 2 THEN v ELSE 0 END AS size, COALESCE(name, '?') AS n, "
      "CAST(v AS BIGINT) AS b, v % 3 AS r, -v AS m FROM events WHERE name <> 'cy' "
      "OR name IS NULL")
query("SELECT ts, name || '!' AS shout FROM events WHERE v IN (1, 3, 12)")

table = t_env.from_path('events')
show(table.where(col('v') > 1).select(col('name'), (col('v') * 10).alias('x'), col('ts')),
     "where(v > 1).select(name, v * 10 AS x, ts)")
show(table.filter(col('name').is_not_null).add_columns((col('v') + lit(1)).alias('v1'))
     .drop_columns(col('t')).rename_columns(col('v').alias('value')),
     "filter(name IS NOT NULL).add_columns(v + 1 AS v1).drop_columns(t).rename_columns(v AS "
     "value)")

t_env.create_temporary_view('positive', t_env.sql_query(
    "SELECT name, v FROM events WHERE v > 0"))
rows = t_env.to_data_stream(t_env.sql_query("SELECT name, v * 100 AS big FROM positive "
                                            "WHERE name <> 'cy'"))
rows.map(lambda r: 'to_data_stream: %s %s' % (r.name, r.big), Types.STRING()).print()
env.execute('to_data_stream')

t_env.execute_sql("CREATE TABLE shouts (who STRING, n BIGINT) WITH ('connector' = 'print')")
t_env.execute_sql("INSERT INTO shouts SELECT UPPER(name), v * 2 FROM events WHERE v > 0") \
    .wait()
