"""One Spark task per partition index for a whole micro-batch (Spark with a local master).

A batch of several stages would be one Spark job of several Spark stages, each
waiting for the one before to end (~40-100 ms a boundary here, with the shuffle of
the chunks' names). Where every subtask of the batch can run at once, the batch is
instead one barrier stage (Spark launches all its tasks together) of one task per
partition index: task p runs subtask p of every stage, in plan order. A stage's
chunks for other partitions are files of the batch's exchange directory, as in a
shuffle; when a subtask has run, the task lists the chunks it sent in a *done file*
of its own, and a task waits for the done files of the upstream subtasks before it
runs a stage. Waiting cannot deadlock: every task runs the stages in the same order,
and a stage waits only for stages before it.

A subtask whose user code failed publishes a done file without chunks: the tasks that
wait for it stop, and the driver reports the failure. A task that dies makes Spark
end the whole barrier stage, and the driver removes the exchange directory, which
ends any task still waiting.
"""
import os
import pickle
import time
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple

from engine.batch import BatchInfo, DataChunk, TaskFailure

POLL_SECONDS = 0.0005


class StageStep(NamedTuple):
    """What a partition's task needs to know of one stage of the plan."""
    stage_id: int
    parallelism: int
    in_edges: frozenset
    upstream: Tuple[Tuple[int, int], ...]  # (stage id, parallelism) of the stages feeding it
    feeds_others: bool                     # some stage reads its chunks


def stage_steps(plan) -> List[StageStep]:
    """The plan's stages in plan order (upstream first), as tasks need them."""
    stage_of = {e: plan.nodes[edge.src].stage for e, edge in plan.edges.items()}
    feeding = {stage_of[e] for stage in plan.stages for e in stage.in_edges}
    by_id = {stage.id: stage for stage in plan.stages}
    return [StageStep(stage.id, stage.parallelism, frozenset(stage.in_edges),
                      tuple((s, by_id[s].parallelism)
                            for s in sorted({stage_of[e] for e in stage.in_edges})),
                      stage.id in feeding)
            for stage in plan.stages]


def run_partition(run_subtask, steps: List[StageStep], batch: BatchInfo, partition: int,
                  source_ranges: Dict[int, list]) -> Iterator:
    """Runs subtask ``partition`` of every stage that has one, in plan order; yields the
    results for the driver. ``run_subtask(stage_id, partition, batch, inputs)`` runs one
    subtask and returns its results."""
    own: List[DataChunk] = []  # chunks sent to this partition index, by earlier stages
    for index, step in enumerate(steps):
        if partition >= step.parallelism:
            continue
        if step.stage_id in source_ranges:
            inputs = source_ranges[step.stage_id]
        else:
            inputs = _inputs(step, partition, own, batch.exchange_dir)
        sent: List[DataChunk] = []
        failed = inputs is None  # an upstream subtask failed: the driver reports it
        if not failed:
            for result in run_subtask(step.stage_id, partition, batch, inputs):
                if isinstance(result, DataChunk):
                    (own if result.target == partition else sent).append(result)
                else:
                    failed = failed or isinstance(result, TaskFailure)
                    yield result
        if failed:  # no subtask of this partition runs after it, none waits for them
            for later in steps[index:]:
                if later.feeds_others and partition < later.parallelism:
                    _publish(batch.exchange_dir, later.stage_id, partition, None)
            return
        if step.feeds_others:
            _publish(batch.exchange_dir, step.stage_id, partition, sent)


def _inputs(step: StageStep, partition: int, own: List[DataChunk],
            exchange_dir: str) -> Optional[List[DataChunk]]:
    """The chunks the stage's subtask ``partition`` reads, once every upstream subtask has
    run; None if one of them failed."""
    inputs = [chunk for chunk in own if chunk.edge in step.in_edges]
    for stage_id, parallelism in step.upstream:
        for source in range(parallelism):
            if source == partition:
                continue
            sent = _wait_for(exchange_dir, stage_id, source)
            if sent is None:
                return None
            inputs.extend(chunk for chunk in sent
                          if chunk.target == partition and chunk.edge in step.in_edges)
    return inputs


def _done_file(exchange_dir: str, stage_id: int, partition: int) -> str:
    return os.path.join(exchange_dir, f"done-{stage_id}-{partition}")


def _publish(exchange_dir: str, stage_id: int, partition: int,
             sent: Optional[List[DataChunk]]) -> None:
    """Writes the subtask's done file: the chunks it sent to other partitions (their
    files are complete by now), or None if it failed."""
    path = _done_file(exchange_dir, stage_id, partition)
    partial = f"{path}.{os.getpid()}"
    with open(partial, "wb") as f:
        pickle.dump(sent, f, pickle.HIGHEST_PROTOCOL)
    os.replace(partial, path)


def _wait_for(exchange_dir: str, stage_id: int, partition: int) -> Optional[List[DataChunk]]:
    """What an upstream subtask's done file holds, once it is there."""
    path = _done_file(exchange_dir, stage_id, partition)
    while not os.path.exists(path):
        if not os.path.isdir(exchange_dir):
            raise RuntimeError(f"the batch ended while this task waited for subtask "
                               f"{partition} of stage {stage_id}")
        time.sleep(POLL_SECONDS)
    with open(path, "rb") as f:
        return pickle.load(f)
