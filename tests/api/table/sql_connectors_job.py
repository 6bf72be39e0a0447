"""The program of test_sql_connectors.py: run with argument "pyflink" (PyFlink 2.3.0) or
"api" (this project); the same code after the imports. First the reference documents'
two examples ("Create using Table & SQL connectors", "Emit results to a Table & SQL sink
connector") as they are, then more of the datagen, print and blackhole connectors."""
import sys

if sys.argv[1] == "pyflink":
    from pyflink.common import Row  # noqa: F401 (as in the example)
    from pyflink.common.typeinfo import Types
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.table import EnvironmentSettings, StreamTableEnvironment, TableEnvironment
    from pyflink.table.expressions import col, lit
else:
    from api.common import Row  # noqa: F401 (as in the example)
    from api.common.typeinfo import Types
    from api.datastream import StreamExecutionEnvironment
    from api.table import EnvironmentSettings, StreamTableEnvironment, TableEnvironment
    from api.table.expressions import col, lit

# --- Create using Table & SQL connectors ---------------------------------------------------
env = StreamExecutionEnvironment.get_execution_environment()
t_env = StreamTableEnvironment.create(stream_execution_environment=env)

t_env.execute_sql("""
        CREATE TABLE my_source (
          a INT,
          b VARCHAR
        ) WITH (
          'connector' = 'datagen',
          'number-of-rows' = '10'
        )
    """)

ds = t_env.to_append_stream(
    t_env.from_path('my_source'),
    Types.ROW([Types.INT(), Types.STRING()]))
# (random values: their types, and that strings are 100 hex digits)
ds.map(lambda r: (type(r[0]).__name__, len(r[1]), set(r[1]) <= set('0123456789abcdef'))) \
    .print()
env.execute()

# --- Emit results to a Table & SQL sink connector ------------------------------------------
ds = env.from_collection([(1, 'a|b'), (2, 'b|c'), (3, 'c')],
                         type_info=Types.TUPLE([Types.INT(), Types.STRING()]))


def split(s):
    splits = s[1].split("|")
    for sp in splits:
        yield s[0], sp


ds = ds.map(lambda i: (i[0] + 1, i[1])) \
       .flat_map(split, Types.TUPLE([Types.INT(), Types.STRING()])) \
       .key_by(lambda i: i[1]) \
       .reduce(lambda i, j: (i[0] + j[0], i[1]))

t_env.execute_sql("""
        CREATE TABLE my_sink (
          a INT,
          b VARCHAR
        ) WITH (
          'connector' = 'print'
        )
    """)

table = t_env.from_data_stream(ds)
table_result = table.execute_insert("my_sink")
table_result.wait()

# --- more ----------------------------------------------------------------------------------
env.set_parallelism(1)
t_env.execute_sql("""
    CREATE TABLE numbers (
      id BIGINT,
      v INT,
      name VARCHAR(5),
      ts TIMESTAMP(3),
      WATERMARK FOR ts AS ts - INTERVAL '1' SECOND
    ) WITH (
      'connector' = 'datagen',
      'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '4',
      'fields.v.min' = '7', 'fields.v.max' = '7', 'fields.name.length' = '3'
    )""").print()
t_env.from_path('numbers').print_schema()
t_env.execute_sql("CREATE TABLE labelled (id BIGINT, v INT) "
                  "WITH ('connector' = 'print', 'print-identifier' = 'out')")
t_env.execute_sql("CREATE TABLE nowhere (id BIGINT, v INT) WITH ('connector' = 'blackhole')")
t_env.execute_sql("INSERT INTO labelled SELECT id, v FROM numbers WHERE id > 2").wait()
statements = t_env.create_statement_set()
statements.add_insert('labelled', t_env.from_path('numbers').select(col('id') * 10, col('v')))
statements.add_insert_sql("INSERT INTO nowhere SELECT id, v FROM numbers")
statements.execute().wait()
with t_env.execute_sql("SELECT id, CHAR_LENGTH(name) AS n FROM numbers").collect() as rows:
    print(sorted(str(r) for r in rows))
try:
    t_env.from_path('labelled').execute()
except Exception as e:
    message = str(e)
    print(message[message.index('Connector'):].splitlines()[0])

# --- a TableEnvironment in BATCH mode, its jobs at parallelism 1 ---------------------------
b_env = TableEnvironment.create(EnvironmentSettings.in_batch_mode())
b_env.get_config().set("parallelism.default", "1")
print(b_env.get_config().get("parallelism.default", None))
b_env.execute_sql("""CREATE TABLE src (id INT, word STRING) WITH ('connector' = 'datagen',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '5',
    'fields.word.length' = '2', 'number-of-rows' = '5')""")
b_env.execute_sql("CREATE TABLE snk (word STRING, n BIGINT) WITH ('connector' = 'print')")
src = b_env.from_path('src')
src.group_by(col('id') % 2).select(lit('k'), col('id').count).execute_insert('snk').wait()
src.select(col('id'), col('word').char_length).order_by(col('id')).execute().print()
b_env.execute_sql("""CREATE TABLE endless (id INT) WITH ('connector' = 'datagen',
    'fields.id.kind' = 'sequence', 'fields.id.start' = '1', 'fields.id.end' = '5')""")
try:
    b_env.from_path('endless').execute().print()
except Exception as e:
    message = str(e)
    print(message[message.index('Querying'):].splitlines()[0])
