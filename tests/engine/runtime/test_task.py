"""A task (``engine.runtime.task.run_task``) on hand-made input chunks: the order in which a
batch's chunks are processed, the results it returns, and its cached state."""
import gc
import random

from api.common import Types
from api.datastream import BroadcastProcessFunction, KeyedCoProcessFunction
from api.datastream.job_settings import job_settings
from api.datastream.sinks import CollectSink
from api.datastream.state import MapStateDescriptor, ValueStateDescriptor
from engine.batch import BatchInfo, DataChunk, SinkCommittable, TaskFailure
from engine.runtime.exchange import kept, payload_of, pickled, records_of
from engine.driver.job import compile_job
from engine.runtime.task import _collector_paused, forget_job, run_task
from tests.conftest import make_env

FACTORS = MapStateDescriptor("factors", Types.STRING(), Types.INT())


class Record(BroadcastProcessFunction):
    def process_element(self, value, ctx):
        yield "element", value, sorted(ctx.get_broadcast_state(FACTORS).keys())

    def process_broadcast_element(self, value, ctx):
        ctx.get_broadcast_state(FACTORS).put(value, 1)
        yield "broadcast", value


def _compiled(env):
    return compile_job(env._transformations, job_settings(env, env._transformations))


def _run(job, stage, chunks, batch_id=0, state_dir="", is_final=False):
    batch = BatchInfo(job.run_id, batch_id, batch_id - 1, is_final, state_dir, 0, False)
    return list(run_task(lambda: job, job.run_id, stage.id, 0, batch, chunks))


def _chunk(edge, source, records):
    return DataChunk(edge.id, source, 0, payload_of([pickled("upstream", records)], None, ""))


def test_broadcast_side_first_then_input_0_each_by_upstream_subtask(tmp_path):
    env = make_env("local", parallelism=1)
    elements = env.from_collection(["e"]).set_parallelism(1)
    rules = env.from_collection(["r"]).set_parallelism(1)
    elements.connect(rules.broadcast(FACTORS)).process(Record()).sink_to(_Gather())
    job = _compiled(env)
    stage = next(s for s in job.plan.stages if not s.is_source)
    edges = {job.plan.edges[e].input_index: job.plan.edges[e] for e in stage.in_edges}
    chunks = [_chunk(edges[0], 1, ["e1a", "e1b"]), _chunk(edges[0], 0, ["e0"]),
              _chunk(edges[1], 1, ["r1"]), _chunk(edges[1], 0, ["r0"])]
    random.Random(3).shuffle(chunks)  # arrival order differs from run to run
    try:
        results = _run(job, stage, chunks, state_dir=str(tmp_path))
    finally:
        forget_job(job.run_id)
    (sink_items,) = [r for r in results if isinstance(r, SinkCommittable)]
    assert sink_items.committable == [
        ("broadcast", "r0"), ("broadcast", "r1"),
        ("element", "e0", ["r0", "r1"]), ("element", "e1a", ["r0", "r1"]),
        ("element", "e1b", ["r0", "r1"])]


class Count(KeyedCoProcessFunction):
    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("n", Types.INT()))

    def process_element1(self, value, ctx):
        self.count.update((self.count.value() or 0) + 1)
        yield value, self.count.value()

    process_element2 = process_element1


def test_cached_state_continues_and_a_task_behind_the_batch_rebuilds_it(tmp_path):
    env = make_env("local", parallelism=1)
    left = env.from_collection(["a"]).key_by(lambda v: v)
    right = env.from_collection(["a"]).key_by(lambda v: v)
    left.connect(right).process(Count()).sink_to(_Gather())
    job = _compiled(env)
    stage = next(s for s in job.plan.stages if not s.is_source)
    edge = job.plan.edges[stage.in_edges[0]]
    a = [("a", (None, "a"))]  # what a hash edge ships to a keyed operator of a timed job:
    # (key, (timestamp, record)); keyed two-input operators use time (timers)

    def counts(batch_id):
        results = _run(job, stage, [_chunk(edge, 0, a)], batch_id, str(tmp_path))
        return [item for r in results if isinstance(r, SinkCommittable) for item in r.committable]
    try:
        assert counts(0) == [("a", 1)]
        assert counts(1) == [("a", 2)]          # the cached instance goes on
        forget_job(job.run_id)                  # a fresh worker: state from the files
        assert counts(2) == [("a", 3)]
        assert counts(2) == [("a", 3)]          # a retry of batch 2 starts from version 1
    finally:
        forget_job(job.run_id)


def test_a_failing_function_is_returned_as_a_task_failure(tmp_path):
    class Fails(KeyedCoProcessFunction):
        def process_element1(self, value, ctx):
            raise ValueError("bad")

        process_element2 = process_element1

    env = make_env("local", parallelism=1)
    key = lambda v: v  # noqa: E731
    env.from_collection(["a"]).key_by(key).connect(env.from_collection(["b"]).key_by(key)) \
        .process(Fails()).sink_to(_Gather())
    job = _compiled(env)
    stage = next(s for s in job.plan.stages if not s.is_source)
    edge = job.plan.edges[stage.in_edges[0]]
    try:
        (result,) = _run(job, stage, [_chunk(edge, 0, [("a", (None, "a"))])],
                         state_dir=str(tmp_path))
    finally:
        forget_job(job.run_id)
    assert isinstance(result, TaskFailure)
    assert "Keyed Co-Process' failed on record 'a': ValueError: bad" in str(result.error)


class _Gather:
    """A sink whose committable is the batch's records (as execute_and_collect's)."""

    def engine_sink(self, type_info):
        return CollectSink(None)


def test_the_collector_stays_paused_while_chunks_wait_for_a_later_stage_of_the_batch():
    """A collection between two stages would walk every record kept for the second one
    (object reuse); it resumes once they are read, and a collector the user turned off
    stays off."""
    assert gc.isenabled()
    try:
        with _collector_paused():
            assert not gc.isenabled()
            payload = kept("run", 7, "0-0-0", [[("k", 1)]])
        assert not gc.isenabled()  # the records wait for the next stage
        with _collector_paused():
            assert [r for piece in records_of(payload) for r in piece] == [("k", 1)]
        assert gc.isenabled()
        gc.disable()
        with _collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
