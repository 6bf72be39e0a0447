"""The job the PostgreSQL crash test runs in a process of its own and kills with SIGKILL:

    python pg_crash_job.py INPUT CHECKPOINTS URL USER PASSWORD

Reads ``key,value`` lines from the text files under INPUT in micro-batches of 10 lines
per split, counts the records of each key in keyed state, and writes one row
``(key, n, value)`` per record (n: the key's n-th record) to the table ``counts`` with
a JdbcSink, exactly once."""
import sys
import time

from api.common import Configuration, Types, WatermarkStrategy
from api.datastream import KeyedProcessFunction, StreamExecutionEnvironment
from api.datastream.connectors.file_system import FileSource, StreamFormat
from api.datastream.connectors.jdbc import JdbcConnectionOptions, JdbcExecutionOptions, JdbcSink
from api.datastream.state import ValueStateDescriptor
from api.common.types import Row

ROW = Types.ROW([Types.STRING(), Types.INT(), Types.INT()])


class Count(KeyedProcessFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("n", Types.INT()))

    def process_element(self, value, ctx):
        time.sleep(0.001)  # slow enough that a kill lands mid-job
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        yield Row(value[0], n, value[1])


def parse(line):
    key, value = line.split(",")
    return key, int(value)


def main(source_dir, checkpoints, url, user, password):
    config = Configuration()
    config.set_string("execution.executor", "local")
    config.set_string("execution.micro-batch.size", "10")
    config.set_string("state.checkpoints.dir", checkpoints)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    options = JdbcConnectionOptions.JdbcConnectionOptionsBuilder().with_url(url) \
        .with_driver_name("org.postgresql.Driver").with_user_name(user) \
        .with_password(password).build()
    env.from_source(FileSource.for_record_stream_format(StreamFormat.text_line_format(),
                                                        source_dir).build(),
                    WatermarkStrategy.no_watermarks(), "lines").uid("lines") \
        .map(parse).uid("parse").key_by(lambda r: r[0]) \
        .process(Count(), ROW).uid("count") \
        .add_sink(JdbcSink.sink("INSERT INTO counts (k, n, v) VALUES (?, ?, ?)", ROW, options,
                                JdbcExecutionOptions.builder().with_batch_size(50).build())) \
        .uid("db")
    env.execute("pg-crash-job")


if __name__ == "__main__":
    main(*sys.argv[1:6])
