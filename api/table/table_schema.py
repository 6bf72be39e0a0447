"""TableSchema, as in ``pyflink.table``: the names and types of a table's columns."""
from typing import List, Union

from .data_frames import Columns
from .types import DataType

__all__ = ['TableSchema']


class TableSchema:
    """The names and types of a table's columns (``table.get_schema()``)."""

    def __init__(self, columns: Columns):
        self._columns = list(columns)

    def get_field_names(self) -> List[str]:
        return [n for n, _ in self._columns]

    def get_field_data_types(self) -> List[DataType]:
        return [t for _, t in self._columns]

    def get_field_count(self) -> int:
        return len(self._columns)

    def get_field_name(self, field_index: int) -> str:
        return self._columns[field_index][0]

    def get_field_data_type(self, field: Union[int, str]) -> DataType:
        """The type of the field at an index or of a name."""
        if isinstance(field, int):
            return self._columns[field][1]
        return dict(self._columns)[field]

    def __str__(self):
        return 'root\n' + ''.join(' |-- %s: %s\n' % c for c in self._columns)

    def __eq__(self, other):
        return isinstance(other, TableSchema) and self._columns == other._columns
