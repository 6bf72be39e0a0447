"""The exceptions of ``pyflink.util.exceptions`` that programs here may catch."""

__all__ = ['TableException']


class TableException(Exception):
    """A Table API call Flink's planner refuses; ``str()`` starts with the Java class name,
    as PyFlink's does."""

    def __init__(self, msg: str):
        super().__init__('org.apache.flink.table.api.TableException: ' + msg)
