"""The program of test_changelog.py: run with argument "pyflink" (PyFlink 2.3.0) or
"api" (this project); the same code after the imports."""
import sys
prefix = sys.argv[1]
if prefix == "pyflink":
    from pyflink.common import Types
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.table import StreamTableEnvironment
    from pyflink.table.expressions import col
else:
    from api.common import Types
    from api.datastream import StreamExecutionEnvironment
    from api.table import StreamTableEnvironment
    from api.table.expressions import col
env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
t_env = StreamTableEnvironment.create(env)
ds = env.from_collection([("a", 1), ("b", 5), ("a", 3), ("a", 3), ("b", 2), ("a", -1)],
                         type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
table = t_env.from_data_stream(ds).alias("k", "v")
totals = table.group_by(col("k")).select(
    col("k"), col("v").sum.alias("s"), col("v").count.alias("c"), col("v").min.alias("lo"),
    col("v").max.alias("hi"), col("v").avg.alias("mean"))
totals.print_schema()
t_env.to_changelog_stream(totals).print()
env.execute("changelog")
highest = table.group_by(col("k")).select(col("k"), col("v").max.alias("hi"))
t_env.to_retract_stream(highest, Types.TUPLE([Types.STRING(), Types.INT()])).print()
env.execute("retract")
try:
    t_env.to_append_stream(highest, Types.TUPLE([Types.STRING(), Types.INT()]))
except Exception as e:
    print(type(e).__name__, str(e).split("\n")[0][:200])
totals.execute().print()
print([(str(r.get_row_kind()), str(r)) for r in highest.execute().collect()])
t_env.create_temporary_view("v", table)
t_env.sql_query("SELECT k, COUNT(*) AS n, SUM(v) AS s FROM v GROUP BY k").execute().print()
distinct = table.group_by(col("k")).select(col("k"), col("v").count.distinct.alias("d"))
distinct.execute().print()
nullable = env.from_collection([("a", 1), ("b", None), ("a", None), ("b", 2)],
                               type_info=Types.ROW([Types.STRING(), Types.INT()]))
t_env.create_temporary_view("n", t_env.from_data_stream(nullable).alias("k", "v"))
with_nulls = t_env.sql_query("SELECT k, COUNT(*), SUM(v), AVG(v) AS m, COUNT(v) FROM n GROUP BY k")
with_nulls.print_schema()
with_nulls.execute().print()
doubles = env.from_collection([("a", 1.5), ("a", 2.0), ("b", -1.0)],
                              type_info=Types.TUPLE([Types.STRING(), Types.DOUBLE()]))
t_env.from_data_stream(doubles).alias("k", "x").group_by(col("k")).select(
    col("k"), col("x").avg.alias("m"), col("x").sum.alias("s")).execute().print()
