"""On Spark, a subtask lives in one process for the whole job (engine.executor.task_host):
its functions are opened once, keep their in-memory fields from batch to batch and are
closed once, as in Flink, whichever Python worker Spark gives each batch's task."""
import os
import pickle
import signal
import socket
import tempfile
import time

from api.common import Types
from api.datastream import KeyedCoProcessFunction, MapFunction, SinkFunction
from api.datastream.job_settings import job_settings
from api.datastream.sinks import CollectSink
from api.datastream.state import ValueStateDescriptor
from engine.batch import BatchInfo, DataChunk, SinkCommittable
from engine.runtime.exchange import payload_of, pickled
from engine.executor import task_host
from engine.driver.job import compile_job
from tests.conftest import GatheringSink, make_env

N = 60


class NumberPerSubtask(MapFunction):
    """Numbers the records each subtask sees in an in-memory field (not state)."""

    def open(self, runtime_context):
        self.subtask = runtime_context.get_index_of_this_subtask()
        self.seen = 0
        self.opened = os.getpid()

    def map(self, value):
        self.seen += 1
        return self.subtask, self.seen, self.opened == os.getpid()


class TotalOnClose(SinkFunction):
    """Adds up what it receives in memory; writes the total when closed."""

    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix="totals-")
        self.total = 0

    def invoke(self, value, context):
        self.total += value

    def close(self):
        with open(os.path.join(self.directory, f"{os.getpid()}-{id(self)}"), "wb") as f:
            pickle.dump(self.total, f)

    def totals(self) -> list:
        found = []
        for name in os.listdir(self.directory):
            with open(os.path.join(self.directory, name), "rb") as f:
                found.append(pickle.load(f))
        return found


def test_in_memory_fields_persist_across_micro_batches(spark):
    env = make_env("spark", parallelism=2, micro_batch_size=3)  # ~10 batches per subtask
    out = list(env.from_collection(list(range(N))).map(NumberPerSubtask())
               .execute_and_collect())
    assert all(same_process for _, _, same_process in out)
    for subtask in (0, 1):
        numbers = sorted(seen for s, seen, _ in out if s == subtask)
        assert numbers == list(range(1, len(numbers) + 1))
    assert len(out) == N


def test_a_sink_is_closed_once_per_subtask_with_everything_it_received(spark):
    env = make_env("spark", parallelism=2, micro_batch_size=4)
    sink = TotalOnClose()
    env.from_collection(list(range(N))).key_by(lambda x: x % 5).map(lambda x: x) \
        .add_sink(sink)
    env.execute("totals")
    totals = sink.totals()
    assert len(totals) == 2
    assert sum(totals) == sum(range(N))


def test_no_host_is_left_after_the_job(spark):
    env = make_env("spark", parallelism=2, micro_batch_size=5)
    pids = PidSink()
    env.from_collection(list(range(N))).map(lambda x: os.getpid()).add_sink(pids)
    run_id = env.execute("pids").get_job_id().to_hex_string()
    assert not os.path.exists(task_host.run_directory(run_id))
    assert_hosts_ended(pids.values(), "a host outlived its job")


def test_a_job_of_one_batch_runs_in_hosts_and_rocksdb_works_in_the_next_job(spark,
                                                                            tmp_path):
    # Its tasks used to run in the workers themselves. RocksDB starts its background
    # threads once per process, so every host forked after from such a worker had none:
    # the next job's incremental snapshot waited forever for a memtable flush.
    rocksdb = {"state.backend.type": "rocksdb", "state.backend.incremental": "true"}
    env = make_env("spark", parallelism=2, **rocksdb)
    pids = PidSink()
    env.from_collection(list(range(N))).key_by(lambda x: x % 4) \
        .reduce(lambda a, b: a + b).map(lambda x: os.getpid()).add_sink(pids)
    env.execute("one batch")
    assert_hosts_ended(pids.values(), "a task of the job ran in a Spark worker")

    env = make_env("spark", parallelism=2, micro_batch_size=10,
                   **{"state.checkpoints.dir": str(tmp_path)}, **rocksdb)
    env.enable_checkpointing(10)
    env.from_collection(list(range(N))).key_by(lambda x: x % 4) \
        .reduce(lambda a, b: a + b).add_sink(PidSink())
    env.execute_async("snapshots").get_job_execution_result().result(timeout=120)


class PidSink(SinkFunction):
    """Notes the values it receives in files of a directory."""

    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix="pids-")

    def invoke(self, value, context):
        with open(os.path.join(self.directory, str(value)), "w"):
            pass

    def values(self) -> list:
        return [int(name) for name in os.listdir(self.directory)]


def assert_hosts_ended(pids, message: str) -> None:
    """The job's two subtasks ran in two processes other than this one, which end
    within 10 s (hosts end with their job; Spark's Python workers stay)."""
    hosts = set(pids)
    assert len(hosts) == 2 and os.getpid() not in hosts
    deadline = time.monotonic() + 10
    while any(_running(pid) for pid in hosts):
        assert time.monotonic() < deadline, message
        time.sleep(0.05)


def _running(pid: int) -> bool:
    """Whether ``pid`` is a live process (not ended, nor a zombie waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class CountInProcess(KeyedCoProcessFunction):
    """Counts a key's records in keyed state; says which process did."""

    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("n", Types.INT()))

    def process_element1(self, value, ctx):
        self.count.update((self.count.value() or 0) + 1)
        yield value, self.count.value(), os.getpid()

    process_element2 = process_element1


class _Gather:
    """A sink whose committable is the batch's records (as execute_and_collect's)."""

    def engine_sink(self, type_info):
        return CollectSink(None)


def test_a_task_whose_host_died_starts_one_that_goes_on_from_the_stored_state(tmp_path):
    env = make_env("local", parallelism=1)
    left = env.from_collection(["a"]).key_by(lambda v: v)
    left.connect(env.from_collection(["a"]).key_by(lambda v: v)) \
        .process(CountInProcess()).sink_to(_Gather())
    job = compile_job(env._transformations, job_settings(env, env._transformations))
    stage = next(s for s in job.plan.stages if not s.is_source)
    chunk = DataChunk(stage.in_edges[0], 0, 0,
                      payload_of([pickled("upstream", [("a", (None, "a"))])], None, ""))

    def count(batch_id, is_final=False):
        batch = BatchInfo(job.run_id, batch_id, batch_id - 1, is_final, str(tmp_path), 0,
                          False)
        results = task_host.run_hosted(lambda: job, job.run_id, stage.id, 0, batch, [chunk])
        (records,) = [r.committable for r in results if isinstance(r, SinkCommittable)]
        return records[0]
    try:
        _, first, host = count(0)
        _, second, same_host = count(1)
        assert (first, second, same_host) == (1, 2, host)
        os.kill(host, signal.SIGKILL)
        _wait_until_gone(task_host._socket_path(job.run_id, f"{stage.id}/0"))
        _, third, new_host = count(2)
        assert third == 3 and new_host != host
        assert count(3, is_final=True)[1] == 4
    finally:
        task_host.remove_run(job.run_id)


def _wait_until_gone(path: str) -> None:
    """Waits until nothing listens on the socket ``path`` any more."""
    while True:
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)
        except ConnectionRefusedError:
            return
        finally:
            probe.close()
        time.sleep(0.01)


class DiesOnce(MapFunction):
    """Kills its own process (the subtask's host) the first time it sees ``value``."""

    def __init__(self, value: int, marker: str):
        self.value, self.marker = value, marker

    def map(self, value):
        if value == self.value and not os.path.exists(self.marker):
            open(self.marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        return value


def test_a_host_that_dies_in_a_batch_the_driver_runs_is_replaced_by_the_batchs_tasks(
        spark, tmp_path):
    env = make_env("spark", parallelism=2, micro_batch_size=10)
    marker = str(tmp_path / "died")
    sink = GatheringSink()
    env.from_collection(list(range(N))).map(DiesOnce(45, marker)).map(lambda x: (x % 3, x)) \
        .key_by(lambda p: p[0]).reduce(lambda a, b: (a[0], a[1] + b[1])).add_sink(sink)
    result = env.execute("host dies")
    assert os.path.exists(marker)
    totals = {}
    for key, total in sink.values():  # running sums: the last is the largest
        totals[key] = max(totals.get(key, 0), total)
    assert totals == {k: sum(x for x in range(N) if x % 3 == k) for k in range(3)}
    # Batches 1-3 ran in the driver's threads; batch 4 (values 40-49) failed there when
    # the host died, and ran again as Spark tasks, which started a new host.
    run = result.get_job_id().to_hex_string()[:8]
    tracker = spark.sparkContext.statusTracker()
    ran_on_spark = [b for b in range(6)
                    if tracker.getJobIdsForGroup(f"host dies [{run}] batch {b}")]
    assert ran_on_spark == [0, 4]
