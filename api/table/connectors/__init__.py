"""The SQL connectors of ``CREATE TABLE ... WITH ('connector' = ...)``, each a module of
its own on the project's DataStream connectors, with Flink's option names: ``datagen``,
``print``, ``blackhole``, ``filesystem`` (csv, json, parquet), ``kafka``,
``upsert-kafka`` and ``jdbc``. An unknown or missing required option fails when the
table is created, naming it."""
from ..ddl import TableDefinition
from .datagen import DATAGEN, datagen_fields
from .filesystem import FILESYSTEM
from .jdbc import JDBC
from .kafka import KAFKA, UPSERT_KAFKA
from .options import SqlConnector
from .print_sinks import BLACKHOLE, PRINT

__all__ = ['SqlConnector', 'connector_of', 'datagen_fields']

_CONNECTORS = {'datagen': DATAGEN, 'print': PRINT, 'blackhole': BLACKHOLE,
               'filesystem': FILESYSTEM, 'kafka': KAFKA, 'upsert-kafka': UPSERT_KAFKA,
               'jdbc': JDBC}


def connector_of(definition: TableDefinition) -> SqlConnector:
    """The connector of a table (its 'connector' option), the table's options checked."""
    name = definition.options.get('connector')
    if name is None:
        raise ValueError("Table options do not contain an option key 'connector' for "
                         "discovering a connector.")
    connector = _CONNECTORS.get(name)
    if connector is None:
        raise ValueError(f"Could not find any factory for identifier '{name}' that implements "
                         "'org.apache.flink.table.factories.DynamicTableFactory'. Available "
                         f"factory identifiers are: {', '.join(sorted(_CONNECTORS))}")
    if definition.partition_keys and not connector.partitioned:
        raise NotImplementedError(f"CREATE TABLE: PARTITIONED BY is not available for the "
                                  f"'{name}' connector here (only for 'filesystem')")
    for column in definition.metadata_columns():
        key = column.metadata_key or column.name
        if key not in connector.metadata:
            raise ValueError(
                f"Invalid metadata key '{key}' in column '{column.name}' of table "
                f"'default_catalog.default_database.{definition.name}'. The '{name}' connector "
                f"supports the following metadata keys for reading: "
                f"{', '.join(connector.metadata) or '(none)'}")
    connector.check(definition)
    return connector
