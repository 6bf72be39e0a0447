"""The ReduceFunctions behind KeyedStream.sum/min/max/min_by/max_by.

As in PyFlink: ``sum``/``min``/``max`` replace the field in the first record of the key
(other fields stay those of the first record); ``min_by``/``max_by`` keep the whole record
holding the extreme value, the earlier one on ties. A field is a position (tuples, lists,
Rows) or a name (Rows); a plain value is its own field 0.
"""
from typing import Union

from api.common.typeinfo import TupleTypeInfo
from api.common.types import Row
from .functions import ReduceFunction


def _get(value, field):
    if isinstance(value, (tuple, list, Row)):
        if isinstance(field, str) and not isinstance(value, Row):
            raise TypeError(f"field name {field!r} needs Row records, got {type(value).__name__}")
        return value[field]
    if field != 0:
        raise IndexError(f"position {field!r} does not exist in a {type(value).__name__} "
                         "record: plain values only have position 0")
    return value


def _with(value, field, new):
    if isinstance(value, Row):
        values = list(value)
        index = field if isinstance(field, int) else value._fields.index(field)
        values[index] = new
        row = Row(**dict(zip(value._fields, values))) if value._fields else Row(*values)
        row.set_row_kind(value.get_row_kind())
        return row
    if isinstance(value, tuple):
        return value[:field] + (new,) + value[field + 1:]
    if isinstance(value, list):
        return value[:field] + [new] + value[field + 1:]
    return new


class Aggregation(ReduceFunction):
    """A rolling aggregation of one field: kind is sum, min, max, min_by or max_by."""

    def __init__(self, kind: str, field: Union[int, str]):
        self.kind = kind
        self.field = field

    def reduce(self, value1, value2):
        field = self.field
        a, b = _get(value1, field), _get(value2, field)
        kind = self.kind
        if kind == "sum":
            return _with(value1, field, a + b)
        if kind == "min":
            return _with(value1, field, b) if b < a else value1
        if kind == "max":
            return _with(value1, field, b) if b > a else value1
        if kind == "min_by":
            return value2 if b < a else value1
        return value2 if b > a else value1  # max_by


def aggregation(kind: str, field: Union[int, str], input_type=None) -> Aggregation:
    """Checks ``field`` against a declared tuple/row type at build time."""
    if not isinstance(field, (int, str)) or isinstance(field, bool):
        raise TypeError(f"{kind}() takes a field position (int) or name (str), got {field!r}")
    names = getattr(input_type, "get_field_names", None)
    if isinstance(field, str) and isinstance(input_type, TupleTypeInfo):
        raise TypeError(f"{kind}({field!r}): a tuple stream has no named fields; use a position")
    if isinstance(field, str) and names is not None and field not in names():
        raise ValueError(f"{kind}({field!r}): no such field in {input_type}")
    return Aggregation(kind, field)
