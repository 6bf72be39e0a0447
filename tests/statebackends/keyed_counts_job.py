"""Two rolling counts, one keyed by a declared STRING key and one by an untyped tuple key,
for the savepoints in ``data/`` that releases before PyFlink's key placement wrote.

Made by running this file with an older checkout first on ``PYTHONPATH``, e.g.::

    PYTHONPATH=/tmp/keys-base python tests/statebackends/keyed_counts_job.py \\
        tests/statebackends/data/savepoint-hashmap state.backend.type=hashmap

which runs the job at parallelism 2 in micro-batches of 10 records, stops it with a
savepoint after a few batches, and copies the savepoint to the given directory.
"""
import os
import shutil
import sys
import tempfile
import time

from api.common import Configuration, Types
from api.datastream import StreamExecutionEnvironment
from api.datastream.functions import KeyedProcessFunction, MapFunction
from api.datastream.state import ValueStateDescriptor

EVENTS = [(f"k{i % 7}", i) for i in range(140)]
RECORD_TYPE = Types.TUPLE([Types.STRING(), Types.LONG()])


class Slow(MapFunction):
    """Gives a stop request time to arrive before the input ends."""

    def map(self, value):
        time.sleep(0.005)
        return value


class Count(KeyedProcessFunction):
    """Counts each key's records: ``<name> <key> <count>``."""

    def __init__(self, name):
        self.name = name

    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value, ctx):
        self.count.update((self.count.value() or 0) + 1)
        yield f"{self.name} {ctx.get_current_key()!r} {self.count.value()}"


def build(env) -> None:
    events = env.from_collection(EVENTS, RECORD_TYPE).uid("events").map(Slow(), RECORD_TYPE)
    events.uid("slow")
    events.key_by(lambda e: e[0], key_type=Types.STRING()) \
        .process(Count("typed"), Types.STRING()).uid("typed").print()
    events.key_by(lambda e: (e[0], e[1] % 2)) \
        .process(Count("untyped"), Types.STRING()).uid("untyped").print()


def main(out: str, conf: dict) -> None:
    config = Configuration()
    config.set_string("execution.executor", "local")
    config.set_string("execution.micro-batch.size", "10")
    config.set_string("state.savepoints.dir", os.path.join(tempfile.mkdtemp(), "savepoints"))
    for key, value in conf.items():
        config.set_string(key, value)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    build(env)
    client = env.execute_async("keyed counts")
    time.sleep(0.5)  # a few batches: the savepoint holds changelogs after a snapshot
    path = client.stop_with_savepoint(False).result(timeout=60)
    client.get_job_execution_result().result(timeout=60)
    shutil.copytree(path, out)


if __name__ == "__main__":
    main(sys.argv[1], dict(arg.split("=", 1) for arg in sys.argv[2:]))
