"""Sinks that commit in tasks (Kafka, JDBC do): a committed batch's output becomes
visible while the next batch runs, made by the task of each sink subtask (on Spark in the
subtask's host, the one owner of its connections), the last batch's by a commit task. A
commit that fails fails the job with an error naming the sink and the batch, and a
restart delivers every record once."""
import json
import os

import pytest

from api.common import RestartStrategies
from engine.errors import JobExecutionException
from engine.io.sinks import Sink, StagedCommitter, StagingWriter
from tests.conftest import make_env

RECORDS = 60


class FileCommitter(StagedCommitter):
    """Writes each committed batch of a subtask to a file of its own (so a replay writes
    nothing twice), naming the process that committed it; fails once for each file
    ``fail-<batch>`` there is."""

    def __init__(self, out: str):
        self.out = out

    def deliver(self, batch_id, subtask, items):
        flag = os.path.join(self.out, f"fail-{batch_id}")
        if os.path.exists(flag):
            os.remove(flag)
            raise OSError("the store is down")
        with open(os.path.join(self.out, f"batch-{batch_id}-{subtask}.json"), "w") as f:
            json.dump({"items": items, "pid": os.getpid()}, f)


class FileSink(Sink):
    stages_in_job_directory = True

    def __init__(self, out: str):
        self.out = out

    def create_writer(self, context):
        return StagingWriter(context)

    def create_committer(self):
        return FileCommitter(self.out)


class Writes:
    """``sink_to`` argument: the engine sink above."""

    def __init__(self, out: str):
        self.out = out

    def engine_sink(self, type_info):
        return FileSink(self.out)


def run(executor: str, tmp_path, restarts: int = 0) -> dict:
    """Runs 60 records in batches of 5 through the sink (parallelism 2); returns the
    delivered files' contents by (batch, subtask)."""
    out = tmp_path / "out"
    out.mkdir(parents=True, exist_ok=True)
    env = make_env(executor, parallelism=2, micro_batch_size=5,
                   **{"state.checkpoints.dir": str(tmp_path / "checkpoints")})
    env.set_restart_strategy(RestartStrategies.fixed_delay_restart(restarts, 0)
                             if restarts else RestartStrategies.no_restart())
    env.from_collection(list(range(RECORDS))).uid("numbers") \
        .map(lambda v: v * 10).uid("times-ten").sink_to(Writes(str(out))).uid("writes")
    env.execute("sink-commits")
    delivered = {}
    for name in os.listdir(out):
        if name.startswith("batch-"):
            _, batch, subtask = name[:-len(".json")].split("-")
            with open(out / name) as f:
                delivered[int(batch), int(subtask)] = json.load(f)
    return delivered


def test_every_batch_is_delivered_once_by_one_process_per_subtask(tmp_path, spark):
    delivered = run("spark", tmp_path)
    values = sorted(v for d in delivered.values() for v in d["items"])
    assert values == [v * 10 for v in range(RECORDS)]
    assert len({batch for batch, _ in delivered}) > 5
    # The commits of a subtask, from the first batch's to the last one's, are made by
    # its host: one process, whatever Spark worker ran the task.
    for subtask in (0, 1):
        pids = {d["pid"] for (_, s), d in delivered.items() if s == subtask}
        assert len(pids) == 1
    assert os.getpid() not in {d["pid"] for d in delivered.values()}


@pytest.mark.parametrize("failing_batch", [3, "last"])
def test_a_failed_commit_names_the_sink_and_batch_and_nothing_is_lost(
        tmp_path, executor, failing_batch):
    # batch 3's commit is carried by batch 4's tasks; the last one's by a commit task
    failing = (max(b for b, _ in run(executor, tmp_path / "plain")) if failing_batch == "last"
               else failing_batch)
    expected = [v * 10 for v in range(RECORDS)]
    for name in ("failed", "restarted"):
        (tmp_path / name / "out").mkdir(parents=True)
        (tmp_path / name / "out" / f"fail-{failing}").touch()
    with pytest.raises(JobExecutionException,
                       match=rf"(?s)Writer.*committing batch {failing}.*the store is down"):
        run(executor, tmp_path / "failed")
    # Run again, it resumes after the last committed batch and commits its output once.
    resumed = run(executor, tmp_path / "failed")
    assert sorted(v for d in resumed.values() for v in d["items"]) == expected
    # With a restart allowed, the job goes on the same way.
    restarted = run(executor, tmp_path / "restarted", restarts=1)
    assert sorted(v for d in restarted.values() for v in d["items"]) == expected
