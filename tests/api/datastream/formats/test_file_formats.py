"""The Avro, Parquet, ORC and CSV file format classes: created and configured as in PyFlink;
the ones this engine cannot run yet are refused when a job uses them."""
import pytest

from api.common import Configuration, Types
from api.datastream.formats.avro import (AvroInputFormat, AvroRowDeserializationSchema,
                                         AvroRowSerializationSchema, AvroSchema,
                                         GenericRecordAvroTypeInfo)
from api.datastream.formats.csv import CsvBulkWriters, CsvReaderFormat, CsvSchema
from api.datastream.formats.parquet import (AvroParquetReaders, ParquetBulkWriters,
                                            ParquetColumnarRowInputFormat)
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
    columnar = ParquetColumnarRowInputFormat("row type", batch_size=100)
    assert columnar._settings["batch_size"] == 100
    assert isinstance(columnar._settings["hadoop_config"], Configuration)
    row_type = Types.ROW_NAMED(["a"], [Types.INT()])
    writer = ParquetBulkWriters.for_row_type(row_type, utc_timestamp=True)
    assert (writer.get_row_type(), writer._settings["utc_timestamp"]) == (row_type, True)
    check_available(writer)  # the Parquet writers run


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
    # The schema's rows: numbers are LONG unless typed, arrays LIST of STRING by default.
    assert CsvBulkWriters.for_schema(copied).get_row_type() == Types.ROW_NAMED(
        ["a", "b", "c"], [Types.STRING(), Types.LONG(), Types.LIST(Types.STRING())])
