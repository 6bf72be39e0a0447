"""A file job the crash test runs in a separate process and kills with SIGKILL:

    python file_crash_job.py INPUT CHECKPOINTS OUT

Reads the text files under INPUT (a large file cut into 4 KiB splits and a gzip file) in
micro-batches of 40 lines, maps each line slowly (so a kill lands mid-job) and writes
the lines with a FileSink."""
import sys
import time

from api.common import Configuration, Types, WatermarkStrategy
from api.datastream import RuntimeExecutionMode, StreamExecutionEnvironment
from api.datastream.connectors.file_system import (BucketAssigner, Encoder, FileSink,
                                                   FileSource, StreamFormat)
from engine.io.files import source as file_source


def slow(line):
    time.sleep(0.002)
    return line


def main(source_dir, checkpoints, out):
    file_source.SPLIT_SIZE = 4096
    config = Configuration()
    config.set_string("execution.executor", "local")
    config.set_string("execution.micro-batch.size", "40")
    config.set_string("state.checkpoints.dir", checkpoints)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
    env.set_parallelism(2)
    env.enable_checkpointing(100)
    env.from_source(FileSource.for_record_stream_format(StreamFormat.text_line_format(),
                                                        source_dir).build(),
                    WatermarkStrategy.no_watermarks(), "files").uid("files") \
        .map(slow, Types.STRING()).uid("slow") \
        .sink_to(FileSink.for_row_format(out, Encoder.simple_string_encoder())
                 .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
                 .build()).uid("out")
    env.execute("file-crash-job")


if __name__ == "__main__":
    main(*sys.argv[1:4])
