"""The job the crash-recovery tests run in a separate process, and its expected output.

    python crash_job.py CHECKPOINTS OUT [--executor local|spark] [--master M] [--fail-once F]
                        [--batch-size N] [--backend hashmap|rocksdb]

A running sum per key over 1,500 records in micro-batches of 30 (N), written by a FileSink.
Each record takes a moment to map, so the job runs for a few seconds and a kill lands in
the middle. ``--fail-once F``: the map raises on the first record of key k3 it sees
while the file F does not exist, creating it (a task failure on the first attempt only).
"""
import argparse
import os
import time

from api.common import Configuration, Types
from api.datastream import StreamExecutionEnvironment
from api.datastream.connectors.file_system import BucketAssigner, Encoder, FileSink
from api.datastream.functions import MapFunction

RECORDS = 1500
KEYS = 7


def events():
    return [(f"k{i % KEYS}", i) for i in range(RECORDS)]


def expected_lines():
    """The sink's lines of a run without failures: every running sum, once."""
    sums, lines = {}, []
    for key, value in events():
        sums[key] = sums.get(key, 0) + value
        lines.append(f"{key},{sums[key]}")
    return lines


class SlowMap(MapFunction):
    def __init__(self, fail_once):
        self.fail_once = fail_once

    def map(self, value):
        time.sleep(0.002)
        if self.fail_once and value[0] == "k3" and not os.path.exists(self.fail_once):
            open(self.fail_once, "w").close()
            raise RuntimeError("injected failure on the first attempt")
        return value


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("checkpoints")
    parser.add_argument("out")
    parser.add_argument("--executor", default="local")
    parser.add_argument("--master", default="local[2]")
    parser.add_argument("--fail-once")
    parser.add_argument("--batch-size", default="30")
    parser.add_argument("--backend", default="hashmap", choices=["hashmap", "rocksdb"])
    args = parser.parse_args()
    config = Configuration()
    config.set_string("execution.executor", args.executor)
    config.set_string("spark.master", args.master)
    config.set_string("execution.micro-batch.size", args.batch_size)
    config.set_string("state.checkpoints.dir", args.checkpoints)
    config.set_string("state.backend.type", args.backend)
    config.set_string("state.backend.incremental", "true")  # (RocksDB only)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    env.enable_checkpointing(100)
    record_type = Types.TUPLE([Types.STRING(), Types.LONG()])
    (env.from_collection(events(), record_type).uid("events")
        .map(SlowMap(args.fail_once), record_type).set_parallelism(1).uid("slow-map")
        .key_by(lambda e: e[0])
        .reduce(lambda a, b: (a[0], a[1] + b[1])).uid("sums")
        .map(lambda e: f"{e[0]},{e[1]}", Types.STRING())
        .sink_to(FileSink.for_row_format(args.out, Encoder.simple_string_encoder())
                 .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
                 .build()).uid("files"))
    env.execute("crash-job")


if __name__ == "__main__":
    main()
