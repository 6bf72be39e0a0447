"""Tables over bounded DataStreams, queried with Spark SQL: the Table bridge of
``pyflink.table`` (``StreamTableEnvironment``, ``Table``, ``DataTypes``)."""
from .table import Table, TableResult, TableSchema
from .table_environment import EnvironmentSettings, StreamTableEnvironment, TableEnvironment
from .types import DataType, DataTypes

__all__ = ['DataType', 'DataTypes', 'EnvironmentSettings', 'StreamTableEnvironment', 'Table',
           'TableEnvironment', 'TableResult', 'TableSchema']
