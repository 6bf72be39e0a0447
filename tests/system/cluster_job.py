"""The job of the standalone-cluster test, run as its own driver process:

    python -m tests.system.cluster_job MASTER OUT STATE_DIR PARALLELISM stop|restore [SAVEPOINT]

A keyed count over 600 records of 7 keys (as lines "key,n") into a FileSink at OUT.
``stop``: runs until a batch has committed, stops with a savepoint under STATE_DIR and
prints its path. ``restore``: runs from SAVEPOINT to the end. Records go to the keyed
counter through a map that notes its subtask's process, so the test can check that every
subtask kept one process (its host) for the whole run."""
import os
import sys
import time

from api.common import Configuration, Types
from api.datastream import (KeyedProcessFunction, MapFunction, StreamExecutionEnvironment)
from api.datastream.connectors.file_system import BucketAssigner, Encoder, FileSink
from api.datastream.state import ValueStateDescriptor

RECORDS = 600
KEYS = 7


def events():
    return [(f"k{i % KEYS}", i) for i in range(RECORDS)]


class Slow(MapFunction):
    """Slow enough that a stop lands mid-job; writes one line per opened instance."""

    def __init__(self, opened_dir):
        self.opened_dir = opened_dir

    def open(self, runtime_context):
        name = f"{runtime_context.get_index_of_this_subtask()}-{os.getpid()}-{time.time_ns()}"
        open(os.path.join(self.opened_dir, name), "w").close()

    def map(self, value):
        time.sleep(0.002)
        return value


class Count(KeyedProcessFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value, ctx):
        self.count.update((self.count.value() or 0) + 1)
        yield f"{value[0]},{self.count.value()}"


def main(master, out, state_dir, parallelism, mode, savepoint=None):
    config = Configuration()
    config.set_string("spark.master", master)
    config.set_string("execution.micro-batch.size", "40")
    config.set_string("state.checkpoints.dir", os.path.join(state_dir, "checkpoints"))
    config.set_string("state.savepoints.dir", os.path.join(state_dir, "savepoints"))
    if savepoint:
        config.set_string("execution.savepoint.path", savepoint)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(int(parallelism))
    opened = os.path.join(state_dir, f"opened-{mode}")
    os.makedirs(opened, exist_ok=True)
    record = Types.TUPLE([Types.STRING(), Types.LONG()])
    (env.from_collection(events(), record).uid("events")
        .map(Slow(opened), record).uid("slow")
        .key_by(lambda e: e[0])
        .process(Count(), Types.STRING()).uid("counts")
        .sink_to(FileSink.for_row_format(out, Encoder.simple_string_encoder())
                 .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
                 .build()))
    if mode == "stop":
        client = env.execute_async("cluster counting")
        print(client.stop_with_savepoint(False).result(timeout=300))
        client.get_job_execution_result().result(timeout=300)
    else:
        env.execute("cluster counting")


if __name__ == "__main__":
    main(*sys.argv[1:])
