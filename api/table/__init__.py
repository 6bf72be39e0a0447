"""Tables over bounded DataStreams, queried with Spark SQL or the Table API: the Table
bridge of ``pyflink.table`` (``StreamTableEnvironment``, ``Table``, ``Schema``,
``DataTypes``; expressions in ``api.table.expressions``, functions in ``api.table.udf``)."""
from .schema import Schema
from .statement_set import StatementSet
from .table import GroupedTable, Table
from .table_config import TableConfig
from .table_environment import EnvironmentSettings, StreamTableEnvironment, TableEnvironment
from .table_result import ResultKind, TableResult
from .table_schema import TableSchema
from .types import DataType, DataTypes

__all__ = ['DataType', 'DataTypes', 'EnvironmentSettings', 'GroupedTable', 'ResultKind',
           'Schema', 'StatementSet', 'StreamTableEnvironment', 'Table', 'TableConfig',
           'TableEnvironment', 'TableResult', 'TableSchema']
