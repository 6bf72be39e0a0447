"""CSV files through FileSource and FileSink with a CsvSchema typed by the Table API's
DataTypes, as PyFlink 2.3.0 requires, against what PyFlink 2.3.0 read and wrote.

The expected values were observed on PyFlink 2.3.0 (Java 17, local MiniCluster,
parallelism 1, BATCH) running the same programs with ``pyflink`` for ``api``. PyFlink's
CSV source emits Flink's internal rows, which print as Java objects
(``GenericArrayData@18ded``), so the read test compares what Python code sees of each row.
"""
import glob
import os

import pytest

from api.common import Row, Types, WatermarkStrategy
from api.datastream import RuntimeExecutionMode
from api.datastream.connectors.file_system import FileSink, FileSource
from api.datastream.formats.csv import CsvBulkWriters, CsvReaderFormat, CsvSchema
from api.table.types import DataTypes

from tests.api.datastream.test_pyflink_fidelity import printed


def test_a_csv_file_reads_into_rows_of_the_schema_data_types(env_factory, tmp_path, capsys):
    path = tmp_path / "in.csv"
    path.write_text("1|apple|1,2,3|true|1.5|10000000000|7|2.25\n"
                    "2|\"pear|x\"||false|-0.25|3|8|1e3\n"
                    "3|fig|4|TRUE|2|-1|9|0.1\n")
    schema = CsvSchema.builder() \
        .add_number_column("id", number_type=DataTypes.INT()) \
        .add_string_column("name") \
        .add_array_column("list", ",", element_type=DataTypes.INT()) \
        .add_boolean_column("ok") \
        .add_number_column("price", DataTypes.DOUBLE()) \
        .add_number_column("big") \
        .add_number_column("small", DataTypes.SMALLINT()) \
        .add_number_column("f", DataTypes.FLOAT()) \
        .set_column_separator("|").build()
    env = env_factory(parallelism=1)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    source = FileSource.for_record_stream_format(CsvReaderFormat.for_schema(schema),
                                                 str(path)).build()
    env.from_source(source, WatermarkStrategy.no_watermarks(), "csv") \
        .map(lambda r: " ".join(repr(v) for v in [r.id, r.name, r.list, r.ok, r.price, r.big,
                                                  r.small, r.f])) \
        .print()
    env.execute()
    assert printed(capsys) == [  # FLOAT is 32-bit: 0.1 reads as 0.10000000149011612
        "1 'apple' [1, 2, 3] True 1.5 10000000000 7 2.25",
        "2 'pear|x' [] False -0.25 3 8 1000.0",
        "3 'fig' [4] True 2.0 -1 9 0.10000000149011612"]


def test_rows_write_into_csv_files_of_the_schema(env_factory, tmp_path):
    schema = CsvSchema.builder() \
        .add_number_column("id", number_type=DataTypes.INT()) \
        .add_string_column("name") \
        .add_array_column("list", ",", element_type=DataTypes.INT()) \
        .add_boolean_column("ok") \
        .add_number_column("price", DataTypes.DOUBLE()) \
        .add_number_column("f", DataTypes.FLOAT()) \
        .set_column_separator("|").set_use_header().build()
    env = env_factory(parallelism=1)
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    row_type = Types.ROW_NAMED(["id", "name", "list", "ok", "price", "f"],
                               [Types.INT(), Types.STRING(), Types.OBJECT_ARRAY(Types.INT()),
                                Types.BOOLEAN(), Types.DOUBLE(), Types.FLOAT()])
    env.from_collection([Row(1, "apple", [1, 2, 3], True, 1.5, 110.1),
                         Row(2, "pear|x", [], False, -0.25, 2.0)], row_type) \
        .sink_to(FileSink.for_bulk_format(str(tmp_path), CsvBulkWriters.for_schema(schema))
                 .build())
    env.execute()
    files = [p for p in glob.glob(f"{tmp_path}/**/*", recursive=True)
             if os.path.isfile(p) and not os.path.basename(p).startswith(".")]
    # one part file in a bucket directory; with "|" between columns, Jackson quotes every
    # text that has a character sorting before "|": the header's names too
    assert [(os.path.relpath(p, tmp_path).count(os.sep), open(p).read()) for p in files] == [
        (1, '"id"|"name"|"list"|"ok"|"price"|"f"\n'
            '1|"apple"|"1,2,3"|true|1.5|110.1\n'
            '2|"pear|x"||false|-0.25|2.0\n')]


@pytest.mark.parametrize("add_column, what", [
    (lambda b: b.add_number_column("n", Types.INT()), "number_type"),
    (lambda b: b.add_number_column("n", number_type="INT"), "number_type"),
    (lambda b: b.add_array_column("n", ",", Types.INT()), "element_type"),
    (lambda b: b.add_array_column("n", element_type=Types.STRING()), "element_type"),
])
def test_a_column_type_that_is_not_a_data_type_fails_when_the_column_is_added(add_column, what):
    # PyFlink 2.3.0 fails in the add_*_column call too (AssertionError: "data_type Integer
    # should be an instance of <class 'pyflink.table.types.DataType'>")
    with pytest.raises(TypeError, match=f"CsvSchema column 'n': {what} must be a DataType"):
        add_column(CsvSchema.builder())
