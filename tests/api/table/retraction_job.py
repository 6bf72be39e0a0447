"""The program of test_retraction.py: run with argument "pyflink" (PyFlink 2.3.0) or "api"
(this project); the same code after the imports. GROUP BYs and filters over the changelog
of another GROUP BY."""
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
ds = env.from_collection([("a", 1), ("b", 5), ("a", 3), ("c", 3), ("b", 2), ("a", -1),
                          ("c", 7), ("b", 5)],
                         type_info=Types.ROW_NAMED(['g', 'v'], [Types.STRING(), Types.INT()]))
t_env.create_temporary_view('t', ds)
counts = t_env.sql_query("SELECT g, COUNT(*) AS n, MAX(v) AS m FROM t GROUP BY g")
t_env.create_temporary_view('counts', counts)
t_env.sql_query("SELECT n, COUNT(*) AS c, MIN(m) AS lo, MAX(m) AS hi, SUM(m) AS s, AVG(m) AS a, "
                "COUNT(DISTINCT m) AS d FROM counts GROUP BY n").execute().print()
t_env.sql_query("SELECT g, n * 10 AS x FROM counts WHERE m > 2").execute().print()
counts.where(col('m') < 5).group_by(col('n')).select(
    col('n'), col('m').max.alias('hi'), col('g').count.alias('c')).execute().print()
t_env.sql_query("SELECT n, COUNT(*) AS c FROM (SELECT g, COUNT(*) AS n FROM t GROUP BY g) AS s "
                "WHERE s.n < 3 GROUP BY n").execute().print()
