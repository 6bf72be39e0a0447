"""The program of test_table_oracle.py: run with argument "pyflink" (PyFlink 2.3.0) or
"api" (this project); the same code after the imports."""
import sys
prefix = sys.argv[1]
if prefix == "pyflink":
    from pyflink.common import Types, Row
    from pyflink.datastream import StreamExecutionEnvironment, RuntimeExecutionMode
    from pyflink.table import StreamTableEnvironment
else:
    from api.common import Types, Row
    from api.datastream import StreamExecutionEnvironment, RuntimeExecutionMode
    from api.table import StreamTableEnvironment
env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
env.set_runtime_mode(RuntimeExecutionMode.BATCH)
t_env = StreamTableEnvironment.create(env)
ds = env.from_collection([(1, "a", 10), (2, "b", 20), (3, "a", 30)],
                         type_info=Types.TUPLE([Types.INT(), Types.STRING(), Types.LONG()]))
table = t_env.from_data_stream(ds)
table.print_schema()
print(table.get_schema())
t_env.create_temporary_view("t", table)
named = t_env.from_data_stream(env.from_collection([Row(1, "a", 10), Row(2, "b", 20), Row(3, "a", 30)], type_info=Types.ROW_NAMED(["id", "name", "v"], [Types.INT(), Types.STRING(), Types.LONG()])))
named.print_schema()
t_env.create_temporary_view("n", named)
result = t_env.sql_query("SELECT name, v FROM n WHERE id > 1")
result.print_schema()
t_env.to_data_stream(result).print()
env.execute("x")
print([str(r) for r in result.execute().collect()])
t_env.to_append_stream(result, Types.ROW([Types.STRING(), Types.LONG()])).print()
t_env.to_retract_stream(result, Types.ROW([Types.STRING(), Types.LONG()])).print()
env.execute("y")
agg = t_env.sql_query("SELECT name, COUNT(*) AS c FROM n GROUP BY name")
agg.print_schema()
print(sorted(str(r) for r in agg.execute().collect()))
