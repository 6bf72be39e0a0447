"""A batch as one task per partition index (``partition_task``): each task runs its
subtask of every stage, reads what the other tasks sent it, and never waits forever."""
import os
import shutil
import threading

import pytest

from engine.batch import BatchInfo, DataChunk, TaskFailure
from engine.executor.partition_task import StageStep, run_partition

SOURCE_A, SOURCE_B, JOIN = 0, 1, 2
EDGE_A, EDGE_B = 10, 11


def steps(upstream_of_join=((SOURCE_A, 2), (SOURCE_B, 2))):
    """Two sources of parallelism 2, each sending every subtask of a joining stage a
    chunk; the join waits for the sources in the order given."""
    return [StageStep(SOURCE_A, 2, frozenset(), (), True),
            StageStep(SOURCE_B, 2, frozenset(), (), True),
            StageStep(JOIN, 2, frozenset({EDGE_A, EDGE_B}), upstream_of_join, False)]


def subtasks(failing=None):
    """A stand-in for running one subtask: a source sends a chunk to each partition;
    the join reports which chunks it read. ``failing``: the (stage, partition) whose
    user code fails."""
    def run(stage_id, partition, batch, inputs):
        if (stage_id, partition) == failing:
            return [TaskFailure(ValueError("boom"))]
        if stage_id == JOIN:
            return [("read", partition, sorted((c.edge, c.source, c.payload) for c in inputs))]
        edge = EDGE_A if stage_id == SOURCE_A else EDGE_B
        return [DataChunk(edge, partition, target, f"{stage_id}/{partition}->{target}")
                for target in range(2)] + [("ran", stage_id, partition, inputs)]
    return run


def run_all(tmp_path, step_list, run_subtask, partitions=2):
    """Runs every partition's task in a thread of its own; their results by partition."""
    batch = BatchInfo("run", 0, -1, True, str(tmp_path), 0, False,
                      exchange_dir=str(tmp_path / "exchange"))
    os.makedirs(batch.exchange_dir)
    results = {}

    def task(p):
        results[p] = list(run_partition(run_subtask, step_list, batch, p,
                                        {SOURCE_A: [f"a{p}"], SOURCE_B: [f"b{p}"]}))
    threads = [threading.Thread(target=task, args=(p,), daemon=True)
               for p in range(partitions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=20)
    assert not any(thread.is_alive() for thread in threads), "a task waits forever"
    return results


def test_each_subtask_reads_what_every_upstream_subtask_sent_its_index(tmp_path):
    results = run_all(tmp_path, steps(), subtasks())
    for p in range(2):
        assert ("ran", SOURCE_A, p, [f"a{p}"]) in results[p]
        assert ("ran", SOURCE_B, p, [f"b{p}"]) in results[p]
        assert ("read", p, [(EDGE_A, 0, f"0/0->{p}"), (EDGE_A, 1, f"0/1->{p}"),
                            (EDGE_B, 0, f"1/0->{p}"), (EDGE_B, 1, f"1/1->{p}")]) \
            in results[p]
        assert not any(isinstance(r, DataChunk) for r in results[p])  # none for the driver


@pytest.mark.parametrize("order", [((SOURCE_A, 2), (SOURCE_B, 2)),
                                   ((SOURCE_B, 2), (SOURCE_A, 2))])
def test_a_failing_subtask_stops_the_tasks_that_wait_for_it(tmp_path, order):
    """Partition 0 fails in the first source and never runs the second: a task waiting
    for either stops, whichever it waits for first."""
    results = run_all(tmp_path, steps(order), subtasks(failing=(SOURCE_A, 0)))
    assert [type(r) for r in results[0]] == [TaskFailure]
    assert not any(r[0] == "read" for r in results[1])  # the join did not run


def test_a_task_waiting_when_the_batch_ends_stops_with_an_error(tmp_path):
    batch = BatchInfo("run", 0, -1, True, str(tmp_path), 0, False,
                      exchange_dir=str(tmp_path / "exchange"))
    os.makedirs(batch.exchange_dir)
    failure = []

    def task():  # partition 1's task, whose partner never runs
        try:
            list(run_partition(subtasks(), steps(), batch, 1,
                               {SOURCE_A: ["a1"], SOURCE_B: ["b1"]}))
        except RuntimeError as e:
            failure.append(e)
    thread = threading.Thread(target=task, daemon=True)
    thread.start()
    thread.join(timeout=0.5)
    assert thread.is_alive()  # waiting for partition 0
    shutil.rmtree(batch.exchange_dir)  # the driver ends the batch
    thread.join(timeout=10)
    assert not thread.is_alive()
    assert "the batch ended while this task waited for subtask 0 of stage 0" \
        in str(failure[0])
