"""The streaming SQL job the SQL Kafka crash test runs in a process of its own and kills
with SIGKILL:

    python sql_kafka_crash_job.py BOOTSTRAP IN_TOPIC OUT_TOPIC CHECKPOINTS OFFSETS

``INSERT INTO kafka_sink SELECT ... FROM kafka_source``: csv records ``key,value`` of
IN_TOPIC (from the earliest offsets to OFFSETS, Flink's 'scan.bounded.specific-offsets')
in micro-batches of 20 offsets per partition, written to OUT_TOPIC as json with
'sink.delivery-guarantee' = 'exactly-once'."""
import sys

from api.common import Configuration
from api.datastream import StreamExecutionEnvironment
from api.table import StreamTableEnvironment


def main(bootstrap, in_topic, out_topic, checkpoints, offsets):
    config = Configuration()
    config.set_string("execution.micro-batch.size", "20")
    config.set_string("state.checkpoints.dir", checkpoints)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    t_env = StreamTableEnvironment.create(env)
    t_env.execute_sql(f"""
        CREATE TABLE kafka_source (k STRING, v INT) WITH (
          'connector' = 'kafka', 'topic' = '{in_topic}',
          'properties.bootstrap.servers' = '{bootstrap}', 'properties.group.id' = 'crash',
          'scan.startup.mode' = 'earliest-offset', 'scan.bounded.mode' = 'specific-offsets',
          'scan.bounded.specific-offsets' = '{offsets}', 'format' = 'csv')""")
    t_env.execute_sql(f"""
        CREATE TABLE kafka_sink (v INT, k STRING) WITH (
          'connector' = 'kafka', 'topic' = '{out_topic}',
          'properties.bootstrap.servers' = '{bootstrap}', 'format' = 'json',
          'sink.delivery-guarantee' = 'exactly-once',
          'sink.transactional-id-prefix' = 'sql-crash')""")
    t_env.execute_sql("INSERT INTO kafka_sink SELECT v, k FROM kafka_source").wait()


if __name__ == "__main__":
    main(*sys.argv[1:6])
