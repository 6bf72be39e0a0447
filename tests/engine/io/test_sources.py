"""The Source protocol end to end: a user-written source whose reader reports its
positions, new splits found while the job runs, per-split watermarks, a record that
cannot be read, a restart from the checkpoint directory, and add_source(SourceFunction)."""
import json
import os
import time

import pytest

from api.common import Duration, WatermarkStrategy
from api.common.watermark_strategy import TimestampAssigner
from api.datastream import SourceFunction
from api.datastream.window import TumblingEventTimeWindows
from engine.errors import JobExecutionException, RecordReadError
from engine.io.sources import Source, SplitRange
from tests.conftest import GatheringSink, make_env


class Queues(Source):
    """A user source: every ``*.queue`` file of a directory is a split of JSON lines; the
    position is the number of lines read, which only the reader knows for sure (it reads
    at most ``max_records`` lines from there). ``watch``: files added later become new
    splits, and the source never ends."""

    stamps_records = True

    def __init__(self, directory: str, watch: bool = False):
        self.directory = directory
        self.splits_change = watch
        self.bounded = not watch
        self.ends = {}

    def splits(self, parallelism):
        return sorted(n for n in os.listdir(self.directory) if n.endswith(".queue"))

    def plan(self, split, position, max_records, now_ms):
        return SplitRange(split, (os.path.join(self.directory, split), position, max_records))

    def is_finished(self, split, position):
        with open(os.path.join(self.directory, split)) as f:
            return position >= sum(1 for _ in f) and self.bounded

    def read(self, descriptor):
        path, position, max_records = descriptor
        with open(path) as f:
            lines = f.read().splitlines()[position:position + max_records]
        records = []
        for offset, line in enumerate(lines, position):
            try:
                value = json.loads(line)
            except ValueError as e:
                raise RecordReadError(os.path.basename(path), offset, line, e)
            records.append((value["t"], value["v"]))
        return records, position + len(lines)

    def engine_source(self):
        return self

    def get_produced_type(self):
        return None


def write_queue(directory, name, values, start=0):
    with open(os.path.join(directory, name), "a") as f:
        for i, v in enumerate(values, start):
            f.write(json.dumps({"t": i * 1000, "v": v}) + "\n")


@pytest.mark.parametrize("parallelism, batch", [(1, 1), (2, 3), (3, 100)])
def test_a_user_source_reports_its_positions_and_is_read_once(tmp_path, parallelism, batch):
    for q in range(4):
        write_queue(tmp_path, f"{q}.queue", [f"{q}-{i}" for i in range(7)])
    env = make_env("local", parallelism=parallelism, micro_batch_size=batch)
    ds = env.from_source(Queues(str(tmp_path)), WatermarkStrategy.no_watermarks(), "queues")
    got = list(ds.execute_and_collect())
    assert sorted(got) == sorted(f"{q}-{i}" for q in range(4) for i in range(7))
    for q in range(4):  # in order within a split
        assert [v for v in got if v.startswith(f"{q}-")] == [f"{q}-{i}" for i in range(7)]


def test_a_restarted_job_resumes_each_split_where_the_last_committed_batch_ended(tmp_path):
    queues, checkpoints = tmp_path / "q", tmp_path / "chk"
    queues.mkdir()
    for q in range(2):
        write_queue(queues, f"{q}.queue", [f"{q}-{i}" for i in range(6)])
    with open(queues / "0.queue", "a") as f:
        f.write("not json\n")  # fails the job at line 6 of split 0.queue

    def run():
        env = make_env("local", parallelism=2, micro_batch_size=2,
                       **{"state.checkpoints.dir": str(checkpoints)})
        ds = env.from_source(Queues(str(queues)), WatermarkStrategy.no_watermarks(),
                             "queues").uid("queues")
        return list(ds.execute_and_collect("resumable"))

    with pytest.raises(JobExecutionException) as failure:
        run()
    message = str(failure.value)
    assert "Source: queues" in message and "split 0.queue at offset 6" in message
    assert "'not json'" in message
    # Fix the bad line; the job goes on from its committed positions.
    lines = (queues / "0.queue").read_text().splitlines()
    (queues / "0.queue").write_text("\n".join(lines[:6]) + "\n")
    write_queue(queues, "0.queue", ["0-6"], start=6)
    assert sorted(run()) == ["0-6"]  # batches 0-2 committed 0-0..0-5 and 1-0..1-5


class AtTimestamp(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return record_timestamp


def test_the_slowest_split_holds_the_watermark_back(tmp_path):
    # Split a.queue is at 10 s, b.queue at 1 s: no window fires (not even a's [0, 2 s))
    # until b catches up. Splits without new records go idle, but all of them idle
    # leaves the watermark where it is (as in Flink).
    write_queue(tmp_path, "a.queue", ["a"] * 11)
    write_queue(tmp_path, "b.queue", ["b"] * 2)
    env = make_env("local", parallelism=1, micro_batch_size=100,
                   **{"execution.micro-batch.interval": 20})
    strategy = WatermarkStrategy.for_monotonous_timestamps() \
        .with_timestamp_assigner(AtTimestamp()).with_idleness(Duration.of_millis(300))
    sink = GatheringSink()
    (env.from_source(Queues(str(tmp_path), watch=True), strategy, "queues")
     .map(lambda v: (v, 1)).key_by(lambda r: r[0])
     .window(TumblingEventTimeWindows.of(Duration.of_seconds(2)))
     .reduce(lambda x, y: (x[0], x[1] + y[1])).add_sink(sink))
    client = env.execute_async()
    try:
        time.sleep(1.5)
        assert sink.values() == []
        write_queue(tmp_path, "b.queue", ["b"], start=10)  # b reaches 10 s
        deadline = time.time() + 30
        while len(sink.values()) < 6 and time.time() < deadline:
            time.sleep(0.05)
        assert sorted(sink.values()) == [("a", 2)] * 5 + [("b", 2)]
    finally:
        client.cancel().result(timeout=30)


class Countdown(SourceFunction):
    def __init__(self, n):
        self.n = n

    def run(self, ctx):
        for i in range(self.n):
            ctx.collect(i)


def test_add_source_runs_a_python_source_function():
    env = make_env("local", parallelism=2, micro_batch_size=7)
    got = list(env.add_source(Countdown(50)).map(lambda x: x * 2).execute_and_collect())
    assert sorted(got) == [i * 2 for i in range(50)]


def test_add_source_without_run_fails_when_the_job_is_built():
    env = make_env("local")
    with pytest.raises(TypeError, match="give a SourceFunction with run"):
        env.add_source(SourceFunction())
