"""The program of test_table_api.py: run with argument "pyflink" (PyFlink 2.3.0) or "api"
(this project); the same code after the imports."""
import datetime
import decimal
import sys

if sys.argv[1] == "pyflink":
    from pyflink.common import Row
    from pyflink.common.typeinfo import Types
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.table import DataTypes, EnvironmentSettings, StreamTableEnvironment
    from pyflink.table.expressions import call, call_sql, col, concat, if_then_else, lit
    from pyflink.table.udf import udf
else:
    from api.common import Row
    from api.common.typeinfo import Types
    from api.datastream import StreamExecutionEnvironment
    from api.table import DataTypes, EnvironmentSettings, StreamTableEnvironment
    from api.table.expressions import call, call_sql, col, concat, if_then_else, lit
    from api.table.udf import udf

WORDS = [(1, 'Hi', 10), (2, 'Hello', 20), (3, 'Hello world', 30), (4, None, 5)]
WORD_TYPE = Types.ROW_NAMED(['id', 'word', 'v'], [Types.INT(), Types.STRING(), Types.LONG()])


@udf(result_type=DataTypes.BIGINT())
def add_one(x):
    return x + 1


for mode in ['stream', 'batch']:
    env = StreamExecutionEnvironment.get_execution_environment()
    env.set_parallelism(1)
    settings = EnvironmentSettings.in_streaming_mode() if mode == 'stream' \
        else EnvironmentSettings.in_batch_mode()
    t_env = StreamTableEnvironment.create(env, environment_settings=settings)
    t = t_env.from_data_stream(env.from_collection(WORDS, type_info=WORD_TYPE))
    print("== select", mode)
    r = t.select(col('id'), col('word').upper_case.alias('up'), (col('v') * 2 + 1).alias('v2'),
                 col('word').char_length)
    r.print_schema()
    r.execute().print()
    print("== where")
    t.where(col('v') > 8).filter(col('word').like('Hel%')).execute().print()
    print("== empty")
    t.where(col('v') > 100).execute().print()
    print("== collect")
    with t.select(col('id'), col('word')).execute().collect() as res:
        for row in res:
            print(repr(row), row.get_row_kind())
    if mode == 'batch':
        print("== group")
        g = t.add_columns((col('id') % 2).alias('k')).group_by(col('k')).select(
            col('k'), col('v').sum.alias('s'), col('id').count.alias('c'), col('v').avg,
            col('v').max, col('v').min)
        g.print_schema()
        g.order_by(col('k')).execute().print()
        t.select(col('word')).distinct().order_by(col('word').desc).execute().print()
        t.order_by(col('word')).execute().print()
        t.order_by(col('v')).limit(2).execute().print()
        t.order_by(col('v')).offset(1).fetch(2).execute().print()

print("== expressions")
items = t.select(
    lit(1.5).alias('d'), (col('v') / 3).alias('div'), (col('id') / 2).alias('idiv'),
    (col('v') % 3).alias('m'), col('v').cast(DataTypes.DOUBLE()).alias('dv'),
    (col('v').cast(DataTypes.DOUBLE()) / 3).alias('dd'), col('word').is_null.alias('n'),
    col('v').between(6, 20).alias('b'), if_then_else(col('v') > 15, 'big', 'small').alias('s'),
    concat(col('word'), '!', 'x').alias('c'), (col('id') == 2).alias('eq'),
    ((col('id') > 1) & ~(col('id') == 3) | col('word').is_not_null).alias('logic'),
    col('word').lower_case, lit('abc').alias('l'), (-col('id')).alias('neg'),
    col('v').cast(DataTypes.STRING()).alias('vs'), lit(1.0e20).alias('big'),
    (lit(0.1) + lit(0.2)).alias('pt'), lit(True).alias('t'),
    col('v').cast(DataTypes.DECIMAL(10, 2)).alias('dec'),
    col('v').cast(DataTypes.FLOAT()).alias('fl'), call_sql('id + 100').alias('sqlx'))
items.execute().print()
print("== types")
t2 = t_env.from_data_stream(env.from_collection(
    [(1.25, True, datetime.date(2024, 1, 2), datetime.datetime(2024, 1, 2, 3, 4, 5, 120000),
      decimal.Decimal('1.50'), 'a' * 40, '中文字')],
    type_info=Types.ROW_NAMED(['d', 'b', 'day', 'ts', 'dec', 'longs', 'cjk'],
                              [Types.DOUBLE(), Types.BOOLEAN(), Types.SQL_DATE(),
                               Types.SQL_TIMESTAMP(), Types.BIG_DEC(), Types.STRING(),
                               Types.STRING()])))
t2.print_schema()
t2.execute().print()
t2.select(col('ts').cast(DataTypes.TIMESTAMP(3)).alias('ts3'),
          col('d').cast(DataTypes.FLOAT()).alias('f'),
          col('longs').alias('a_very_long_column_name_longer_than_thirty_chars')
          ).execute().print()
print("== table operations")
t.alias('a', 'b', 'c').print_schema()
t.rename_columns(col('word').alias('w')).print_schema()
t.drop_columns(col('word')).print_schema()
t.add_or_replace_columns((col('v') + 1).alias('v'), lit(7).alias('z')).execute().print()
t.add_columns(col('v') + 1).print_schema()
o = t_env.from_data_stream(env.from_collection(
    [(1, 'x'), (3, 'y'), (5, 'z')],
    type_info=Types.ROW_NAMED(['oid', 'name'], [Types.INT(), Types.STRING()])))
t.join(o, col('id') == col('oid')).select(col('id'), col('name')).execute().print()
t.left_outer_join(o, col('id') == col('oid')).select(col('id'), col('name')) \
    .order_by(col('id')).execute().print()
t.select(col('id')).union_all(o.select(col('oid'))).execute().print()
print("== functions")
t_env.create_temporary_function("add_one", add_one)
t.select(call('add_one', col('v')).alias('p'), add_one(col('id'))).execute().print()
t_env.create_temporary_view('words', t)
t_env.sql_query("SELECT add_one(v) AS q FROM words WHERE id > 2").execute().print()
print("== from_elements")
t = t_env.from_elements([(1, 'Hi'), (2, 'Hello')], ['id', 'data'])
t.print_schema()
t.execute().print()
t_env.from_elements([(1, 'Hi', 1.5, True, decimal.Decimal('1.25'), datetime.date(2024, 1, 1),
                      datetime.datetime(2024, 1, 1, 1, 2, 3), [1, 2], {'a': 1})]).print_schema()
t_env.from_elements([(1, 'Hi')], DataTypes.ROW([DataTypes.FIELD('a', DataTypes.INT()),
                                                DataTypes.FIELD('b', DataTypes.STRING())])
                    ).print_schema()
t_env.from_elements([Row(a=1, b='x'), Row(a=2, b=None)]).print_schema()
t_env.from_elements([(1, None), (None, 'b')], ['x', 'y']).execute().print()
words = t_env.from_elements([('flink',), ('spark',), ('flink',)], ['word'])
words.group_by(col('word')).select(col('word'), lit(1).count.alias('count')) \
    .order_by(col('word')).execute().print()
