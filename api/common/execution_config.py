"""ExecutionConfig, as in ``pyflink.common.ExecutionConfig`` (the parts that apply here)."""
from typing import Dict


class ExecutionConfig:
    """Job-wide settings: global job parameters and the auto-watermark interval."""

    def __init__(self):
        self._global_job_parameters: Dict[str, str] = {}
        self._auto_watermark_interval = 200

    def set_global_job_parameters(self, global_job_parameters_dict: Dict) -> "ExecutionConfig":
        """Sets parameters readable by every function through
        ``RuntimeContext.get_job_parameter(key, default)``."""
        self._global_job_parameters = {str(k): str(v) for k, v in global_job_parameters_dict.items()}
        return self

    def get_global_job_parameters(self) -> Dict[str, str]:
        return dict(self._global_job_parameters)

    def set_auto_watermark_interval(self, interval: int) -> "ExecutionConfig":
        """Interval (ms) of periodic watermark emission."""
        self._auto_watermark_interval = interval
        return self

    def get_auto_watermark_interval(self) -> int:
        return self._auto_watermark_interval
