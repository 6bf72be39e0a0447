"""Column types of tables, named and printed as Flink SQL types (``INT NOT NULL``,
``DECIMAL(38, 18)``, ``ROW<`a` INT, `b` STRING>``), as ``pyflink.table.DataTypes`` makes
them; and how a stream's type information becomes column types, following Flink's
``TypeInfoDataTypeConverter``."""
from typing import List, Tuple

from api.common.typeinfo import (ExternalTypeInfo, ListTypeInfo, LocalTimeTypeInfo,
                                 MapTypeInfo, PrimitiveArrayTypeInfo, RowTypeInfo,
                                 TupleTypeInfo, TypeInformation, Types, _ArrayTypeInfo)

__all__ = ['DataType', 'DataTypes']


class DataType:
    """The type of a column or field: a logical type and whether it may be None."""

    def __init__(self, root: str, nullable: bool = True, args: tuple = ()):
        self._root = root          # INT, DECIMAL, ARRAY, MAP, ROW, ...
        self._nullable = nullable
        self._args = args          # (precision, scale), element types or (name, type) fields

    def nullable(self) -> 'DataType':
        """This type, allowing None."""
        return DataType(self._root, True, self._args)

    def not_null(self) -> 'DataType':
        """This type, not allowing None."""
        return DataType(self._root, False, self._args)

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

    __repr__ = __str__

    def __eq__(self, other):
        return isinstance(other, DataType) and (self._root, self._nullable, self._args) == \
            (other._root, other._nullable, other._args)

    def __hash__(self):
        return hash(str(self))


class DataTypes:
    """Factories of column types, as in ``pyflink.table.DataTypes`` (the subset that maps to
    Spark SQL types)."""

    @staticmethod
    def BOOLEAN(nullable: bool = True) -> DataType:
        return DataType('BOOLEAN', nullable)

    @staticmethod
    def TINYINT(nullable: bool = True) -> DataType:
        return DataType('TINYINT', nullable)

    @staticmethod
    def SMALLINT(nullable: bool = True) -> DataType:
        return DataType('SMALLINT', nullable)

    @staticmethod
    def INT(nullable: bool = True) -> DataType:
        return DataType('INT', nullable)

    @staticmethod
    def BIGINT(nullable: bool = True) -> DataType:
        return DataType('BIGINT', nullable)

    @staticmethod
    def FLOAT(nullable: bool = True) -> DataType:
        return DataType('FLOAT', nullable)

    @staticmethod
    def DOUBLE(nullable: bool = True) -> DataType:
        return DataType('DOUBLE', nullable)

    @staticmethod
    def DECIMAL(precision: int = 10, scale: int = 0, nullable: bool = True) -> DataType:
        return DataType('DECIMAL', nullable, (precision, scale))

    @staticmethod
    def STRING(nullable: bool = True) -> DataType:
        return DataType('STRING', nullable)

    @staticmethod
    def BYTES(nullable: bool = True) -> DataType:
        return DataType('BYTES', nullable)

    @staticmethod
    def DATE(nullable: bool = True) -> DataType:
        return DataType('DATE', nullable)

    @staticmethod
    def TIMESTAMP(precision: int = 6, nullable: bool = True) -> DataType:
        """A date-time without time zone (``datetime.datetime``)."""
        return DataType('TIMESTAMP', nullable, (precision,))

    @staticmethod
    def TIMESTAMP_LTZ(precision: int = 6, nullable: bool = True) -> DataType:
        """An instant, shown in the session's time zone."""
        return DataType('TIMESTAMP_LTZ', nullable, (precision,))

    @staticmethod
    def ARRAY(element_type: DataType, nullable: bool = True) -> DataType:
        return DataType('ARRAY', nullable, (element_type,))

    @staticmethod
    def MAP(key_type: DataType, value_type: DataType, nullable: bool = True) -> DataType:
        return DataType('MAP', nullable, (key_type, value_type))

    @staticmethod
    def FIELD(name: str, data_type: DataType) -> Tuple[str, DataType]:
        """A named field of a ROW."""
        return name, data_type

    @staticmethod
    def ROW(row_fields: List[Tuple[str, DataType]] = (), nullable: bool = True) -> DataType:
        return DataType('ROW', nullable, tuple(row_fields))


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
    repr(LocalTimeTypeInfo(LocalTimeTypeInfo.TimeType.LOCAL_TIME)): "Spark SQL has no TIME type; map the field to a STRING or to "
                              "LOCAL_DATE_TIME first",
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
        return DataTypes.ROW([(n, data_type_of(t).nullable()) for n, t in zip(
            type_info.get_field_names(), type_info.get_field_types())], nullable=False)
    if isinstance(type_info, TupleTypeInfo):
        return DataTypes.ROW([('f%d' % i, data_type_of(t))
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
              'DATE': Types.SQL_DATE, 'TIMESTAMP': Types.SQL_TIMESTAMP,
              'TIMESTAMP_LTZ': Types.SQL_TIMESTAMP,
              'BYTES': lambda: Types.PRIMITIVE_ARRAY(Types.BYTE())}
    return simple[root]()
