"""What the SQL connectors share: :class:`SqlConnector`, a connector's checks and what
reads and writes its tables, and the checks of ``WITH`` options in Flink's words."""
import re
from dataclasses import dataclass
from typing import Callable, Dict, Iterable, Optional, Tuple

from api.common.typeinfo import RowTypeInfo, Types
from api.datastream.checkpoint_config import _millis
from ..ddl import TableDefinition
from ..types import type_info_of

__all__ = ['SqlConnector', 'check_options', 'duration', 'flag', 'memory_size', 'row_type']


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
    ``PARTITIONED BY``; ``metadata``: the metadata keys its source reads (its rows then
    hold the values of the table's metadata columns where they are declared)."""
    check: Callable[[TableDefinition], None]
    source: Optional[Callable] = None
    sink: Optional[Callable] = None
    upserts: bool = False
    check_updates: Optional[Callable[[TableDefinition], None]] = None
    changelog: Optional[Callable] = None
    partitioned: bool = False
    metadata: Tuple[str, ...] = ()


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


def duration(options: Dict[str, str], key: str, default: str) -> int:
    """A duration option in ms, in Flink's syntax ('30 min', '10 s', '500 ms'; a number
    alone is ms)."""
    try:
        return _millis(options, key, _millis({key: default}, key, 0))
    except ValueError:
        raise ValueError(f"Could not parse value '{options[key]}' for key '{key}': a "
                         "duration is e.g. '500 ms', '10 s' or '30 min'") from None


_MEMORY = re.compile(r'^\s*(\d+)\s*([a-z]*)\s*$')
_MEMORY_UNITS = {**dict.fromkeys(('', 'b', 'bytes'), 1),
                 **dict.fromkeys(('k', 'kb', 'kibibytes'), 1 << 10),
                 **dict.fromkeys(('m', 'mb', 'mebibytes'), 1 << 20),
                 **dict.fromkeys(('g', 'gb', 'gibibytes'), 1 << 30),
                 **dict.fromkeys(('t', 'tb', 'tebibytes'), 1 << 40)}


def memory_size(options: Dict[str, str], key: str, default: str) -> int:
    """A memory size option in bytes, in Flink's syntax ('128MB', '64 kb'; a number alone is
    bytes)."""
    value = options.get(key, default)
    match = _MEMORY.match(value.lower())
    if match is None or match.group(2) not in _MEMORY_UNITS:
        raise ValueError(f"Could not parse value '{value}' for key '{key}': a memory size is "
                         "e.g. '128MB', '64 kb' or '1024' (bytes)")
    return int(match.group(1)) * _MEMORY_UNITS[match.group(2)]


def row_type(definition: TableDefinition, persisted: bool = False) -> RowTypeInfo:
    """The type of a stream of the table's rows: Rows named by its physical columns (or
    ``persisted``: the columns an insert writes)."""
    columns = definition.persisted_columns() if persisted else definition.physical_columns()
    return Types.ROW_NAMED([n for n, _ in columns], [type_info_of(t) for _, t in columns])
