"""The Avro, Parquet, ORC and CSV file format classes: created and configured as in PyFlink;
the ones this engine cannot run yet are refused when a job uses them."""
import pytest

from api.common import Configuration, Types
from api.datastream.formats.avro import (AvroInputFormat, AvroRowDeserializationSchema,
                                         AvroRowSerializationSchema, AvroSchema,
                                         GenericRecordAvroTypeInfo)
from api.datastream.formats.csv import CsvBulkWriters, CsvReaderFormat, CsvSchema
from api.datastream.formats.orc import OrcBulkWriters
from api.datastream.formats.parquet import (AvroParquetReaders, ParquetBulkWriters,
                                            ParquetColumnarRowInputFormat)
from api.table.types import DataTypes
from api.unavailable import ConnectorUnavailableError, check_available

SCHEMA_TEXT = '{"type":"record","name":"r","fields":[{"name":"a","type":"int"}]}'


def test_avro_schema_parses_text_and_files(tmp_path):
    schema = AvroSchema.parse_string(SCHEMA_TEXT)
    assert str(schema) == SCHEMA_TEXT
    path = tmp_path / "r.avsc"
    path.write_text(SCHEMA_TEXT)
    assert str(AvroSchema.parse_file(str(path))) == SCHEMA_TEXT
    with pytest.raises(ValueError, match="Invalid Avro schema"):
        AvroSchema.parse_string("{not json")
    format_ = AvroInputFormat("/data/in.avro", schema)
    assert format_.get_produced_type() == GenericRecordAvroTypeInfo(schema)


def test_avro_row_schemas_need_a_record_class_or_a_schema_and_are_unavailable():
    with pytest.raises(TypeError, match="record_class or avro_schema_string should be specified"):
        AvroRowSerializationSchema()
    with pytest.raises(TypeError, match="record_class or avro_schema_string should be specified"):
        AvroRowDeserializationSchema()
    schema = AvroRowSerializationSchema(avro_schema_string=SCHEMA_TEXT)
    with pytest.raises(ConnectorUnavailableError,
                       match="AvroRowSerializationSchema is not available yet.*JsonRow"):
        check_available(schema)


def test_parquet_readers_are_configured_and_unavailable():
    reader = AvroParquetReaders.for_generic_record(AvroSchema.parse_string(SCHEMA_TEXT))
    with pytest.raises(ConnectorUnavailableError,
                       match="The Parquet format AvroParquetReaders.for_generic_record"):
        check_available(reader)
    row_type = DataTypes.ROW([DataTypes.FIELD("a", DataTypes.INT())])
    columnar = ParquetColumnarRowInputFormat(row_type, batch_size=100)
    assert columnar._settings["batch_size"] == 100
    assert isinstance(columnar._settings["hadoop_config"], Configuration)
    writer = ParquetBulkWriters.for_row_type(row_type, utc_timestamp=True)
    assert (writer.get_row_type(), writer._settings["utc_timestamp"]) == (row_type, True)
    check_available(writer)  # the Parquet writers run


@pytest.mark.parametrize("make", [
    lambda row_type: ParquetBulkWriters.for_row_type(row_type),
    lambda row_type: ParquetColumnarRowInputFormat(row_type),
    lambda row_type: OrcBulkWriters.for_row_type(row_type),
])
def test_row_formats_take_a_row_type_of_the_table_api(make):
    """As in PyFlink 2.3.0, where ``Types.ROW_NAMED`` fails in the same call (Parquet:
    TypeError "Unsupported data type: RowTypeInfo(a: Integer)", ORC: TypeError "row_type
    must be an instance of RowType")."""
    with pytest.raises(TypeError, match=r"row_type must be a RowType \(made by the Table "
                                        r"API's DataTypes.*got RowTypeInfo\(a: Integer\)"):
        make(Types.ROW_NAMED(["a"], [Types.INT()]))


def test_csv_schema_builder():
    builder = CsvSchema.builder().add_string_column("a").add_number_column("b") \
        .set_column_separator("|").set_use_header()
    assert len(builder) == builder.size() == 2
    schema = builder.build()
    # as PyFlink 2.3.0 prints a schema built with these columns (and no header)
    assert str(CsvSchema.builder().add_string_column("a").add_number_column("b").build()) == \
        '[CsvSchema: columns=["a"/STRING,"b"/NUMBER], header? false, skipFirst? false, ' \
        'comments? false, any-properties? N/A]'
    assert schema._options["column_separator"] == "|" and schema._options["use_header"]
    copied = CsvSchema.builder().add_columns_from(schema).add_array_column("c").build()
    assert copied.size() == 3
    with pytest.raises(ValueError, match="Column separator must be a single char, got ||"):
        CsvSchema.builder().set_column_separator("||")
    with pytest.raises(ValueError, match="Quote char must be a single char"):
        CsvSchema.builder().set_quote_char("")
    assert CsvReaderFormat.for_schema(schema)._settings == {"schema": schema}
    assert CsvBulkWriters.for_schema(schema)._settings == {"schema": schema}
    # The schema's rows, as in PyFlink: numbers are BIGINT unless typed, arrays of STRING.
    assert CsvBulkWriters.for_schema(copied).get_row_type() == DataTypes.ROW([
        DataTypes.FIELD("a", DataTypes.STRING()), DataTypes.FIELD("b", DataTypes.BIGINT()),
        DataTypes.FIELD("c", DataTypes.ARRAY(DataTypes.STRING()))])
