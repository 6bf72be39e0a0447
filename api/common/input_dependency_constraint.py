"""InputDependencyConstraint, as in ``pyflink.common.input_dependency_constraint``: when a
task with several inputs may be scheduled (a DataSet-era setting, kept for programs that
name it; it has no effect on a DataStream job)."""
from enum import Enum

__all__ = ['InputDependencyConstraint']


class InputDependencyConstraint(Enum):
    """ANY: schedule once any input has data; ALL: once every input has."""
    ANY = 0
    ALL = 1
