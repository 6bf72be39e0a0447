"""The program of test_schema.py: run with argument "pyflink" (PyFlink 2.3.0) or "api"
(this project); the same code after the imports."""
import sys

if sys.argv[1] == "pyflink":
    from pyflink.common import WatermarkStrategy
    from pyflink.common.typeinfo import Types
    from pyflink.common.watermark_strategy import TimestampAssigner
    from pyflink.datastream import StreamExecutionEnvironment
    from pyflink.table import DataTypes, Schema, StreamTableEnvironment
    from pyflink.table.expressions import col, to_timestamp_ltz
else:
    from api.common import WatermarkStrategy
    from api.common.typeinfo import Types
    from api.common.watermark_strategy import TimestampAssigner
    from api.datastream import StreamExecutionEnvironment
    from api.table import DataTypes, Schema, StreamTableEnvironment
    from api.table.expressions import col, to_timestamp_ltz

env = StreamExecutionEnvironment.get_execution_environment()
env.set_parallelism(1)
t_env = StreamTableEnvironment.create(env)
ds = env.from_collection([(1, 'Hi', 1000), (2, 'Hello', 2500)], type_info=Types.ROW_NAMED(
    ['id', 'word', 'ms'], [Types.INT(), Types.STRING(), Types.LONG()]))
print(to_timestamp_ltz(col('ms'), 3))
every_field = Schema.new_builder() \
    .column('id', DataTypes.INT()).column('word', DataTypes.STRING()) \
    .column('ms', DataTypes.BIGINT()) \
    .column_by_expression('ts', to_timestamp_ltz(col('ms'), 3)) \
    .column_by_expression('twice', col('ms') * 2) \
    .watermark('ts', "ts - INTERVAL '5' SECOND").build()
print(every_field)
table = t_env.from_data_stream(ds, every_field)
table.print_schema()
table.execute().print()
some_fields = Schema.new_builder().column('id', DataTypes.INT()) \
    .column('ms', DataTypes.BIGINT()) \
    .column_by_expression('ts', to_timestamp_ltz(col('ms'), 3)) \
    .column_by_expression('next_id', "id + 1") \
    .watermark('ts', "ts - INTERVAL '1' SECOND").build()
print(some_fields)
table = t_env.from_data_stream(ds, some_fields)
table.print_schema()
table.execute().print()
table.select(col('ts'), col('next_id')).print_schema()
t_env.create_temporary_view('upper_words', ds, Schema.new_builder().column_by_expression(
    'up', col('word').upper_case).build())
t_env.from_path('upper_words').print_schema()
t_env.sql_query("SELECT up, id FROM upper_words").execute().print()
print(Schema.new_builder().column('a', DataTypes.INT().not_null())
      .column_by_metadata('off', DataTypes.BIGINT(), 'offset', True)
      .column_by_metadata('part', DataTypes.INT())
      .primary_key('a').build())
try:
    t_env.from_data_stream(ds, Schema.new_builder().watermark('ts', 'ts').build())
except Exception as e:
    message = str(e)
    print(message[message.index('Invalid column'):].splitlines()[0])


class FromField(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[2]


stamped = ds.assign_timestamps_and_watermarks(
    WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(FromField()))
rowtime = Schema.new_builder().column_by_metadata('rowtime', 'TIMESTAMP_LTZ(3)') \
    .watermark('rowtime', 'SOURCE_WATERMARK()').build()
print(rowtime)
table = t_env.from_data_stream(stamped, rowtime)
table.print_schema()
table.execute().print()
print(Schema.new_builder().column('a', 'INT NOT NULL')
      .column_by_metadata('t', 'TIMESTAMP_LTZ(3)', 'rowtime', True).build())
try:
    t_env.from_data_stream(ds, rowtime).execute().print()
except Exception as e:
    message = str(e)
    print(message[message.index('Could not find'):].splitlines()[0])
