"""The ``print`` and ``blackhole`` SQL connectors: sinks that print each row as
``+I[a, b]`` (``-U[...]``, ``+U[...]``, ``-D[...]`` for a changelog's rows) or drop it."""
from typing import Callable, Optional

from api.common.typeinfo import Types
from api.datastream.data_stream import DataStream
from api.datastream.functions import SinkFunction
from ..ddl import TableDefinition
from .options import SqlConnector, check_options, flag, row_type

__all__ = ['PRINT', 'BLACKHOLE']


def _check_print(definition: TableDefinition) -> None:
    options = definition.options
    check_options('print', options, ['print-identifier', 'standard-error', 'sink.parallelism'])
    if flag(options, 'standard-error'):
        raise NotImplementedError("the print connector's 'standard-error' = 'true' is not "
                                  "available here: rows are printed to standard output")


def print_sink(definition: TableDefinition,
               parallelism: Optional[int] = None) -> Callable[[DataStream], object]:
    """What prints a stream of the table's rows (at ``parallelism``, or the sink's
    'sink.parallelism', or the environment's), each line prefixed by 'print-identifier'."""
    options = definition.options
    to_string = row_type(definition).to_java_string
    parallelism = int(options.get('sink.parallelism', parallelism or 0)) or None

    def write(stream: DataStream):
        lines = stream.map(to_string, Types.STRING())
        if parallelism is not None:
            lines = lines.set_parallelism(parallelism)
        sink = lines.print(options.get('print-identifier'))
        return sink if parallelism is None else sink.set_parallelism(parallelism)
    return write


def blackhole_sink(definition: TableDefinition,
                   parallelism: Optional[int] = None) -> Callable[[DataStream], object]:
    """What drops every row of a stream."""
    return lambda stream: stream.add_sink(_Blackhole())


class _Blackhole(SinkFunction):
    """Drops every row (the blackhole connector)."""

    def invoke(self, value, context):
        pass


PRINT = SqlConnector(_check_print, sink=print_sink, upserts=True)
BLACKHOLE = SqlConnector(lambda d: check_options('blackhole', d.options, []),
                         sink=blackhole_sink, upserts=True)
