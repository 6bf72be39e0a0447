"""FileSink through the Sink protocol: a writer per subtask and batch writes hidden
in-progress part files, the committer renames them once the batch is committed, and
recovery finishes committed batches and drops the rest. Bulk formats (Parquet through
pyarrow, CSV) write one part file per subtask and batch; their files are read back with
pyarrow and the csv module."""
import csv
import datetime
import os
from decimal import Decimal

import pyarrow.parquet as pq
import pytest

from api.common import Row, Types
from api.common.serialization import Encoder
from api.datastream.connectors.file_system import (BucketAssigner, FileSink, OutputFileConfig,
                                                   RollingPolicy)
from api.datastream.formats.csv import CsvBulkWriters, CsvSchema
from api.datastream.formats.parquet import ParquetBulkWriters
from api.table.types import DataTypes
from engine.io.sinks import CommitterContext, WriterContext

ROW = Types.ROW_NAMED(["id", "name", "score", "tags", "when"],
                      [Types.INT(), Types.STRING(), Types.DOUBLE(), Types.LIST(Types.STRING()),
                       Types.SQL_TIMESTAMP()])
# ROW's fields as the Table API types ParquetBulkWriters takes, as in PyFlink
ROW_TYPE = DataTypes.ROW([
    DataTypes.FIELD("id", DataTypes.INT()), DataTypes.FIELD("name", DataTypes.STRING()),
    DataTypes.FIELD("score", DataTypes.DOUBLE()),
    DataTypes.FIELD("tags", DataTypes.ARRAY(DataTypes.STRING())),
    DataTypes.FIELD("when", DataTypes.TIMESTAMP())])
ROWS = [Row(id=1, name="a", score=1.5, tags=["x", "y"],
            when=datetime.datetime(2024, 1, 2, 3, 4, 5, 6000)),
        Row(id=2, name=None, score=None, tags=[], when=None)]


def context(batch_id=0, subtask=0, run_id="run", processing_time=0) -> WriterContext:
    return WriterContext("job", run_id, "sink", subtask, 2, batch_id, "/unused",
                         processing_time)


def build(base, writer_factory=None, encoder=None, **settings):
    builder = FileSink.for_bulk_format(str(base), writer_factory) if encoder is None else \
        FileSink.for_row_format(str(base), encoder)
    builder.with_bucket_assigner(settings.pop("bucket_assigner",
                                              BucketAssigner.base_path_bucket_assigner()))
    for name, value in settings.items():
        getattr(builder, name)(value)
    return builder.build()


def run_batch(sink, chunks, **kwargs):
    """One subtask's batch: writes the chunks, prepares; returns the committable."""
    writer = sink.create_writer(context(**kwargs))
    for chunk in chunks:
        writer.write(chunk)
    return writer.prepare_commit()


def committer(sink, base):
    committer = sink.create_committer()
    committer.open(CommitterContext("job", "sink", str(base)))
    return committer


def finished(base) -> list:
    return sorted(os.path.relpath(os.path.join(d, n), base)
                  for d, _, names in os.walk(base) for n in names if not n.startswith("."))


def test_parquet_part_files_hold_the_rows_once_committed(tmp_path):
    sink = build(tmp_path, ParquetBulkWriters.for_row_type(ROW_TYPE)).engine_sink(ROW)
    paths = run_batch(sink, [ROWS[:1], ROWS[1:]])
    assert len(paths) == 1 and os.path.basename(paths[0]).startswith(".part-")
    assert finished(tmp_path) == []  # nothing visible before the commit
    committer(sink, tmp_path).commit(0, 0, paths)
    (name,) = finished(tmp_path)
    table = pq.read_table(tmp_path / name)
    assert table.schema.names == ["id", "name", "score", "tags", "when"]
    assert str(table.schema.field("id").type) == "int32"
    assert str(table.schema.field("when").type) == "timestamp[us]"
    assert table.to_pylist() == [
        {"id": 1, "name": "a", "score": 1.5, "tags": ["x", "y"],
         "when": datetime.datetime(2024, 1, 2, 3, 4, 5, 6000)},
        {"id": 2, "name": None, "score": None, "tags": [], "when": None}]


def test_parquet_nested_rows_maps_and_decimals(tmp_path):
    row_type = DataTypes.ROW([
        DataTypes.FIELD("inner", DataTypes.ROW([DataTypes.FIELD("a", DataTypes.BIGINT())])),
        DataTypes.FIELD("m", DataTypes.MAP(DataTypes.STRING(), DataTypes.INT())),
        DataTypes.FIELD("d", DataTypes.DECIMAL(10, 2))])
    sink = build(tmp_path, ParquetBulkWriters.for_row_type(row_type, utc_timestamp=True)) \
        .engine_sink(None)
    committer(sink, tmp_path).commit(0, 0, run_batch(sink, [[
        Row(inner=Row(a=7), m={"k": 1}, d=Decimal("1.25"))]]))
    (name,) = finished(tmp_path)
    assert pq.read_table(tmp_path / name).to_pylist() == [
        {"inner": {"a": 7}, "m": [("k", 1)], "d": Decimal("1.25")}]


def test_parquet_writers_need_a_row_type_of_the_table_api():
    # PyFlink 2.3.0 refuses type information here too (TypeError: Unsupported data type).
    with pytest.raises(TypeError, match=r"ParquetBulkWriters: row_type must be a RowType "
                                        r"\(made by the Table API's DataTypes.*got RowTypeInfo"):
        ParquetBulkWriters.for_row_type(ROW)
    with pytest.raises(TypeError, match=r"row_type must be a RowType, got BigIntType\(true\)"):
        ParquetBulkWriters.for_row_type(DataTypes.BIGINT())


def test_csv_part_files_follow_the_schema_dialect(tmp_path):
    schema = CsvSchema.builder().add_number_column("id", number_type=DataTypes.INT()) \
        .add_string_column("name").add_array_column("tags", ",") \
        .set_column_separator("|").set_use_header().build()
    sink = build(tmp_path, CsvBulkWriters.for_schema(schema)).engine_sink(None)
    committer(sink, tmp_path).commit(0, 0, run_batch(sink, [[
        Row(id=1, name="a|b", tags=["x", "y"]), Row(id=2, name="line\nbreak", tags=[])]]))
    (name,) = finished(tmp_path)
    with open(tmp_path / name, newline="") as f:
        assert list(csv.reader(f, delimiter="|")) == [
            ["id", "name", "tags"], ["1", "a|b", "x,y"], ["2", "line\nbreak", ""]]


def test_bulk_formats_roll_every_batch_into_one_file_per_subtask(tmp_path):
    sink = build(tmp_path, ParquetBulkWriters.for_row_type(ROW_TYPE)).engine_sink(ROW)
    commit = committer(sink, tmp_path)
    for batch_id in range(3):
        for subtask in range(2):
            commit.commit(batch_id, subtask, run_batch(
                sink, [ROWS], batch_id=batch_id, subtask=subtask))
    files = finished(tmp_path)
    assert len(files) == 6
    assert sum(pq.read_table(tmp_path / name).num_rows for name in files) == 12


def test_row_format_rolls_by_part_size_names_parts_and_buckets_by_batch_time(tmp_path):
    sink = build(tmp_path, encoder=Encoder.simple_string_encoder(),
                 bucket_assigner=BucketAssigner.date_time_bucket_assigner("yyyy-MM-dd", "UTC"),
                 with_rolling_policy=RollingPolicy.default_rolling_policy(part_size=3),
                 with_output_file_config=OutputFileConfig.builder().with_part_prefix("pre")
                 .with_part_suffix(".txt").build()).engine_sink(Types.STRING())
    paths = run_batch(sink, [["aaa", "bbb", "c"], ["d"]], processing_time=86_400_000)
    committer(sink, tmp_path).commit(0, 0, paths)
    files = finished(tmp_path)
    assert [os.path.dirname(name) for name in files] == ["1970-01-02"] * 3
    assert [name[-6:] for name in files] == ["-0.txt", "-1.txt", "-2.txt"]
    assert [(tmp_path / name).read_bytes() for name in files] == [b"aaa\n", b"bbb\n", b"c\nd\n"]


def test_a_retried_writer_overwrites_its_own_files_and_commit_is_idempotent(tmp_path):
    sink = build(tmp_path, encoder=Encoder.simple_string_encoder()).engine_sink(Types.STRING())
    first = run_batch(sink, [["a", "b", "c"]])
    retry = run_batch(sink, [["a", "b"]])
    assert retry == first
    commit = committer(sink, tmp_path)
    commit.commit(0, 0, retry)
    commit.commit(0, 0, retry)
    assert [(tmp_path / name).read_bytes() for name in finished(tmp_path)] == [b"a\nb\n"]
    # Another batch, subtask or run never reuses the name.
    assert len({run_batch(sink, [["x"]], **kw)[0]
                for kw in ({}, {"batch_id": 4}, {"subtask": 1}, {"run_id": "run2"})}) == 4


def test_recover_finishes_committed_batches_and_deletes_later_ones(tmp_path):
    sink = build(tmp_path, ParquetBulkWriters.for_row_type(ROW_TYPE)).engine_sink(ROW)
    for batch_id in range(3):
        run_batch(sink, [ROWS], batch_id=batch_id)
    other = build(tmp_path, encoder=Encoder.simple_string_encoder(),
                  with_output_file_config=OutputFileConfig.builder().with_part_prefix("other")
                  .build()).engine_sink(Types.STRING())
    other_files = run_batch(other, [["kept"]], batch_id=5)
    committer(sink, tmp_path).recover(1)
    assert len(finished(tmp_path)) == 2  # batches 0 and 1
    hidden = [n for n in os.listdir(tmp_path) if n.startswith(".")]
    assert hidden == [os.path.basename(other_files[0])]  # another sink's file is left alone


def test_a_committer_that_cannot_see_a_part_file_says_why(tmp_path):
    sink = build(tmp_path, encoder=Encoder.simple_string_encoder()).engine_sink(Types.STRING())
    with pytest.raises(FileNotFoundError, match="written by subtask 1 is not visible"):
        committer(sink, tmp_path).commit(0, 1, [str(tmp_path / ".part-u-0.inprogress.0")])
