"""Tables as Spark DataFrames, on the driver: column types to Spark SQL types and back, and
records to DataFrame rows and back."""
from typing import List, Tuple

from api.common.types import Row
from api.table.types import _BINARY_ROOTS, DataType, DataTypes

Columns = List[Tuple[str, DataType]]


def spark_type(data_type: DataType):
    """The Spark SQL type holding values of ``data_type``."""
    from pyspark.sql import types as st
    root, args = data_type._root, data_type._args
    if root == 'ROW':
        return st.StructType([st.StructField(n, spark_type(t), t._nullable) for n, t in args])
    if root == 'ARRAY':
        return st.ArrayType(spark_type(args[0]), args[0]._nullable)
    if root == 'MAP':
        return st.MapType(spark_type(args[0]), spark_type(args[1]), args[1]._nullable)
    if root == 'DECIMAL':
        return st.DecimalType(*args)
    if root in _BINARY_ROOTS:
        return st.BinaryType()
    simple = {'BOOLEAN': st.BooleanType, 'TINYINT': st.ByteType, 'SMALLINT': st.ShortType,
              'INT': st.IntegerType, 'BIGINT': st.LongType, 'FLOAT': st.FloatType,
              'DOUBLE': st.DoubleType, 'STRING': st.StringType, 'VARCHAR': st.StringType,
              'CHAR': st.StringType, 'DATE': st.DateType, 'TIMESTAMP': st.TimestampNTZType,
              'TIMESTAMP_LTZ': st.TimestampType}.get(root)
    if simple is None:
        raise ValueError(f"{data_type} cannot be a table column here: Spark SQL has no such "
                         "type (a TIME can be a STRING or a TIMESTAMP)")
    return simple()


def data_type_of_spark(spark_data_type, nullable: bool) -> DataType:
    """The column type of a Spark SQL type; ValueError for one without a Flink type."""
    from pyspark.sql import types as st
    if isinstance(spark_data_type, st.StructType):
        data_type = DataTypes.ROW([DataTypes.FIELD(f.name, data_type_of_spark(f.dataType,
                                                                             f.nullable))
                                   for f in spark_data_type.fields])
    elif isinstance(spark_data_type, st.ArrayType):
        data_type = DataTypes.ARRAY(data_type_of_spark(spark_data_type.elementType,
                                                       spark_data_type.containsNull))
    elif isinstance(spark_data_type, st.MapType):
        data_type = DataTypes.MAP(
            data_type_of_spark(spark_data_type.keyType, False),
            data_type_of_spark(spark_data_type.valueType, spark_data_type.valueContainsNull))
    elif isinstance(spark_data_type, st.DecimalType):
        data_type = DataTypes.DECIMAL(spark_data_type.precision, spark_data_type.scale)
    elif isinstance(spark_data_type, (st.TimestampType, st.TimestampNTZType)):
        precision6 = DataTypes.TIMESTAMP_LTZ if isinstance(spark_data_type, st.TimestampType) \
            else DataTypes.TIMESTAMP
        data_type = precision6(6)
    else:
        simple = {st.BooleanType: DataTypes.BOOLEAN, st.ByteType: DataTypes.TINYINT,
                  st.ShortType: DataTypes.SMALLINT, st.IntegerType: DataTypes.INT,
                  st.LongType: DataTypes.BIGINT, st.FloatType: DataTypes.FLOAT,
                  st.DoubleType: DataTypes.DOUBLE, st.StringType: DataTypes.STRING,
                  st.CharType: DataTypes.STRING, st.VarcharType: DataTypes.STRING,
                  st.BinaryType: DataTypes.BYTES, st.DateType: DataTypes.DATE}
        factory = simple.get(type(spark_data_type))
        if factory is None:
            raise ValueError(f"the Spark SQL type {spark_data_type.simpleString()} has no "
                             "DataStream type here; CAST the column to a STRING, a number, "
                             "a DATE or a TIMESTAMP in the query")
        data_type = factory()
    return data_type if nullable else data_type.not_null()


def columns_of(data_frame) -> Columns:
    """The columns of a DataFrame with their column types."""
    try:
        return [(f.name, data_type_of_spark(f.dataType, f.nullable))
                for f in data_frame.schema.fields]
    except ValueError as e:
        raise ValueError(f"Column types of the query result: {e}.") from None


def to_data_frame(session, columns: Columns, records: List[tuple]):
    """A DataFrame of ``records`` (tuples of Python values, one per column)."""
    schema = spark_type(_row_type(columns))
    fields = [t for _, t in columns]
    return session.createDataFrame(
        [tuple(_to_spark(t, v) for t, v in zip(fields, r)) for r in records], schema)


def collect_rows(data_frame, columns: Columns) -> List[Row]:
    """The rows of ``data_frame`` as Rows named by column."""
    row_type = _row_type(columns)
    return [_from_spark(row_type, r) for r in data_frame.collect()]


def _row_type(columns: Columns) -> DataType:
    return DataTypes.ROW([DataTypes.FIELD(name, data_type) for name, data_type in columns])


def _to_spark(data_type: DataType, value):
    if value is None:
        return None
    root, args = data_type._root, data_type._args
    if root == 'ROW':
        return tuple(_to_spark(t, v) for (_, t), v in zip(args, value))
    if root == 'ARRAY':
        return [_to_spark(args[0], v) for v in value]
    if root == 'MAP':
        return {_to_spark(args[0], k): _to_spark(args[1], v) for k, v in value.items()}
    if root in _BINARY_ROOTS:
        return bytearray(value)
    return value


def _from_spark(data_type: DataType, value):
    if value is None:
        return None
    root, args = data_type._root, data_type._args
    if root == 'ROW':
        row = Row(*[_from_spark(t, v) for (_, t), v in zip(args, value)])
        row.set_field_names([n for n, _ in args])
        return row
    if root == 'ARRAY':
        return [_from_spark(args[0], v) for v in value]
    if root == 'MAP':
        return {_from_spark(args[0], k): _from_spark(args[1], v) for k, v in value.items()}
    if root in _BINARY_ROOTS:
        return bytes(value)
    return value
