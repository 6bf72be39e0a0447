"""The program of test_group_windows.py: run with argument "pyflink" (PyFlink 2.3.0) or "api"
(this project); the same code after the imports. Group windows of the Table API in
STREAMING mode (Tumble, Slide, Session; window properties, keys, DISTINCT aggregates,
expressions of aggregates, a filter before the window): their schema and rows."""
import sys

if sys.argv[1] == "pyflink":
    from pyflink.common.typeinfo import Types
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.table import DataTypes, Schema, StreamTableEnvironment
    from pyflink.table.expressions import col, lit
    from pyflink.table.window import Session, Slide, Tumble
else:
    from api.common.typeinfo import Types
    from api.datastream import StreamExecutionEnvironment
    from api.table import DataTypes, Schema, StreamTableEnvironment
    from api.table.expressions import col, lit
    from api.table.window import Session, Slide, Tumble

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
t_env = StreamTableEnvironment.create(env)
EVENTS = [("a", 1, "2024-01-01 00:00:01"), ("b", 5, "2024-01-01 00:00:03"),
          ("a", 3, "2024-01-01 00:00:04"), ("a", -2, "2024-01-01 00:00:09"),
          ("b", 2, "2024-01-01 00:00:12"), ("a", 3, "2024-01-01 00:00:13"),
          ("b", 7, "2024-01-01 00:00:21"), ("a", 6, "2024-01-01 00:00:35")]
events = env.from_collection(EVENTS, type_info=Types.ROW_NAMED(
    ['k', 'v', 't'], [Types.STRING(), Types.INT(), Types.STRING()]))
schema = Schema.new_builder() \
    .column('k', DataTypes.STRING()).column('v', DataTypes.INT()) \
    .column('t', DataTypes.STRING()) \
    .column_by_expression('ts', "CAST(t AS TIMESTAMP(3))") \
    .watermark('ts', "ts - INTERVAL '1' SECOND").build()
table = t_env.from_data_stream(events, schema)


def show(title, result):
    print(title)
    result.print_schema()
    result.execute().print()


show("tumble", table.window(Tumble.over(lit(10).seconds).on(col('ts')).alias('w'))
     .group_by(col('w'), col('k')).select(col('k'), col('w').start, col('v').sum))
show("tumble, properties", table.window(Tumble.over(lit(10).seconds).on(col('ts')).alias('w'))
     .group_by(col('w'))
     .select(col('w').start.alias('s'), col('w').end.alias('e'), col('w').rowtime,
             col('v').count.alias('n'), col('v').max, col('k').count.distinct.alias('dk')))
show("slide", table.window(Slide.over(lit(10).seconds).every(lit(5).seconds).on(col('ts'))
                           .alias('w'))
     .group_by(col('k'), col('w'))
     .select(col('k'), col('w').end, col('v').sum.alias('s'), (col('v').sum + 1).alias('s1')))
show("session", table.window(Session.with_gap(lit(5).seconds).on(col('ts')).alias('w'))
     .group_by(col('w'), col('k')).select(col('k'), col('w').start, col('w').end, col('v').min))
show("session without keys", table.window(Session.with_gap(lit(3).seconds).on(col('ts'))
                                          .alias('w'))
     .group_by(col('w')).select(col('w').start, col('v').avg))
show("tumble, minutes", table.window(Tumble.over(lit(1).minutes).on(col('ts')).alias('w'))
     .group_by(col('w')).select(col('w').start, col('w').end, col('v').sum))
show("filtered", table.where(col('v') > 0)
     .window(Tumble.over(lit(10).seconds).on(col('ts')).alias('w'))
     .group_by(col('w'), col('k')).select(col('k'), col('w').start, col('v').sum.alias('total')))
