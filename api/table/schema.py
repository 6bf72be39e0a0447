"""Schema, as ``pyflink.table.Schema``: the columns a table declares over a DataStream
(physical, computed, metadata), its watermark and primary key, before they are resolved
against the stream (``t_env.from_data_stream(ds, schema)``)."""
from dataclasses import dataclass
from typing import List, Optional, Tuple, Union

from .expressions import Expression, quote, to_expression
from .sql_types import parse_data_type
from .types import DataType, checked_data_type

__all__ = ['Schema']


@dataclass(frozen=True)
class PhysicalColumn:
    """A column of the stream's records, converted to ``data_type`` (declared as the SQL
    type ``type_text`` if that is given)."""
    name: str
    data_type: DataType
    type_text: Optional[str] = None

    def __str__(self):
        return '%s %s' % (quote(self.name), _type_string(self))


@dataclass(frozen=True)
class ComputedColumn:
    """A column computed from the others by ``expression`` (SQL text is ``call_sql``)."""
    name: str
    expression: Expression

    def __str__(self):
        return '%s AS %s' % (quote(self.name), self.expression)


@dataclass(frozen=True)
class MetadataColumn:
    """A column of a record's metadata (``metadata_key``, or the column's name)."""
    name: str
    data_type: DataType
    metadata_key: Optional[str]
    is_virtual: bool
    type_text: Optional[str] = None

    def __str__(self):
        return '%s %s%s' % (quote(self.name), _type_string(self), self.metadata_note())

    def metadata_note(self) -> str:
        """`` METADATA FROM 'key' VIRTUAL``, as Flink shows the column's kind."""
        key = '' if self.metadata_key is None else " FROM '%s'" % self.metadata_key
        return ' METADATA%s%s' % (key, ' VIRTUAL' if self.is_virtual else '')


@dataclass(frozen=True)
class WatermarkSpec:
    """``WATERMARK FOR column AS expression``: the rowtime column and its watermark."""
    column_name: str
    expression: Expression

    def __str__(self):
        return 'WATERMARK FOR %s AS %s' % (quote(self.column_name), self.expression)


Column = Union[PhysicalColumn, ComputedColumn, MetadataColumn]


class Schema:
    """The declared columns of a table, built with ``Schema.new_builder()``::

        >>> schema = Schema.new_builder() \\
        ...     .column('id', DataTypes.INT()) \\
        ...     .column_by_expression('total', col('price') * col('amount')) \\
        ...     .watermark('ts', "ts - INTERVAL '5' SECOND") \\
        ...     .build()
        >>> table = t_env.from_data_stream(ds, schema)
    """

    def __init__(self, columns: List[Column], watermark_specs: List[WatermarkSpec],
                 primary_key: Optional[Tuple[str, List[str]]]):
        self._columns = columns
        self._watermark_specs = watermark_specs
        self._primary_key = primary_key

    @staticmethod
    def new_builder() -> 'Schema.Builder':
        """A builder of a Schema."""
        return Schema.Builder()

    def __str__(self):
        parts = [str(c) for c in self._columns] + [str(w) for w in self._watermark_specs]
        if self._primary_key is not None:
            name, columns = self._primary_key
            parts.append('CONSTRAINT %s PRIMARY KEY (%s) NOT ENFORCED'
                         % (quote(name), ', '.join(quote(c) for c in columns)))
        return '(\n  %s\n)' % ',\n  '.join(parts) if parts else '()'

    class Builder:
        """Declares a Schema's columns, watermark and primary key, in order."""

        def __init__(self):
            self._columns: List[Column] = []
            self._watermark_specs: List[WatermarkSpec] = []
            self._primary_key = None

        def from_schema(self, unresolved_schema: 'Schema') -> 'Schema.Builder':
            """Adds every declaration of another Schema."""
            self._columns.extend(unresolved_schema._columns)
            self._watermark_specs.extend(unresolved_schema._watermark_specs)
            if unresolved_schema._primary_key is not None:
                self._primary_key = unresolved_schema._primary_key
            return self

        def column(self, column_name: str,
                   data_type: Union[str, DataType]) -> 'Schema.Builder':
            """A physical column: the stream's field ``column_name`` as ``data_type`` (a
            DataType, or Flink SQL's name of one: ``'TIMESTAMP_LTZ(3)'``)."""
            self._columns.append(PhysicalColumn(column_name,
                                                *_data_type(column_name, data_type)))
            return self

        def column_by_expression(self, column_name: str,
                                 expr: Union[str, Expression]) -> 'Schema.Builder':
            """A computed column: ``expr`` (an Expression, or SQL text) over the other
            columns."""
            self._columns.append(ComputedColumn(column_name, to_expression(expr)))
            return self

        def column_by_metadata(self, column_name: str, data_type: Union[str, DataType],
                               metadata_key: str = None,
                               is_virtual: bool = False) -> 'Schema.Builder':
            """A metadata column: of a DataStream, ``'rowtime'`` (the records'
            timestamps, TIMESTAMP_LTZ(3))."""
            resolved, text = _data_type(column_name, data_type)
            self._columns.append(MetadataColumn(column_name, resolved, metadata_key, is_virtual,
                                                text))
            return self

        def watermark(self, column_name: str,
                      watermark_expr: Union[str, Expression]) -> 'Schema.Builder':
            """Declares ``column_name`` the rowtime attribute, with the watermark
            ``watermark_expr`` (e.g. ``"ts - INTERVAL '5' SECOND"``)."""
            self._watermark_specs.append(WatermarkSpec(column_name,
                                                       to_expression(watermark_expr)))
            return self

        def primary_key(self, *column_names: str) -> 'Schema.Builder':
            """Declares a primary key (not enforced) named ``PK_<columns>``."""
            return self.primary_key_named('PK_' + '_'.join(column_names), *column_names)

        def primary_key_named(self, constraint_name: str,
                              *column_names: str) -> 'Schema.Builder':
            """Declares a primary key (not enforced) named ``constraint_name``."""
            if self._primary_key is not None:
                raise ValueError("Multiple primary keys are not supported.")
            if not column_names:
                raise ValueError("Primary key constraint must be defined for at least a "
                                 "single column.")
            self._primary_key = (constraint_name, list(column_names))
            return self

        def build(self) -> 'Schema':
            """The Schema declared so far."""
            return Schema(list(self._columns), list(self._watermark_specs),
                          self._primary_key)


def _data_type(column_name: str,
               data_type: Union[str, DataType]) -> Tuple[DataType, Optional[str]]:
    """(the DataType, the SQL text it was given as, or None)."""
    if isinstance(data_type, str):
        return parse_data_type(data_type), data_type
    return checked_data_type(f"column {column_name!r}", 'data_type', data_type), None


def _type_string(column) -> str:
    """A column's type as an unresolved Schema shows it: SQL text in brackets."""
    return str(column.data_type) if column.type_text is None else '[%s]' % column.type_text
