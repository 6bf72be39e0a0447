"""FileSource through the Source protocol, as the driver and the tasks drive it: plan each
split's next range from its position, read it, store the position after it.

Expected lines, hidden-file rules and gzip handling were observed on PyFlink 2.3.0
(``FileSource.for_record_stream_format(StreamFormat.text_line_format(), path)``: lines
end at ``\\n``, ``\\r\\n`` or ``\\r``; undecodable UTF-8 becomes U+FFFD; names starting with
``.`` or ``_`` are skipped; ``.gz`` files are decompressed; directories are read
recursively), and CSV errors name what PyFlink's name ("Fail to deserialize at field",
"Too many entries")."""
import gzip
import os
import re
import time

import pytest
from hypothesis import given, settings, strategies as st

from api.common import Duration, Row, Types
from api.datastream.connectors.file_system import (FileEnumeratorProvider, FileSource,
                                                   StreamFormat)
from api.datastream.formats.csv import CsvReaderFormat, CsvSchema
from api.table.types import DataTypes
from engine.io.files.source import FileSource as EngineFileSource, TextLineFormat
from engine.errors import RecordReadError


def drive(source, parallelism=1, max_records=1000, positions=None, batches=None):
    """Runs plan/read over every split until all are finished (or ``batches`` rounds ran);
    returns the records of each split in order and the positions reached."""
    positions = dict(positions or {})
    records = {}
    rounds = 0
    while batches is None or rounds < batches:
        rounds += 1
        busy = False
        for split in source.splits(parallelism):
            position = positions.get(split, source.start_position(split))
            if source.is_finished(split, position):
                positions[split] = position
                continue
            planned = source.plan(split, position, max_records, 0)
            if planned is None:
                continue
            assert planned.split == split
            read, position = source.read(planned.descriptor)
            read = list(read)
            records.setdefault(split, []).extend(read)
            positions[split] = position
            busy = True
        if not busy and batches is None:
            break
    return records, positions


def lines(source, **kwargs) -> list:
    records, _ = drive(source, **kwargs)
    return [line for split in source.splits(1) for line in records.get(split, [])]


def text_source(*paths, **builder):
    built = FileSource.for_record_stream_format(StreamFormat.text_line_format(
        builder.pop("charset", "UTF-8")), *map(str, paths))
    if "interval" in builder:
        built.monitor_continuously(builder.pop("interval"))
    return built.build().engine_source()


def engine_text_source(path, split_size):
    return EngineFileSource([str(path)], TextLineFormat("utf-8", bytes.decode),
                            split_size=split_size)


def reference_lines(data: bytes) -> list:
    parts = re.split(rb"\r\n|\r|\n", data)
    if parts[-1] == b"":
        parts.pop()  # the final terminator ends the last line
    return [part.decode() for part in parts]


line_text = st.text(alphabet="ab\u00e9 ", max_size=12)
terminator = st.sampled_from(["\n", "\r\n", "\r"])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(line_text, terminator), max_size=30), st.booleans(),
       st.integers(1, 64), st.integers(1, 7))
def test_splits_cover_every_line_once_for_any_split_size_and_budget(
        tmp_path_factory, pieces, final_terminator, split_size, max_records):
    text = "".join(line + end for line, end in pieces)
    if pieces and not final_terminator:
        text = text[:-len(pieces[-1][1])]  # no terminator after the last line
    data = text.encode("utf-8")
    path = tmp_path_factory.mktemp("lines") / "data.txt"
    path.write_bytes(data)
    source = engine_text_source(path, split_size)
    assert lines(source, max_records=max_records) == reference_lines(data)


def test_a_large_file_is_cut_into_byte_range_splits_named_by_path_and_start(tmp_path):
    path = tmp_path / "big.txt"
    path.write_bytes(b"".join(b"line %d\n" % i for i in range(1000)))
    size = path.stat().st_size  # 8890 bytes
    source = engine_text_source(path, split_size=1000)
    splits = source.splits(2)
    assert splits == [f"{path}@{start}" for start in range(0, size, 1000)]
    records, positions = drive(source, parallelism=2, max_records=50)
    assert sum(records.values(), []) == [f"line {i}" for i in range(1000)]
    assert set(positions.values()) == {None}  # every split read to its end
    # The budget in bytes follows the file's line length: 50 lines of ~8 bytes per batch.
    first = source.plan(splits[0], 0, 50, 0)
    assert first.descriptor[-1] - first.descriptor[-2] == int(50 * size / 1000)


def test_lines_as_pyflink_reads_them(tmp_path):
    path = tmp_path / "t1.txt"
    path.write_bytes(b"a\rb\r\nc\n\xff\xfebad\nlast")
    assert lines(text_source(path)) == ["a", "b", "c", "\ufffd\ufffdbad", "last"]


def test_directories_are_read_recursively_without_hidden_files_and_gzip_decompressed(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "_tmp").mkdir()
    (tmp_path / "a.txt").write_bytes(b"x1\n")
    (tmp_path / ".hidden").write_bytes(b"h1\n")
    (tmp_path / "_under").write_bytes(b"u1\n")
    (tmp_path / "_tmp" / "in_hidden_dir.txt").write_bytes(b"d1\n")
    (tmp_path / "sub" / "s.txt").write_bytes(b"s1\n")
    (tmp_path / "z.gz").write_bytes(gzip.compress(b"g1\r\ng2\n"))
    # as PyFlink 2.3.0 read the same directory (without the hidden sub-directory)
    assert lines(text_source(tmp_path)) == ["x1", "s1", "g1", "g2"]


def test_gzip_is_one_split_whose_position_is_the_uncompressed_offset(tmp_path):
    path = tmp_path / "data.gz"
    path.write_bytes(gzip.compress(b"".join(b"%d\n" % i for i in range(100))))
    source = text_source(path)
    (split,) = source.splits(4)
    planned = source.plan(split, 0, 30, 0)
    assert planned.end is None  # known only once read
    records, position = source.read(planned.descriptor)
    assert records == [str(i) for i in range(30)] and position == 10 * 2 + 20 * 3
    rest, _ = drive(source, max_records=30, positions={split: position})
    assert rest[split] == [str(i) for i in range(30, 100)]


def test_utf16_text_is_one_split_read_whole(tmp_path):
    path = tmp_path / "wide.txt"
    path.write_bytes("x\r\ny\u00e9\nz".encode("utf-16"))
    source = text_source(path, charset="UTF-16")
    assert lines(source, max_records=2) == ["x", "y\u00e9", "z"]


def test_positions_resume_a_restarted_source_without_loss_or_repeat(tmp_path):
    for i in range(3):
        (tmp_path / f"f{i}.txt").write_bytes(b"".join(b"%d-%d\n" % (i, n) for n in range(50)))
    (tmp_path / "f3.gz").write_bytes(gzip.compress(b"".join(b"3-%d\n" % n for n in range(50))))
    whole = lines(engine_text_source(tmp_path, 100))
    first = engine_text_source(tmp_path, 100)
    before, positions = drive(first, max_records=7, batches=3)
    # A new source object (a restarted job) continues from the stored positions.
    after, _ = drive(engine_text_source(tmp_path, 100), max_records=7, positions=positions)
    assert sorted(sum(before.values(), []) + sum(after.values(), [])) == sorted(whole)
    assert len(whole) == 200


def test_the_non_splittable_enumerator_reads_each_file_as_one_split(tmp_path):
    path = tmp_path / "f.txt"
    path.write_bytes(b"1\n2\n3\n" * 1000)
    source = FileSource.for_record_stream_format(StreamFormat.text_line_format(), str(path)) \
        .set_file_enumerator(FileEnumeratorProvider.default_non_splittable_file_enumerator()) \
        .build().engine_source()
    assert len(source.splits(4)) == 1
    assert len(lines(source, max_records=500)) == 3000


def test_monitoring_finds_new_files_and_never_rereads_listed_ones(tmp_path):
    (tmp_path / "a.txt").write_bytes(b"a1\n")
    source = text_source(tmp_path, interval=Duration.of_millis(50))
    assert source.splits_change and not source.bounded
    records, positions = drive(source)
    assert records == {f"{tmp_path}/a.txt@0": ["a1"]}
    (tmp_path / "b.txt").write_bytes(b"b1\nb2\n")
    assert source.splits(1) == [f"{tmp_path}/a.txt@0"]  # not listed again before the interval
    time.sleep(0.06)
    assert source.splits(1) == [f"{tmp_path}/a.txt@0", f"{tmp_path}/b.txt@0"]
    records, _ = drive(source, positions=positions)
    assert records == {f"{tmp_path}/b.txt@0": ["b1", "b2"]}


def csv_source(path, schema):
    return FileSource.for_record_stream_format(CsvReaderFormat.for_schema(schema), str(path)) \
        .build()


def test_csv_records_with_a_quoted_line_break_header_and_arrays(tmp_path):
    path = tmp_path / "c1.csv"
    path.write_bytes(b'id|name|list\n1|"multi\nline"|a,b\n2|plain|c\n3|"x|y"|\n')
    schema = CsvSchema.builder().add_number_column("id", number_type=DataTypes.INT()) \
        .add_string_column("name").add_array_column("list", ",") \
        .set_column_separator("|").set_use_header().build()
    source = csv_source(path, schema)
    assert source.get_produced_type() == Types.ROW_NAMED(
        ["id", "name", "list"],
        [Types.INT(), Types.STRING(), Types.OBJECT_ARRAY(Types.STRING())])
    engine = source.engine_source()
    (split,) = engine.splits(2)
    records, position = engine.read(engine.plan(split, 0, 1, 0).descriptor)
    assert records == [Row(id=1, name="multi\nline", list=["a", "b"])]
    assert position == len(b'id|name|list\n1|"multi\nline"|a,b\n')
    rest, _ = drive(engine, positions={split: position})
    assert rest[split] == [Row(id=2, name="plain", list=["c"]), Row(id=3, name="x|y", list=[])]


def test_csv_missing_values_are_null_and_null_literals_read_as_null(tmp_path):
    path = tmp_path / "c.csv"
    path.write_bytes(b"1,x,true\n2\nNULL,NULL,false\n")
    schema = CsvSchema.builder().add_number_column("id").add_string_column("name") \
        .add_boolean_column("ok").set_null_value("NULL").build()
    assert lines(csv_source(path, schema).engine_source()) == [
        Row(id=1, name="x", ok=True), Row(id=2, name=None, ok=None),
        Row(id=None, name=None, ok=False)]


@pytest.mark.parametrize("content, offset, record, cause", [
    (b"1,x\nabc,y\n3,z\n", 4, "abc,y\n", 'Fail to deserialize at field: id. For input '
                                          'string: "abc"'),
    (b"1,x\n2,y,extra\n", 4, "2,y,extra\n", "Too many entries: expected at most 2, got 3"),
    (b"1,x\n2,\xff\n", 4, b"2,\xff\n", "invalid start byte"),
])
def test_bad_csv_names_the_split_offset_and_record(tmp_path, content, offset, record, cause):
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    schema = CsvSchema.builder().add_number_column("id", number_type=DataTypes.INT()) \
        .add_string_column("name").build()
    engine = csv_source(path, schema).engine_source()
    with pytest.raises(RecordReadError) as caught:
        drive(engine)
    error = caught.value
    assert (error.split, error.offset, error.record) == (f"{path}@0", offset, record)
    assert cause in str(error.cause)


def test_paths_must_be_local():
    with pytest.raises(ValueError, match="FileSource: only local or mounted file systems"):
        text_source("hdfs://nn/data")
