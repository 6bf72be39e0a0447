"""What the SQL connectors share: :class:`SqlConnector`, a connector's checks and what
reads and writes its tables, and the checks of ``WITH`` options in Flink's words."""
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, Optional

from api.common.typeinfo import RowTypeInfo, Types
from ..ddl import TableDefinition
from ..types import type_info_of

__all__ = ['SqlConnector', 'check_options', 'flag', 'row_type']


@dataclass(frozen=True)
class SqlConnector:
    """A SQL connector: ``check`` fails for an unknown or missing option (when the table is
    created, as Flink's planner fails); ``source(env, definition, parallelism)`` is the
    DataStream of the table's rows (Rows named by its physical columns) and
    ``sink(definition, parallelism)`` what writes such a stream; None where the connector
    does not read (or write). ``upserts``: its sink takes a changelog (``-U``/``+U``/``-D``
    rows), written as upserts on the primary key, where ``check_updates(definition)``
    (if given) does not fail for the table; ``changelog(stream, definition)``: its
    source's stream is one of upserts and deletes, and this the table's changelog (with
    ``node()`` and ``changelog_stream(row_type, uid)``); ``partitioned``: its tables may be
    ``PARTITIONED BY``."""
    check: Callable[[TableDefinition], None]
    source: Optional[Callable] = None
    sink: Optional[Callable] = None
    upserts: bool = False
    check_updates: Optional[Callable[[TableDefinition], None]] = None
    changelog: Optional[Callable] = None
    partitioned: bool = False


def check_options(connector: str, options: Dict[str, str], supported: Iterable[str],
                  required: Iterable[str] = ()) -> None:
    """Fails naming the options of ``options`` that are not ``supported`` (nor
    ``properties.*`` when that is), or the ``required`` ones missing."""
    supported = set(supported) | {'connector'}
    unsupported = sorted(k for k in options if k not in supported and not (
        'properties.*' in supported and k.startswith('properties.')))
    if unsupported:
        raise ValueError(f"Unsupported options found for '{connector}'. Unsupported options: "
                         f"{', '.join(unsupported)}. Supported options: "
                         f"{', '.join(sorted(supported))}")
    missing = [k for k in required if k not in options]
    if missing:
        raise ValueError(f"One or more required options are missing for '{connector}'. "
                         f"Missing required options are: {', '.join(missing)}")


def flag(options: Dict[str, str], key: str, default: bool = False) -> bool:
    """A boolean option ('true' or 'false')."""
    value = options.get(key, str(default)).strip().lower()
    if value not in ('true', 'false'):
        raise ValueError(f"Could not parse value '{options[key]}' for key '{key}': a boolean "
                         "option is 'true' or 'false'")
    return value == 'true'


def row_type(definition: TableDefinition) -> RowTypeInfo:
    """The type of a stream of the table's rows: Rows named by its physical columns."""
    columns = definition.physical_columns()
    return Types.ROW_NAMED([n for n, _ in columns], [type_info_of(t) for _, t in columns])
