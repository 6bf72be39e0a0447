"""The job program the command line tests run (``spark-datastream run stream_job.py
-- OUT [--count N] [--rate R] [--fail-at I]``).

A running sum per key over generated records ``(k<i % 3>, i)`` with event time ``i``
seconds, written by a FileSink to OUT. Unbounded unless ``--count`` is given;
``--rate`` records per second; ``--fail-at I``: the sum fails on record ``I``.
"""
import argparse

from api.common import Types, WatermarkStrategy
from api.common.watermark_strategy import TimestampAssigner
from api.datastream import StreamExecutionEnvironment
from api.datastream.connectors.datagen import DataGeneratorSource
from api.datastream.connectors.file_system import BucketAssigner, Encoder, FileSink

RECORD = Types.TUPLE([Types.STRING(), Types.LONG()])


class Seconds(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1] * 1000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--count", type=int)
    parser.add_argument("--rate", type=float, default=100)
    parser.add_argument("--fail-at", type=int)
    args = parser.parse_args()
    fail_at = args.fail_at

    def add(a, b):
        if b[1] == fail_at:
            raise ValueError(f"injected failure at record {fail_at}")
        return a[0], a[1] + b[1]

    env = StreamExecutionEnvironment.get_execution_environment()
    events = env.from_source(
        DataGeneratorSource(lambda i: (f"k{i % 3}", i), args.count, args.rate, RECORD),
        WatermarkStrategy.no_watermarks(), "events").set_parallelism(1).uid("events")
    (events.assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Seconds()))
        .set_parallelism(1)  # (each key's records reach the sum in the order generated)
        .key_by(lambda e: e[0])
        .reduce(add).uid("sums")
        .map(lambda e: f"{e[0]},{e[1]}", Types.STRING())
        .sink_to(FileSink.for_row_format(args.out, Encoder.simple_string_encoder())
                 .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
                 .build()).uid("files"))
    env.execute("cli-stream")


if __name__ == "__main__":
    main()
