"""The program of test_window_sql.py: run with argument "pyflink" (PyFlink 2.3.0) or "api"
(this project); the same code after the imports. Streaming SQL over a Schema-declared view
with a watermark: GROUP BY with WHERE/HAVING, CASTs, window TVFs."""
import sys

if sys.argv[1] == "pyflink":
    from pyflink.common.typeinfo import Types
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.table import DataTypes, Schema, StreamTableEnvironment
else:
    from api.common.typeinfo import Types
    from api.datastream import StreamExecutionEnvironment
    from api.table import DataTypes, Schema, StreamTableEnvironment

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
t_env = StreamTableEnvironment.create(env)
EVENTS = [("a", 1, "2024-01-01 00:00:01"), ("b", 5, "2024-01-01 00:00:03"),
          ("a", 3, "2024-01-01 00:00:04"), ("a", -2, "2024-01-01 00:00:09"),
          ("b", 2, "2024-01-01 00:00:12"), ("a", 4, "2024-01-01 00:00:13"),
          ("b", 7, "2024-01-01 00:00:21"), ("a", 6, "2024-01-01 00:00:35")]
events = env.from_collection(EVENTS, type_info=Types.ROW_NAMED(
    ['k', 'v', 't'], [Types.STRING(), Types.INT(), Types.STRING()]))
schema = Schema.new_builder() \
    .column('k', DataTypes.STRING()).column('v', DataTypes.INT()) \
    .column('t', DataTypes.STRING()) \
    .column_by_expression('ts', "CAST(t AS TIMESTAMP(3))") \
    .watermark('ts', "ts - INTERVAL '1' SECOND").build()
t_env.create_temporary_view('events', events, schema)


def show(sql):
    print(sql)
    table = t_env.sql_query(sql)
    table.print_schema()
    table.execute().print()


show("SELECT k, SUM(v * 2) AS s, COUNT(*) AS n, MAX(v) FROM events WHERE v > 0 "
     "GROUP BY k HAVING SUM(v) > 3")
show("SELECT k, CAST(v AS DECIMAL(10, 2)) AS d, CAST(v AS VARCHAR(5)) AS s, ts, "
     "CAST(t AS TIMESTAMP(3)) AS t3 FROM events WHERE v >= 4")
show("SELECT window_start, window_end, k, SUM(v) AS s, COUNT(*) AS n "
     "FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
     "GROUP BY window_start, window_end, k")
show("SELECT k, window_start, window_end, window_time, MIN(v) AS lo "
     "FROM TABLE(HOP(TABLE events, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) "
     "GROUP BY k, window_start, window_end, window_time")
show("SELECT window_start, window_end, SUM(v) AS s "
     "FROM TABLE(CUMULATE(TABLE events, DESCRIPTOR(ts), INTERVAL '5' SECOND, "
     "INTERVAL '15' SECOND)) GROUP BY window_start, window_end")
show("SELECT window_start, window_end, k, COUNT(*) AS n, SUM(v) AS s "
     "FROM TABLE(SESSION(TABLE events PARTITION BY k, DESCRIPTOR(ts), INTERVAL '5' SECOND)) "
     "GROUP BY window_start, window_end, k")
show("SELECT * FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), INTERVAL '10' SECOND)) "
     "WHERE v > 2")
show("SELECT k, v, window_start FROM TABLE(HOP(TABLE events, DESCRIPTOR(ts), "
     "INTERVAL '10' SECOND, INTERVAL '20' SECOND)) WHERE k = 'b'")
show("SELECT window_start, window_end, k, SUM(v) AS s FROM TABLE(TUMBLE(TABLE events, "
     "DESCRIPTOR(ts), INTERVAL '10' SECOND, INTERVAL '2' SECOND)) "
     "GROUP BY window_start, window_end, k")
show("SELECT window_start, window_end, COUNT(*) AS n FROM TABLE(HOP(TABLE events, "
     "DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND, INTERVAL '7' SECOND)) "
     "GROUP BY window_start, window_end")
show("SELECT window_start, window_end, SUM(v) AS s FROM TABLE(CUMULATE(TABLE events, "
     "DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '15' SECOND, INTERVAL '4' SECOND)) "
     "GROUP BY window_start, window_end")
show("SELECT k, v, window_start, window_end FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), "
     "INTERVAL '10' SECOND, INTERVAL '-3' SECOND)) WHERE k = 'a'")
show("SELECT window_start, window_end, COUNT(DISTINCT v) AS dv, COUNT(DISTINCT k) AS dk, "
     "SUM(DISTINCT v) AS sv, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE events, DESCRIPTOR(ts), "
     "INTERVAL '10' SECOND)) GROUP BY window_start, window_end")
show("SELECT window_start, k, SUM(v) AS s, COUNT(*) AS n FROM TABLE(TUMBLE(TABLE events, "
     "DESCRIPTOR(ts), INTERVAL '10' SECOND)) WHERE v > 0 GROUP BY window_start, window_end, k")
show("SELECT window_start, window_end, COUNT(DISTINCT v) FROM TABLE(SESSION(TABLE events, "
     "DESCRIPTOR(ts), INTERVAL '5' SECOND)) WHERE v > 0 GROUP BY window_start, window_end")
