"""``api.table.types``, PyFlink's ``pyflink.table.types``: the DataType classes
``DataTypes`` makes, as PyFlink 2.3.0 names and shows them (its ``repr`` below was observed
on PyFlink 2.3.0), and its refusal of the DataStream API's type information."""
import pytest

from api.common import Types
from api.table.types import (ArrayType, BigIntType, DataType, DataTypes, DecimalType, IntType,
                             MapType, RowField, RowType, TimestampType, VarCharType)


@pytest.mark.parametrize("data_type, cls, shown", [
    (DataTypes.INT(), IntType, "IntType(true)"),
    (DataTypes.INT(False), IntType, "IntType(false)"),
    (DataTypes.STRING(), VarCharType, "VarCharType(2147483647, true)"),
    (DataTypes.BIGINT(), BigIntType, "BigIntType(true)"),
    (DataTypes.ARRAY(DataTypes.INT()), ArrayType, "ArrayType(IntType(true), true)"),
    (DataTypes.DECIMAL(10, 2), DecimalType, "DecimalType(10, 2, true)"),
    (DataTypes.TIMESTAMP(3), TimestampType, "TimestampType(3, true)"),
    (DataTypes.MAP(DataTypes.STRING(), DataTypes.INT()), MapType,
     "MapType(VarCharType(2147483647, true), IntType(true), true)"),
])
def test_data_types_are_pyflinks_classes(data_type, cls, shown):
    assert type(data_type) is cls and isinstance(data_type, DataType)
    assert repr(data_type) == shown


def test_a_row_type_holds_its_fields():
    row = DataTypes.ROW([DataTypes.FIELD("a", DataTypes.INT()),
                         DataTypes.FIELD("b", DataTypes.STRING())])
    assert isinstance(row, RowType)
    assert repr(row) == ("RowType(RowField(a, IntType(true), ...),"
                         "RowField(b, VarCharType(2147483647, true), ...))")
    assert row.field_names() == ["a", "b"]
    assert row.fields[0] == RowField("a", DataTypes.INT()) and row["b"].data_type == \
        DataTypes.STRING()
    assert str(row.fields[0]) == "RowField(a, INT)"
    assert row.not_null() == DataTypes.ROW(row.fields, nullable=False) != row


@pytest.mark.parametrize("make, message", [
    (lambda: DataTypes.FIELD("a", Types.INT()),
     r"the field 'a': data_type must be a DataType \(made by the Table API's DataTypes"),
    (lambda: DataTypes.ARRAY(Types.INT()), "ARRAY: element_type must be a DataType"),
    (lambda: DataTypes.ROW([("a", DataTypes.INT())]),
     r"DataTypes.ROW takes fields made by DataTypes.FIELD\(name, data_type\)"),
])
def test_types_of_the_datastream_api_are_refused(make, message):
    # PyFlink 2.3.0 refuses them too (AssertionError "data_type Integer should be an
    # instance of <class 'pyflink.table.types.DataType'>"; AttributeError for tuples)
    with pytest.raises(TypeError, match=message):
        make()
