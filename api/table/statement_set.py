"""StatementSet, as in ``pyflink.table``: inserts into sink tables gathered to run in one
job (``t_env.create_statement_set()``)."""
from typing import List

from .table_result import TableResult

__all__ = ['StatementSet']


class StatementSet:
    """Inserts into sink tables (tables of CREATE TABLE ... WITH ('connector' = 'print'
    ...)), run together by ``execute()``."""

    def __init__(self, t_env):
        self._t_env = t_env
        self._inserts: List[tuple] = []

    def add_insert(self, target_path_or_descriptor: str, table,
                   overwrite: bool = False) -> 'StatementSet':
        """Adds writing ``table`` to the sink table ``target_path_or_descriptor``."""
        self._inserts.append((target_path_or_descriptor, table, overwrite))
        return self

    def add_insert_sql(self, stmt: str) -> 'StatementSet':
        """Adds an ``INSERT INTO sink SELECT ...`` statement."""
        self._inserts.append(self._t_env._insert_statement(stmt))
        return self

    def execute(self) -> TableResult:
        """Runs the inserts added so far, in one job, and returns when they are written."""
        inserts, self._inserts = self._inserts, []
        return self._t_env._execute_inserts(inserts)
