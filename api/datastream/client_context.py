"""What the command line client (``cli/main.py``) sets for a program it runs, as Flink's
context environment: the configuration every environment starts from, and whether
executing a job only shows its plan (``ProgramAbortException``)."""
from contextlib import contextmanager
from typing import Optional

from api.common.configuration import Configuration


class ProgramAbortException(BaseException):
    """Ends a program run by ``spark-datastream plan`` at its first execute: carries the
    plan of the job it would have run (as Flink's client does to show a plan). A
    BaseException, so that a program's ``except Exception`` does not swallow it."""

    def __init__(self, plan: str):
        super().__init__("The program was run to show its plan only.")
        self.plan = plan


class _ClientContext:
    """The command line's settings for the program it runs."""

    def __init__(self, configuration: Configuration, plan_only: bool):
        self.configuration = configuration
        self.plan_only = plan_only


_client_context: Optional[_ClientContext] = None


@contextmanager
def client_context(configuration: Configuration, plan_only: bool = False):
    """Runs the block as a program started by the command line client: environments it
    creates with ``get_execution_environment`` start from ``configuration`` (what the
    program configures is applied over it), and with ``plan_only`` its first execute
    raises ProgramAbortException with the job's plan instead of running it."""
    global _client_context
    previous, _client_context = _client_context, _ClientContext(configuration, plan_only)
    try:
        yield
    finally:
        _client_context = previous


def client_configuration(configuration: Optional[Configuration]) -> Optional[Configuration]:
    """``configuration`` applied over the command line's settings in a program the command
    line client runs; ``configuration`` itself otherwise."""
    if _client_context is None:
        return configuration
    merged = Configuration(_client_context.configuration)
    if configuration is not None:
        merged.add_all(configuration)
    return merged


def plan_only() -> bool:
    """Whether executing a job only shows its plan (``spark-datastream plan``)."""
    return _client_context is not None and _client_context.plan_only
