"""Python scalar user-defined functions, as ``pyflink.table.udf``: ``@udf(result_type=...)``
wraps a function (or a ScalarFunction's ``eval``) that tables call per row, in Spark's
Python workers, by ``call('name', ...)`` once registered with
``t_env.create_temporary_function`` (also in SQL), or directly: ``add_one(col('a'))``."""
import functools
from typing import Callable

from .expressions import Expression, call
from .types import DataType, checked_data_type

__all__ = ['FunctionContext', 'ScalarFunction', 'UserDefinedFunctionWrapper', 'udf']


class FunctionContext:
    """What ``open`` of a user-defined function receives."""

    def get_metric_group(self):
        """Not available: functions of tables have no metrics here."""
        raise NotImplementedError("metrics of Table API functions are not available here")

    def get_job_parameter(self, key: str, default_value: str) -> str:
        """``default_value``: tables' jobs have no job parameters here."""
        return default_value


class ScalarFunction:
    """A user-defined scalar function: ``eval(*args)`` maps one row's arguments to a
    value; ``open`` runs before the first call in each Spark task."""

    def open(self, function_context: FunctionContext):
        """Called before the first ``eval`` of a Spark task."""

    def eval(self, *args):
        """The function's value for one row's arguments."""
        raise NotImplementedError

    def close(self):
        """Not called here: Spark's Python workers end without a hook."""


class UserDefinedFunctionWrapper:
    """A Python scalar function with its result type (what ``udf`` returns); calling it
    with expressions makes an expression: ``add_one(col('a'))``."""

    def __init__(self, func, result_type: DataType, name: str = None,
                 deterministic: bool = True):
        self._func = func
        self._result_type = checked_data_type('udf()', 'result_type', result_type)
        self._name = name or getattr(func, '__name__', type(func).__name__)
        self._deterministic = deterministic  # False: Spark calls it for every row

    def __call__(self, *args) -> Expression:
        return call(self, *args)

    def python_function(self) -> Callable:
        """The per-row callable Spark runs: a ScalarFunction is opened on first use."""
        func = self._func
        if not isinstance(func, ScalarFunction):
            return func
        opened = []

        def evaluate(*args):
            if not opened:
                func.open(FunctionContext())
                opened.append(True)
            return func.eval(*args)
        return evaluate


def udf(f=None, input_types=None, result_type: DataType = None, deterministic: bool = None,
        name: str = None, func_type: str = 'general', udf_type: str = None):
    """A scalar user-defined function of ``f`` (a function, lambda or ScalarFunction),
    also as a decorator: ``@udf(result_type=DataTypes.BIGINT())``. Only 'general'
    (row-at-a-time) functions are available here; ``input_types`` are not needed (values
    arrive as their columns' Python values)."""
    if (udf_type or func_type) != 'general':
        raise NotImplementedError(f"udf(func_type={udf_type or func_type!r}): only 'general' "
                                  "(row-at-a-time) Python functions are available here")
    if result_type is None:
        raise ValueError("udf(): result_type must be given (e.g. DataTypes.BIGINT())")
    wrap = functools.partial(UserDefinedFunctionWrapper, result_type=result_type, name=name,
                             deterministic=True if deterministic is None else deterministic)
    return wrap if f is None else wrap(f)
