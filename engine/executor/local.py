"""The in-process executor: runs the same task function sequentially in the driver.

For fast tests and debugging. Chunks cross stages pickled, as on Spark, so a
record that Spark could not ship fails here too.
"""
import os
from collections import defaultdict
from typing import Dict, List, Optional

from engine.batch import BatchInfo, CompiledJob, DataChunk
from engine.executor.python_dependencies import Bundle
from engine.runtime.task import forget_job, run_task
from engine.executor.base import Executor

NO_WORKING_DIRECTORY = (
    "add_python_archive and register_cached_file: functions find these files relative to "
    "their working directory, which the in-process 'local' executor does not change; run "
    "the job on Spark (the default 'execution.executor').")


class LocalExecutor(Executor):
    def __init__(self, bundle: Optional[Bundle] = None):
        if bundle is not None and bundle.has_working_directory:
            raise ValueError(NO_WORKING_DIRECTORY)
        self.job = None
        self._bundle = bundle

    def start(self, job: CompiledJob) -> None:
        if self._bundle is not None:  # the tasks run here: the driver imports its files
            bundle = self._bundle
            bundle.activate(bundle.extract(os.path.dirname(bundle.archive)),
                            working_directory=False)
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
