"""The job the PostgreSQL crash test runs in a process of its own and kills with SIGKILL:

    python pg_crash_job.py INPUT CHECKPOINTS URL USER PASSWORD

Reads ``key,value`` lines from the text files under INPUT in micro-batches of 10 lines
per split, counts the records of each key in keyed state, and writes one row
``(key, n, value)`` per record (n: the key's n-th record) to the table ``counts`` with
a JdbcSink, exactly once."""
import sys

from api.common import Configuration, Types, WatermarkStrategy
from api.datastream import StreamExecutionEnvironment
from api.datastream.connectors.file_system import FileSource, StreamFormat
from api.datastream.connectors.jdbc import JdbcConnectionOptions, JdbcExecutionOptions, JdbcSink
from api.common.types import Row
from tests.system.crash import Count

ROW = Types.ROW([Types.STRING(), Types.INT(), Types.INT()])


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
        .process(Count()).uid("count").map(lambda r: Row(*r), ROW) \
        .add_sink(JdbcSink.sink("INSERT INTO counts (k, n, v) VALUES (?, ?, ?)", ROW, options,
                                JdbcExecutionOptions.builder().with_batch_size(50).build())) \
        .uid("db")
    env.execute("pg-crash-job")


if __name__ == "__main__":
    main(*sys.argv[1:6])
