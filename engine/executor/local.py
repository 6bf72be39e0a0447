"""The in-process executor: runs the same task function sequentially in the driver.

For fast tests and debugging. Chunks cross stages pickled, as on Spark, so a
record that Spark could not ship fails here too.
"""
from collections import defaultdict
from typing import Dict, List

from ..batch import BatchInfo, CompiledJob, DataChunk
from ..task import forget_job, run_task
from .base import Executor


class LocalExecutor(Executor):
    def __init__(self):
        self.job = None

    def start(self, job: CompiledJob) -> None:
        self.job = job

    def run_batch(self, batch: BatchInfo, source_ranges: Dict[int, List[list]]) -> list:
        job = self.job
        plan = job.plan
        inbox = defaultdict(list)
        results = []
        for stage in plan.stages:
            for partition in range(stage.parallelism):
                inputs = (source_ranges[stage.id][partition] if stage.is_source
                          else inbox.pop((stage.id, partition), []))
                for result in run_task(lambda: job, job.run_id, stage.id, partition, batch,
                                       inputs):
                    if isinstance(result, DataChunk):
                        dst_stage = plan.nodes[plan.edges[result.edge].dst].stage
                        inbox[(dst_stage, result.target)].append(result)
                    else:
                        results.append(result)
        return results

    def stop(self) -> None:
        if self.job is not None:
            forget_job(self.job.run_id)
