"""A keyed job whose RocksDB state is many times the block cache, run in its own process
so that its peak memory can be measured: ``python large_state_job.py N [--full]``.

Each of N distinct keys keeps a 1,000-byte value (a keyed reduce that keeps the
latest record) in RocksDB with a 4 MiB block cache, in micro-batches of 5,000 records
(so a snapshot every 50,000 records), with incremental checkpointing or, with
``--full``, full snapshots (Flink's default), after which the job's state is also
restored from its checkpoint directory into a fresh backend, whose entries are counted.
Prints one JSON line: the peak resident memory above the resident memory before the
job, the state's raw size, seconds, the number of records the sink saw, and with
``--full`` the number of keys restored and the peak growth during the restore alone.
"""
import argparse
import json
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import statebackends.rocksdb as rocksdb  # noqa: E402
from api.common import Configuration, WatermarkStrategy  # noqa: E402
from api.datastream import EmbeddedRocksDBStateBackend, StreamExecutionEnvironment  # noqa: E402
from api.datastream.connectors import NumberSequenceSource  # noqa: E402
from api.datastream.functions import SinkFunction  # noqa: E402
from checkpoint.job_directory import JobDirectory  # noqa: E402
from engine.errors import JobExecutionException  # noqa: E402

VALUE_BYTES = 1000
BLOCK_CACHE_BYTES = 4 << 20
BATCH = 5_000  # records in flight are copied a few times per batch: keep them few


class JobStopped(Exception):
    """Raised by the sink after the last record, so that the job fails and keeps its
    checkpoint directory (a finished job deletes it)."""


class CountSink(SinkFunction):
    """Counts the records in its task and writes the count to ``path`` when the input
    ends, or when it stops the job at the record of key ``stop_at`` (alone in the last
    batch, which fails: the batches before it are committed)."""

    def __init__(self, path: str, stop_at=None):
        self.path = path
        self.count = 0
        self.stop_at = stop_at

    def invoke(self, value, context):
        if value[0] == self.stop_at:
            self.close()
            raise JobStopped()
        self.count += 1

    def close(self):
        with open(self.path, "w") as f:
            f.write(str(self.count))


def with_payload(i):
    return i, random.Random(i).randbytes(VALUE_BYTES)  # incompressible


def run(n: int, incremental: bool, checkpoint_dir: str) -> int:
    """Runs the job; returns how many records reached the sink."""
    conf = Configuration()
    conf.set_string("execution.executor", "local")
    conf.set_string("execution.micro-batch.size", str(BATCH))
    conf.set_string("state.checkpoints.dir", checkpoint_dir)
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_parallelism(1)
    env.set_state_backend(
        EmbeddedRocksDBStateBackend(enable_incremental_checkpointing=incremental))
    count_file = os.path.join(checkpoint_dir + "-count")
    sink = CountSink(count_file, stop_at=None if incremental else n)
    last = n - 1 if incremental else n  # (the full run's stop record: see CountSink)
    (env.from_source(NumberSequenceSource(0, last), WatermarkStrategy.no_watermarks(), "numbers")
     .map(with_payload).key_by(lambda record: record[0]).reduce(lambda a, b: b)
     .add_sink(sink))
    try:
        env.execute("large state")
    except JobExecutionException as e:
        if "JobStopped" not in str(e):
            raise
    with open(count_file) as f:
        return int(f.read())


def memory_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def restore_and_count(checkpoint_dir: str) -> int:
    """Restores the keyed operator's state at the last committed batch, as a restarted
    job would, and counts its entries."""
    point = JobDirectory(os.path.join(checkpoint_dir, "large state")).find_restore_point()
    (uid, info), = point.record.operators.items()
    backend = rocksdb.RocksDBKeyedStateBackend.restore(
        point.store, uid, (0, info.max_parallelism - 1), info.max_parallelism,
        point.record.batch_id)
    try:
        return sum(1 for _ in backend.entries())
    finally:
        backend.close()


def reset_peak() -> int:
    """Resets the process's peak resident memory to the current one (Linux >= 4.0)."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return memory_kib("VmRSS")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("n", type=int)
    p.add_argument("--full", action="store_true",
                   help="full snapshots (no incremental checkpointing), then a restore")
    opts = p.parse_args()
    rocksdb.DEFAULT_BLOCK_CACHE_SIZE = BLOCK_CACHE_BYTES  # read when the cache is made
    with tempfile.TemporaryDirectory() as checkpoint_dir:
        run(1000, not opts.full, os.path.join(checkpoint_dir, "warm-up"))  # imports etc.
        before = reset_peak()  # only a peak above the memory after the warm-up counts
        start = time.perf_counter()
        count = run(opts.n, not opts.full, checkpoint_dir)
        seconds = time.perf_counter() - start
        result = {"growth_bytes": max(memory_kib("VmHWM") - before, 0) * 1024,
                  "data_bytes": opts.n * VALUE_BYTES, "seconds": seconds, "count": count}
        if opts.full:
            before = reset_peak()
            result["restored"] = restore_and_count(checkpoint_dir)
            result["restore_growth_bytes"] = max(memory_kib("VmHWM") - before, 0) * 1024
    print(json.dumps(result))


if __name__ == "__main__":
    main()
