"""TableResult, as in ``pyflink.table``: a table's computed rows, collected or printed as
Flink's tableau (boxed columns of widths by type, an ``op`` column in STREAMING mode)."""
import datetime
import decimal
import unicodedata
from enum import Enum
from typing import Callable, Iterable, Iterator, List, Optional, Union

from api.common.typeinfo import _java_float_string
from api.common.types import Row, RowKind
from .data_frames import Columns
from .table_schema import TableSchema
from .types import DataType

__all__ = ['TableResult', 'CloseableResultIterator', 'ResultKind']

_MAX_COLUMN_WIDTH = 30
_NULL = '<NULL>'


class ResultKind(Enum):
    """What a result holds: SUCCESS of a statement, or rows (SUCCESS_WITH_CONTENT)."""
    SUCCESS = 0
    SUCCESS_WITH_CONTENT = 1


class TableResult:
    """The result of ``table.execute()``, ``execute_sql(...)`` or ``execute_insert(...)``:
    ``collect()`` its rows or ``print()`` them."""

    def __init__(self, columns: Columns, rows: Union[List[Row], 'CloseableResultIterator'],
                 streaming: bool = False,
                 result_kind: ResultKind = ResultKind.SUCCESS_WITH_CONTENT,
                 printed: Optional[str] = None):
        self._columns = columns
        self._rows = rows
        self._streaming = streaming
        self._result_kind = result_kind
        self._printed = printed  # what print() shows of a statement's result

    def get_table_schema(self) -> TableSchema:
        """The names and types of the result's columns."""
        return TableSchema(self._columns)

    def get_result_kind(self) -> ResultKind:
        """SUCCESS for a statement, SUCCESS_WITH_CONTENT for rows."""
        return self._result_kind

    def get_job_client(self):
        """None: the result is complete when the statement returns (no running job)."""
        return None

    def wait(self, timeout_ms: int = None) -> None:
        """Returns at once: the result is complete when the statement returns."""

    def collect(self) -> 'CloseableResultIterator':
        """The result's rows (each a Row of its kind: INSERT, or a changelog's), in a
        closeable iterator: ``with result.collect() as rows: ...``. Of an unbounded table,
        the rows come as the job's batches complete, and closing the iterator cancels the
        job."""
        if isinstance(self._rows, CloseableResultIterator):
            return self._rows
        return CloseableResultIterator(iter(self._rows))

    def print(self) -> None:
        """Prints the rows as Flink's tableau: a box of columns, ``op`` (the row kind) first
        in STREAMING mode, then ``N rows in set`` (or ``Empty set``); the rows of an
        unbounded table as they come."""
        if self._printed is not None:
            print(self._printed)
            return
        with self.collect() as rows:
            for piece in tableau_pieces(self._columns, rows, self._streaming):
                print(piece, end='', flush=True)


def tableau(columns: Columns, rows: List[Row], row_kinds: bool) -> str:
    """Flink's tableau of ``rows``: right-aligned cells, a column as wide as its type
    needs (and its name), longer values cut with ``...``."""
    return ''.join(tableau_pieces(columns, rows, row_kinds))


def tableau_pieces(columns: Columns, rows: Iterable[Row], row_kinds: bool) -> Iterator[str]:
    """The tableau of ``rows`` piece by piece as they come: the header with the first row,
    a line per row, the count at their end."""
    names = [n for n, _ in columns]
    widths = [max(len(n), _type_width(t)) for n, t in columns]
    if row_kinds:
        names, widths = ['op'] + names, [2] + widths
    border = '+' + '+'.join('-' * (w + 2) for w in widths) + '+\n'

    def line(values):
        return '|' + '|'.join(' %s ' % _fit(v, w) for v, w in zip(values, widths)) + '|\n'
    count = 0
    for row in rows:
        if not count:
            yield border + line(names) + border
        cells = [_cell(v, t) for v, (_, t) in zip(row, columns)]
        yield line([str(row.get_row_kind())] + cells if row_kinds else cells)
        count += 1
    yield (border + '%d row%s in set\n' % (count, '' if count == 1 else 's')) if count \
        else 'Empty set\n'


def _type_width(data_type: DataType) -> int:
    root, args = data_type._root, data_type._args
    width = {'TINYINT': 4, 'SMALLINT': 6, 'INT': 11, 'BIGINT': 20, 'BOOLEAN': 5,
             'DATE': 10}.get(root)
    if root == 'DECIMAL':
        width = args[0] + 2  # a sign and a decimal point
    elif root == 'TIME':
        width = 8 if args[0] == 0 else args[0] + 9
    elif root in ('TIMESTAMP', 'TIMESTAMP_LTZ'):
        width = 19 if args[0] == 0 else args[0] + 20
    return max(width or _MAX_COLUMN_WIDTH, len(_NULL))


def _display_width(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in 'WF' else 1 for c in text)


def _fit(text: str, width: int) -> str:
    if _display_width(text) > width:
        cut = ''
        for c in text:
            if _display_width(cut + c) > width - 3:
                break
            cut += c
        text = cut + '...'
    return ' ' * (width - _display_width(text)) + text


def _cell(value, data_type: DataType) -> str:
    return _NULL if value is None else value_string(value, data_type)


def value_string(value, data_type: DataType) -> str:
    """A value as Flink casts it to a string: ``TRUE``, ``1.0E20``, ``2024-01-02
    03:04:05.120``, ``[1, 2]``, ``{a=1}``."""
    if value is None:
        return 'NULL'
    root, args = data_type._root, data_type._args
    if root == 'BOOLEAN':
        return 'TRUE' if value else 'FALSE'
    if root in ('FLOAT', 'DOUBLE'):
        return _java_float_string(value, root == 'FLOAT')
    if isinstance(value, decimal.Decimal):
        return format(value, 'f')
    if isinstance(value, datetime.datetime):
        text = value.strftime('%Y-%m-%d %H:%M:%S')
        precision = args[0] if args else 6
        return text + ('.' + ('%06d' % value.microsecond).ljust(precision, '0')[:precision]
                       if precision else '')
    if isinstance(value, datetime.date):
        return value.isoformat()
    if isinstance(value, bytes):
        return "x'%s'" % value.hex()
    if root == 'ARRAY':
        return '[%s]' % ', '.join(value_string(v, args[0]) for v in value)
    if root == 'MAP':
        return '{%s}' % ', '.join('%s=%s' % (value_string(k, args[0]), value_string(v, args[1]))
                                  for k, v in value.items())
    if root == 'ROW':
        return '(%s)' % ', '.join(value_string(v, t) for v, (_, t) in zip(value, args))
    return str(value)


class CloseableResultIterator:
    """An iterator over a result's rows that can be closed (also in a ``with`` block);
    ``on_close`` is called when it is (e.g. to cancel the job computing the rows)."""

    def __init__(self, rows: Iterator[Row], on_close: Callable[[], None] = None):
        self._rows = rows
        self._on_close = on_close

    def __iter__(self):
        return self

    def __next__(self) -> Row:
        return next(self._rows)

    def next(self) -> Row:
        return self.__next__()

    def close(self) -> None:
        self._rows = iter(())
        if self._on_close is not None:
            self._on_close()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.close()


def insert_rows(rows) -> List[Row]:
    """Rows of kind INSERT, positional, as collected results are."""
    result = []
    for row in rows:
        positional = Row(*row)
        positional.set_row_kind(RowKind.INSERT)
        result.append(positional)
    return result
