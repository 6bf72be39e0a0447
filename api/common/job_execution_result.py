"""JobExecutionResult, as in ``pyflink.common.job_execution_result``."""
from typing import Any, Dict, Optional

from .job_id import JobID


class JobExecutionResult:
    """The result of a finished job: its id, net runtime, accumulators and metrics."""

    def __init__(self, job_id: JobID, net_runtime_ms: int,
                 accumulators: Dict[str, Any] = None, metrics: Optional[dict] = None):
        self._job_id = job_id
        self._net_runtime = net_runtime_ms
        self._accumulators = dict(accumulators or {})
        self._metrics = metrics

    def get_job_id(self) -> JobID:
        return self._job_id

    def is_job_execution_result(self) -> bool:
        return True

    def get_job_execution_result(self) -> "JobExecutionResult":
        return self

    def get_net_runtime(self) -> int:
        """Net execution time of the job in milliseconds."""
        return self._net_runtime

    def get_accumulator_result(self, accumulator_name: str):
        return self._accumulators.get(accumulator_name)

    def get_all_accumulator_results(self) -> Dict[str, Any]:
        return dict(self._accumulators)

    def get_metrics(self) -> Optional[dict]:
        """The job's metrics after its last batch (not in PyFlink, whose metrics go to
        reporters only): ``{"job_name", "job_id", "batch", "timestamp", "job": {...},
        "operators": {operator name: {metric: value}}}``, as in
        ``<job dir>/metrics.jsonl``; None if no batch was committed."""
        return self._metrics

    def __str__(self):
        return (f"Program execution finished\nJob with JobID {self._job_id} has finished.\n"
                f"Job Runtime: {self._net_runtime} ms\n")
