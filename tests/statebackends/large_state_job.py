"""A keyed job whose RocksDB state is many times the block cache, run in its own process
so that its peak memory can be measured: ``python large_state_job.py N``.

Each of N distinct keys keeps a 1,000-byte value (a keyed reduce that keeps the
latest record) in RocksDB with incremental checkpointing and a 4 MiB block cache,
in micro-batches of 5,000 records. Prints one JSON line: the peak resident memory
above the resident memory before the job, the state's raw size, seconds, and the
number of records the sink saw.
"""
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

import statebackends.rocksdb as rocksdb  # noqa: E402
from api.common import Configuration, WatermarkStrategy  # noqa: E402
from api.datastream import EmbeddedRocksDBStateBackend, StreamExecutionEnvironment  # noqa: E402
from api.datastream.connectors import NumberSequenceSource  # noqa: E402
from api.datastream.functions import SinkFunction  # noqa: E402

VALUE_BYTES = 1000
BLOCK_CACHE_BYTES = 4 << 20
BATCH = 5_000  # records in flight are copied a few times per batch: keep them few


class CountSink(SinkFunction):
    def __init__(self):
        self.count = 0

    def invoke(self, value, context):
        self.count += 1


def with_payload(i):
    return i, random.Random(i).randbytes(VALUE_BYTES)  # incompressible


def run(n: int) -> CountSink:
    conf = Configuration()
    conf.set_string("execution.executor", "local")
    conf.set_string("execution.micro-batch.size", str(BATCH))
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_parallelism(1)
    env.set_state_backend(EmbeddedRocksDBStateBackend(enable_incremental_checkpointing=True))
    sink = CountSink()
    (env.from_source(NumberSequenceSource(0, n - 1), WatermarkStrategy.no_watermarks(), "numbers")
     .map(with_payload).key_by(lambda record: record[0]).reduce(lambda a, b: b)
     .add_sink(sink))
    env.execute("large state")
    return sink


def memory_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def main():
    n = int(sys.argv[1])
    rocksdb.DEFAULT_BLOCK_CACHE_SIZE = BLOCK_CACHE_BYTES  # read when the cache is made
    run(1000)  # warm-up: imports and first allocations
    # The peak so far is the warm-up's; only a larger peak counts below.
    before = memory_kib("VmRSS")
    start = time.perf_counter()
    sink = run(n)
    seconds = time.perf_counter() - start
    peak = memory_kib("VmHWM")
    print(json.dumps({"growth_bytes": max(peak - before, 0) * 1024,
                      "data_bytes": n * VALUE_BYTES, "seconds": seconds, "count": sink.count}))


if __name__ == "__main__":
    main()
