"""Column types of tables, named and printed as Flink SQL types (``INT NOT NULL``,
``DECIMAL(38, 18)``, ``ROW<`a` INT, `b` STRING>``), as ``pyflink.table.DataTypes`` makes
them; and how a stream's type information becomes column types, following Flink's
``TypeInfoDataTypeConverter``."""
import copy
from typing import List

from api.common.typeinfo import (ExternalTypeInfo, ListTypeInfo, LocalTimeTypeInfo,
                                 MapTypeInfo, PrimitiveArrayTypeInfo, RowTypeInfo,
                                 TupleTypeInfo, TypeInformation, Types, _ArrayTypeInfo)

__all__ = ['DataType', 'DataTypes', 'AtomicType', 'NumericType', 'IntegralType',
           'FractionalType', 'BooleanType', 'TinyIntType', 'SmallIntType', 'IntType',
           'BigIntType', 'FloatType', 'DoubleType', 'DecimalType', 'CharType', 'VarCharType',
           'BinaryType', 'VarBinaryType', 'DateType', 'TimeType', 'TimestampType',
           'LocalZonedTimestampType', 'ArrayType', 'MapType', 'RowField', 'RowType']

_MAX_LENGTH = 0x7fffffff  # of STRING and BYTES: VARCHAR and VARBINARY of any length
_BINARY_ROOTS = ('BYTES', 'VARBINARY', 'BINARY')  # the types of ``bytes`` values


class DataType:
    """The type of a column or field: a logical type and whether it may be None. Printed
    as Flink SQL prints it (``INT NOT NULL``); ``repr`` as PyFlink shows it
    (``IntType(false)``)."""

    _root = None  # the SQL type's name: INT, DECIMAL, ARRAY, MAP, ROW, ...

    def __init__(self, nullable: bool = True):
        self._nullable = nullable

    @property
    def _args(self) -> tuple:
        """The SQL type's parameters: (precision, scale), element types, (name, type)
        fields."""
        return ()

    def nullable(self) -> 'DataType':
        """This type, allowing None."""
        return self._with_nullable(True)

    def not_null(self) -> 'DataType':
        """This type, not allowing None."""
        return self._with_nullable(False)

    def _with_nullable(self, nullable: bool) -> 'DataType':
        copied = copy.copy(self)
        copied._nullable = nullable
        return copied

    def _logical(self) -> str:
        if self._root == 'ROW':
            return 'ROW<%s>' % ', '.join('`%s` %s' % f for f in self._args)
        if self._root in ('ARRAY', 'MAP'):
            return '%s<%s>' % (self._root, ', '.join(str(t) for t in self._args))
        if self._args:
            return '%s(%s)' % (self._root, ', '.join(str(a) for a in self._args))
        return self._root

    def __str__(self):
        return self._logical() + ('' if self._nullable else ' NOT NULL')

    def __repr__(self):
        parameters = [repr(a) if isinstance(a, DataType) else str(a) for a in self._parameters()]
        return '%s(%s)' % (type(self).__name__,
                           ', '.join(parameters + [str(self._nullable).lower()]))

    def _parameters(self) -> tuple:
        """What ``repr`` shows before the nullability."""
        return self._args

    def __eq__(self, other):
        return type(self) is type(other) and self.__dict__ == other.__dict__

    def __hash__(self):
        return hash(str(self))


class AtomicType(DataType):
    """A type without parts."""


class NumericType(AtomicType):
    """A number type."""


class IntegralType(NumericType):
    """A whole number type."""


class FractionalType(NumericType):
    """A number type with a fraction."""


class BooleanType(AtomicType):
    """BOOLEAN: ``bool``."""
    _root = 'BOOLEAN'


class TinyIntType(IntegralType):
    """TINYINT: an 8-bit ``int``."""
    _root = 'TINYINT'


class SmallIntType(IntegralType):
    """SMALLINT: a 16-bit ``int``."""
    _root = 'SMALLINT'


class IntType(IntegralType):
    """INT: a 32-bit ``int``."""
    _root = 'INT'


class BigIntType(IntegralType):
    """BIGINT: a 64-bit ``int``."""
    _root = 'BIGINT'


class FloatType(FractionalType):
    """FLOAT: a 32-bit ``float``."""
    _root = 'FLOAT'


class DoubleType(FractionalType):
    """DOUBLE: a 64-bit ``float``."""
    _root = 'DOUBLE'


class DecimalType(FractionalType):
    """DECIMAL(precision, scale): a ``decimal.Decimal``."""
    _root = 'DECIMAL'

    def __init__(self, precision: int = 10, scale: int = 0, nullable: bool = True):
        super().__init__(nullable)
        self.precision = precision
        self.scale = scale

    @property
    def _args(self):
        return self.precision, self.scale


class _Sized(AtomicType):
    """A text or binary type of a length; ``_unbounded`` names it at the longest length."""
    _unbounded = None

    def __init__(self, length: int = 1, nullable: bool = True):
        super().__init__(nullable)
        self.length = length

    @property
    def _root(self):
        return self._unbounded if self.length == _MAX_LENGTH and self._unbounded else \
            self._sql_name

    @property
    def _args(self):
        return () if self._root == self._unbounded else (self.length,)

    def _parameters(self):
        return self.length,


class CharType(_Sized):
    """CHAR(length): a ``str`` of exactly ``length`` characters."""
    _sql_name = 'CHAR'


class VarCharType(_Sized):
    """VARCHAR(length): a ``str`` of at most ``length`` characters (STRING: any length)."""
    _sql_name, _unbounded = 'VARCHAR', 'STRING'


class BinaryType(_Sized):
    """BINARY(length): ``bytes`` of exactly ``length`` bytes."""
    _sql_name = 'BINARY'


class VarBinaryType(_Sized):
    """VARBINARY(length): ``bytes`` of at most ``length`` bytes (BYTES: any length)."""
    _sql_name, _unbounded = 'VARBINARY', 'BYTES'


class DateType(AtomicType):
    """DATE: a ``datetime.date``."""
    _root = 'DATE'


class _WithPrecision(AtomicType):
    """A time type with a precision of the fraction of a second."""

    def __init__(self, precision: int = 6, nullable: bool = True):
        super().__init__(nullable)
        self.precision = precision

    @property
    def _args(self):
        return self.precision,


class TimeType(_WithPrecision):
    """TIME(precision): a ``datetime.time``."""
    _root = 'TIME'

    def __init__(self, precision: int = 0, nullable: bool = True):
        super().__init__(precision, nullable)


class TimestampType(_WithPrecision):
    """TIMESTAMP(precision): a date-time without time zone (``datetime.datetime``)."""
    _root = 'TIMESTAMP'


class LocalZonedTimestampType(_WithPrecision):
    """TIMESTAMP_LTZ(precision): an instant, shown in the session's time zone."""
    _root = 'TIMESTAMP_LTZ'


class ArrayType(DataType):
    """ARRAY<element type>: a ``list``."""
    _root = 'ARRAY'

    def __init__(self, element_type: DataType, nullable: bool = True):
        super().__init__(nullable)
        self.element_type = checked_data_type('ARRAY', 'element_type', element_type)

    @property
    def _args(self):
        return self.element_type,


class MapType(DataType):
    """MAP<key type, value type>: a ``dict``."""
    _root = 'MAP'

    def __init__(self, key_type: DataType, value_type: DataType, nullable: bool = True):
        super().__init__(nullable)
        self.key_type = checked_data_type('MAP', 'key_type', key_type)
        self.value_type = checked_data_type('MAP', 'value_type', value_type)

    @property
    def _args(self):
        return self.key_type, self.value_type


class RowField:
    """A named field of a :class:`RowType` (``DataTypes.FIELD(name, data_type)``)."""

    def __init__(self, name: str, data_type: DataType, description: str = None):
        if not isinstance(name, str):
            raise TypeError(f"DataTypes.FIELD: the field name must be a str, got {name!r}")
        self.name = name
        self.data_type = checked_data_type(f'the field {name!r}', 'data_type', data_type)
        self.description = '...' if description is None else description

    def __repr__(self):
        return 'RowField(%s, %r, %s)' % (self.name, self.data_type, self.description)

    def __str__(self):
        return 'RowField(%s, %s)' % (self.name, self.data_type)

    def __eq__(self, other):
        return isinstance(other, RowField) and self.__dict__ == other.__dict__


class RowType(DataType):
    """ROW<fields>: a ``Row`` of named, typed fields; iterating it gives its RowFields."""
    _root = 'ROW'

    def __init__(self, fields: List[RowField] = None, nullable: bool = True):
        super().__init__(nullable)
        self.fields = list(fields or ())
        for field in self.fields:
            if not isinstance(field, RowField):
                raise TypeError(f"DataTypes.ROW takes fields made by DataTypes.FIELD(name, "
                                f"data_type), got {field!r}")
        self.names = [f.name for f in self.fields]

    def field_names(self) -> List[str]:
        return list(self.names)

    def field_types(self) -> List[DataType]:
        return [f.data_type for f in self.fields]

    def __iter__(self):
        return iter(self.fields)

    def __len__(self):
        return len(self.fields)

    def __getitem__(self, key):
        """A field by name or position."""
        if isinstance(key, str):
            for field in self.fields:
                if field.name == key:
                    return field
            raise KeyError(f"No RowField named {key}")
        return self.fields[key]

    @property
    def _args(self):
        return tuple((f.name, f.data_type) for f in self.fields)

    def __repr__(self):
        return 'RowType(%s)' % ','.join(repr(f) for f in self.fields)


def checked_data_type(owner: str, what: str, data_type, cls=DataType) -> DataType:
    """``data_type`` if it is a ``cls`` (a DataType), else a TypeError naming ``owner`` and
    ``what``: where PyFlink takes table types, it takes DataTypes, not the DataStream API's
    type information (``Types.INT()``)."""
    if not isinstance(data_type, cls):
        hint = " (made by the Table API's DataTypes, e.g. DataTypes.INT() or " \
               "DataTypes.ROW([...]), not by Types)" if isinstance(data_type, TypeInformation) \
            else ""
        raise TypeError(f"{owner}: {what} must be a {cls.__name__}{hint}, got {data_type!r}")
    return data_type


class DataTypes:
    """Factories of column types, as in ``pyflink.table.DataTypes``."""

    @staticmethod
    def BOOLEAN(nullable: bool = True) -> BooleanType:
        return BooleanType(nullable)

    @staticmethod
    def TINYINT(nullable: bool = True) -> TinyIntType:
        return TinyIntType(nullable)

    @staticmethod
    def SMALLINT(nullable: bool = True) -> SmallIntType:
        return SmallIntType(nullable)

    @staticmethod
    def INT(nullable: bool = True) -> IntType:
        return IntType(nullable)

    @staticmethod
    def BIGINT(nullable: bool = True) -> BigIntType:
        return BigIntType(nullable)

    @staticmethod
    def FLOAT(nullable: bool = True) -> FloatType:
        return FloatType(nullable)

    @staticmethod
    def DOUBLE(nullable: bool = True) -> DoubleType:
        return DoubleType(nullable)

    @staticmethod
    def DECIMAL(precision: int = 10, scale: int = 0, nullable: bool = True) -> DecimalType:
        return DecimalType(precision, scale, nullable)

    @staticmethod
    def CHAR(length: int, nullable: bool = True) -> CharType:
        return CharType(length, nullable)

    @staticmethod
    def VARCHAR(length: int, nullable: bool = True) -> VarCharType:
        return VarCharType(length, nullable)

    @staticmethod
    def STRING(nullable: bool = True) -> VarCharType:
        return VarCharType(_MAX_LENGTH, nullable)

    @staticmethod
    def BINARY(length: int, nullable: bool = True) -> BinaryType:
        return BinaryType(length, nullable)

    @staticmethod
    def VARBINARY(length: int, nullable: bool = True) -> VarBinaryType:
        return VarBinaryType(length, nullable)

    @staticmethod
    def BYTES(nullable: bool = True) -> VarBinaryType:
        return VarBinaryType(_MAX_LENGTH, nullable)

    @staticmethod
    def DATE(nullable: bool = True) -> DateType:
        return DateType(nullable)

    @staticmethod
    def TIME(precision: int = 0, nullable: bool = True) -> TimeType:
        return TimeType(precision, nullable)

    @staticmethod
    def TIMESTAMP(precision: int = 6, nullable: bool = True) -> TimestampType:
        """A date-time without time zone (``datetime.datetime``)."""
        return TimestampType(precision, nullable)

    @staticmethod
    def TIMESTAMP_LTZ(precision: int = 6, nullable: bool = True) -> LocalZonedTimestampType:
        """An instant, shown in the session's time zone."""
        return LocalZonedTimestampType(precision, nullable)

    TIMESTAMP_WITH_LOCAL_TIME_ZONE = TIMESTAMP_LTZ

    @staticmethod
    def ARRAY(element_type: DataType, nullable: bool = True) -> ArrayType:
        return ArrayType(element_type, nullable)

    @staticmethod
    def MAP(key_type: DataType, value_type: DataType, nullable: bool = True) -> MapType:
        return MapType(key_type, value_type, nullable)

    @staticmethod
    def FIELD(name: str, data_type: DataType, description: str = None) -> RowField:
        """A named field of a ROW."""
        return RowField(name, data_type, description)

    @staticmethod
    def ROW(row_fields: List[RowField] = (), nullable: bool = True) -> RowType:
        """A row of the given fields: ``DataTypes.ROW([DataTypes.FIELD('a', ...), ...])``."""
        return RowType(row_fields, nullable)


# Flink's conversion map: which basic types are NOT NULL (Java primitives) and which not.
_BASIC = [
    (Types.STRING(), DataTypes.STRING()),
    (Types.BOOLEAN(), DataTypes.BOOLEAN(False)),
    (Types.BYTE(), DataTypes.TINYINT(False)),
    (Types.SHORT(), DataTypes.SMALLINT(False)),
    (Types.INT(), DataTypes.INT(False)),
    (Types.LONG(), DataTypes.BIGINT(False)),
    (Types.FLOAT(), DataTypes.FLOAT(False)),
    (Types.DOUBLE(), DataTypes.DOUBLE(False)),
    (Types.BIG_DEC(), DataTypes.DECIMAL(38, 18)),
    (Types.SQL_DATE(), DataTypes.DATE()),
    (Types.SQL_TIMESTAMP(), DataTypes.TIMESTAMP(9)),
    (LocalTimeTypeInfo(LocalTimeTypeInfo.TimeType.LOCAL_DATE), DataTypes.DATE()),
    (LocalTimeTypeInfo(LocalTimeTypeInfo.TimeType.LOCAL_DATE_TIME),
     DataTypes.TIMESTAMP(9)),
    (Types.PRIMITIVE_ARRAY(Types.BYTE()), DataTypes.BYTES(False)),
]

_NO_SQL_TYPE = {
    repr(Types.SQL_TIME()): "Spark SQL has no TIME type; map the field to a STRING or to "
                            "SQL_TIMESTAMP first",
    repr(LocalTimeTypeInfo(LocalTimeTypeInfo.TimeType.LOCAL_TIME)):
        "Spark SQL has no TIME type; map the field to a STRING or to LOCAL_DATE_TIME first",
    repr(Types.INSTANT()): "map the field to SQL_TIMESTAMP (a datetime in UTC) first",
    repr(Types.BIG_INT()): "Flink gives it no SQL type (RAW); map the field to LONG or "
                           "BIG_DEC first",
    repr(Types.CHAR()): "Flink gives it no SQL type (RAW); map the field to STRING first",
    repr(Types.PICKLED_BYTE_ARRAY()): "the stream has no declared type: give the operator "
                                      "that makes it an output_type (e.g. Types.ROW_NAMED"
                                      "([...], [...]) or Types.TUPLE([...]))",
}


def data_type_of(type_info: TypeInformation) -> DataType:
    """The column type Flink derives from ``type_info``; ValueError if it has none here."""
    if isinstance(type_info, ExternalTypeInfo):
        type_info = type_info._type_info
    for basic, data_type in _BASIC:
        if type_info == basic:
            return data_type
    if isinstance(type_info, RowTypeInfo):  # all fields nullable
        return DataTypes.ROW([DataTypes.FIELD(n, data_type_of(t).nullable()) for n, t in zip(
            type_info.get_field_names(), type_info.get_field_types())], nullable=False)
    if isinstance(type_info, TupleTypeInfo):
        return DataTypes.ROW([DataTypes.FIELD('f%d' % i, data_type_of(t))
                              for i, t in enumerate(type_info.get_field_types())], False)
    if isinstance(type_info, PrimitiveArrayTypeInfo):
        return DataTypes.ARRAY(data_type_of(type_info._element_type), nullable=False)
    if isinstance(type_info, _ArrayTypeInfo):  # basic and object arrays: nullable elements
        return DataTypes.ARRAY(data_type_of(type_info._element_type).nullable(), False)
    if isinstance(type_info, ListTypeInfo):
        return DataTypes.ARRAY(data_type_of(type_info.elem_type), nullable=False)
    if isinstance(type_info, MapTypeInfo):
        return DataTypes.MAP(data_type_of(type_info._key_type_info),
                             data_type_of(type_info._value_type_info).nullable(), False)
    reason = _NO_SQL_TYPE.get(repr(type_info), "it has no Spark SQL type")
    raise ValueError("%r cannot be a table column: %s." % (type_info, reason))


def type_info_of(data_type: DataType) -> TypeInformation:
    """The type information of a column of type ``data_type`` in a DataStream (Flink's
    default conversion: ROW to Row, ARRAY to a list, DECIMAL to Decimal, ...)."""
    root, args = data_type._root, data_type._args
    if root == 'ROW':
        return Types.ROW_NAMED([n for n, _ in args], [type_info_of(t) for _, t in args])
    if root == 'ARRAY':
        return Types.OBJECT_ARRAY(type_info_of(args[0]))
    if root == 'MAP':
        return Types.MAP(type_info_of(args[0]), type_info_of(args[1]))
    simple = {'BOOLEAN': Types.BOOLEAN, 'TINYINT': Types.BYTE, 'SMALLINT': Types.SHORT,
              'INT': Types.INT, 'BIGINT': Types.LONG, 'FLOAT': Types.FLOAT,
              'DOUBLE': Types.DOUBLE, 'DECIMAL': Types.BIG_DEC, 'STRING': Types.STRING,
              'VARCHAR': Types.STRING, 'CHAR': Types.STRING, 'DATE': Types.SQL_DATE,
              'TIME': Types.SQL_TIME, 'TIMESTAMP': Types.SQL_TIMESTAMP,
              'TIMESTAMP_LTZ': Types.SQL_TIMESTAMP}
    if root in _BINARY_ROOTS:
        return Types.PRIMITIVE_ARRAY(Types.BYTE())
    return simple[root]()
