"""Row and RowKind, as in ``pyflink.common.types``."""
from enum import Enum
from typing import List

from core import codec

__all__ = ['Row', 'RowKind']


class RowKind(Enum):
    """The kind of change a row describes in a changelog; ``str()`` gives its short form."""

    INSERT = 0
    UPDATE_BEFORE = 1
    UPDATE_AFTER = 2
    DELETE = 3

    def __str__(self):
        return _SHORT_STRINGS[self.value]

    def to_j_row_kind(self):
        """JVM-only: there is no Java RowKind here, so this returns None."""
        return None


_SHORT_STRINGS = ('+I', '-U', '+U', '-D')


def _create_row(fields, values, row_kind=None):
    return new_row(list(values), None if fields is None else list(fields),
                  RowKind.INSERT if row_kind is None else row_kind)


_new_object = object.__new__


def new_row(values: list, fields, kind: RowKind) -> 'Row':
    """The Row of ``values`` (taken as they are, not copied), named by ``fields`` (None:
    unnamed), of ``kind``: what ``Row(*values)`` then setting names and kind gives, at
    a third of the cost, for rows the engine makes by the million."""
    row = _new_object(Row)
    attributes = row.__dict__
    if fields is not None:
        attributes['_fields'] = fields
    attributes['_values'] = values
    attributes['_row_kind'] = kind
    return row


class Row(object):
    """
    A row of fields, accessed by position, by attribute (``row.name``) or by key
    (``row['name']``).

    ::

        >>> Row(name='Alice', age=11)
        Row(name='Alice', age=11)
        >>> Row(1, 'a')
        <Row(1, 'a')>
        >>> Person = Row('name', 'age')   # a Row used as a factory
        >>> Person('Alice', 11)
        Row(name='Alice', age=11)
    """

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("Can not use both args and kwargs to create Row")
        if kwargs:
            self._fields = list(kwargs)
            self._values = list(kwargs.values())
        else:
            self._values = list(args)
        self._row_kind = RowKind.INSERT

    def as_dict(self, recursive: bool = False) -> dict:
        """Returns the row as a dict of field name to value; nested Rows too if ``recursive``."""
        if not hasattr(self, '_fields'):
            raise TypeError("Cannot convert a Row class into dict")
        if not recursive:
            return dict(zip(self._fields, self._values))

        def conv(obj):
            if isinstance(obj, Row):
                return obj.as_dict(True)
            if isinstance(obj, list):
                return [conv(o) for o in obj]
            if isinstance(obj, dict):
                return {k: conv(v) for k, v in obj.items()}
            return obj
        return {k: conv(v) for k, v in zip(self._fields, self._values)}

    def get_row_kind(self) -> RowKind:
        """Returns the kind of change this row describes (INSERT by default)."""
        return self._row_kind

    def set_row_kind(self, row_kind: RowKind):
        """Sets the kind of change this row describes."""
        self._row_kind = row_kind

    def set_field_names(self, field_names: List):
        """Names the fields of this row."""
        self._fields = field_names

    def get_fields_by_names(self, names: List[str]):
        """Returns the values of the named fields, in the order of ``names``."""
        if not hasattr(self, '_fields') or names == self._fields:
            return self._values
        missing = [n for n in names if n not in self._fields]
        if missing:
            raise Exception("Field names {0} not exist in {1}.".format(missing, self._fields))
        return [self._values[self._fields.index(n)] for n in names]

    @staticmethod
    def of_kind(row_kind: RowKind, *args, **kwargs) -> 'Row':
        """Creates a row of the given kind."""
        row = Row(*args, **kwargs)
        row.set_row_kind(row_kind)
        return row

    def __contains__(self, item):
        return item in getattr(self, '_fields', self._values)

    def __call__(self, *args):
        """Creates a Row whose field names are this row's values."""
        if len(args) > len(self):
            raise ValueError("Can not create Row with fields %s, expected %d values but got %s"
                             % (self, len(self), args))
        return _create_row(self._values, args, self._row_kind)

    def __getitem__(self, item):
        try:  # (a position: the common case first)
            return self._values[item]
        except TypeError:
            return self._values[self._index_of(item, ValueError)]

    def __setitem__(self, key, value):
        if isinstance(key, (int, slice)):
            self._values[key] = value
        else:
            self._values[self._index_of(key, KeyError)] = value

    def __getattr__(self, item):
        if item.startswith('_'):
            raise AttributeError(item)
        return self._values[self._index_of(item, AttributeError)]

    def __setattr__(self, key, value):
        if key not in ('_fields', '_values', '_row_kind'):
            raise AttributeError(key)
        self.__dict__[key] = value

    def _index_of(self, name, error):
        try:
            return self._fields.index(name)
        except (AttributeError, ValueError):
            raise error(name) from None

    def __reduce__(self):
        return _create_row, (getattr(self, '_fields', None), tuple(self._values), self._row_kind)

    def __repr__(self):
        if hasattr(self, '_fields'):
            return "Row(%s)" % ", ".join("%s=%r" % kv for kv in zip(self._fields, self._values))
        return "<Row(%s)>" % ", ".join(repr(v) for v in self._values)

    def __eq__(self, other):
        # Named rows compare by name, regardless of field order.
        if not isinstance(other, Row) or self._row_kind != other._row_kind:
            return False
        named, other_named = hasattr(self, '_fields'), hasattr(other, '_fields')
        if named != other_named:
            return False
        if not named:
            return self._values == other._values
        return (sorted(self._fields) == sorted(other._fields)
                and self.as_dict() == other.as_dict())

    def __hash__(self):
        return hash(tuple(self._values))

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)


codec.register_data_class(
    Row, codec.ROW,
    lambda row: [getattr(row, "_fields", None), row._values, row._row_kind.value],
    lambda fields: _create_row(fields[0], fields[1], RowKind(fields[2])))
