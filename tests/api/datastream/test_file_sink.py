"""FileSink: row-format part files in buckets, named as Flink names them, published only
when their batch commits; recovery finishes committed batches' files and drops the rest.

Expected lines and bucket names are pinned against PyFlink 2.3.0 (its FileSink output and
Java's DateTimeFormatter)."""
import os
import re
from datetime import datetime

import pytest

from api.common import Row, Types, WatermarkStrategy
from api.datastream import RuntimeExecutionMode
from api.datastream.connectors import NumberSequenceSource
from api.datastream.connectors.file_system import (BucketAssigner, Encoder, FileSink,
                                                   OutputFileConfig, RollingPolicy)
from engine.errors import JobExecutionException
from engine.io.files.sink import EncodedFormat, FileCommitter, FileSink as EngineFileSink, \
    in_progress_file
from engine.io.sinks import WriterContext
from tests.conftest import make_env

UUID = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"


def part_files(base: str, hidden: bool = False) -> dict:
    """Relative path -> content of the finished (or, with ``hidden``, in-progress) files."""
    found = {}
    for directory, _, names in os.walk(base):
        for name in names:
            if name.startswith(".") == hidden:
                path = os.path.join(directory, name)
                with open(path, "rb") as f:
                    found[os.path.relpath(path, base)] = f.read()
    return found


def lines_of(files: dict) -> list:
    return sorted(line for content in files.values()
                  for line in content.decode("utf-8").split("\n")[:-1])


def sink(path, **config) -> FileSink:
    """A FileSink writing into ``path`` directly (no date bucket) unless told otherwise."""
    builder = FileSink.for_row_format(str(path), config.pop("encoder",
                                                            Encoder.simple_string_encoder()))
    builder.with_bucket_assigner(config.pop("bucket_assigner",
                                            BucketAssigner.base_path_bucket_assigner()))
    if "rolling_policy" in config:
        builder.with_rolling_policy(config.pop("rolling_policy"))
    if "output_file_config" in config:
        builder.with_output_file_config(config.pop("output_file_config"))
    return builder.build()


def numbers_job(executor: str, base, parallelism: int, batch_size: int, map_function=None):
    """1..40 in STREAMING mode: each of ``parallelism`` splits hands out ``batch_size``
    numbers per micro-batch, into a FileSink chained to the source."""
    env = make_env(executor, parallelism=parallelism, micro_batch_size=batch_size)
    env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
    ds = env.from_source(NumberSequenceSource(1, 40), WatermarkStrategy.no_watermarks(), "seq")
    if map_function is not None:
        ds = ds.map(map_function, output_type=Types.LONG())
    ds.sink_to(sink(base))
    return env


def test_batch_mode_writes_java_strings_into_prefixed_part_files(tmp_path):
    env = make_env("local")
    env.set_runtime_mode(RuntimeExecutionMode.BATCH)
    config = OutputFileConfig.builder().with_part_prefix("pre").with_part_suffix(".txt").build()
    env.from_collection([(1, "a", 1.5), (2, "b", 2.25)],
                        type_info=Types.TUPLE([Types.INT(), Types.STRING(), Types.DOUBLE()])) \
        .sink_to(sink(tmp_path / "tuples", output_file_config=config))
    env.from_collection([Row(1, "x", 2.0), Row(None, "y", None)]) \
        .map(lambda r: r, output_type=Types.ROW([Types.INT(), Types.STRING(), Types.DOUBLE()])) \
        .sink_to(sink(tmp_path / "rows"))
    env.from_collection(["a", (1, 2), None]).sink_to(sink(tmp_path / "untyped"))
    env.execute()

    tuples = part_files(tmp_path / "tuples")
    assert [re.fullmatch(f"pre-{UUID}-0\\.txt", name) is not None for name in tuples] == [True]
    assert lines_of(tuples) == ["(1,a,1.5)", "(2,b,2.25)"]
    rows = part_files(tmp_path / "rows")
    assert [re.fullmatch(f"part-{UUID}-0", name) is not None for name in rows] == [True]
    assert lines_of(rows) == ["+I[1, x, 2.0]", "+I[null, y, null]"]  # Java's Row.toString
    assert lines_of(part_files(tmp_path / "untyped")) == ["(1, 2)", "None", "a"]
    assert part_files(tmp_path, hidden=True) == {}


def test_default_bucket_is_the_processing_hour_in_local_time(tmp_path):
    env = make_env("local")
    env.from_collection([1, 2], type_info=Types.INT()).sink_to(
        FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder()).build())
    before = datetime.now().strftime("%Y-%m-%d--%H")
    env.execute()
    after = datetime.now().strftime("%Y-%m-%d--%H")
    files = part_files(tmp_path)
    assert {os.path.dirname(name) for name in files} <= {before, after}
    assert lines_of(files) == ["1", "2"]


@pytest.mark.parametrize("format_str, timezone_id, expected", [
    ("yyyy-MM-dd--HH", "UTC", "2023-11-14--22"),
    ("yyyy-MM-dd--HH", "Asia/Kolkata", "2023-11-15--03"),
    ("yyyy-MM-dd--HH", "America/New_York", "2023-11-14--17"),
    ("yy/M/d H:m:s", "UTC", "23/11/14 22:13:20"),
    ("EEE EEEE MMM MMMM a hh", "UTC", "Tue Tuesday Nov November PM 10"),
    ("D DDD SSS S", "UTC", "318 318 123 1"),
    ("'it''s' yyyy", "UTC", "it's 2023"),
])
def test_date_time_bucket_formats_like_java(format_str, timezone_id, expected):
    assigner = BucketAssigner.date_time_bucket_assigner(format_str, timezone_id)
    assert assigner._bucket_id("record", 1700000000123) == expected


def test_streaming_writes_one_file_per_subtask_and_batch(tmp_path):
    numbers_job("local", tmp_path, parallelism=2, batch_size=5).execute()
    files = part_files(tmp_path)
    # Each subtask's 5 numbers of a batch form one file: 2 splits x 4 batches.
    assert sorted(content.decode().split() for content in files.values()) == sorted(
        [str(n) for n in range(start, start + 5)] for start in range(1, 41, 5))
    assert all(re.fullmatch(f"part-{UUID}-0", name) for name in files)
    assert len({name for name in files}) == 8
    assert part_files(tmp_path, hidden=True) == {}


def test_part_size_rolls_files_and_on_checkpoint_policy_does_not(tmp_path):
    env = make_env("local")
    records = env.from_collection(["x" * 10] * 20, type_info=Types.STRING())
    records.sink_to(sink(tmp_path / "by_size",
                         rolling_policy=RollingPolicy.default_rolling_policy(part_size=50)))
    records.sink_to(sink(tmp_path / "on_checkpoint",
                         rolling_policy=RollingPolicy.on_checkpoint_rolling_policy()))
    env.execute()
    by_size = part_files(tmp_path / "by_size")
    # A file rolls once it is larger than part_size: 5 lines of 11 bytes (as Flink does).
    assert sorted(by_size.values()) == [b"xxxxxxxxxx\n" * 5] * 4
    writer = {name.rsplit("-", 1)[0] for name in by_size}
    assert len(writer) == 1 and sorted(name.rsplit("-", 1)[1] for name in by_size) == \
        ["0", "1", "2", "3"]
    assert list(part_files(tmp_path / "on_checkpoint").values()) == [b"xxxxxxxxxx\n" * 20]


def test_charset_encodes_lines_and_replaces_what_it_cannot_encode(tmp_path):
    env = make_env("local")
    env.from_collection(["héllo €"], type_info=Types.STRING()).sink_to(
        sink(tmp_path, encoder=Encoder.simple_string_encoder("ISO-8859-1")))
    env.execute()
    assert list(part_files(tmp_path).values()) == [b"h\xe9llo ?\n"]


def fail_on_33(x):
    if x == 33:
        raise ValueError("no 33")
    return x


def test_a_failed_batch_leaves_committed_files_finished_and_its_own_unpublished(tmp_path):
    # Split 2 (21..40) fails in batch 2 (31..35); split 1 has written 11..15 by then.
    env = numbers_job("local", tmp_path, parallelism=2, batch_size=5, map_function=fail_on_33)
    with pytest.raises(JobExecutionException, match="no 33"):
        env.execute()
    committed = [str(n) for n in list(range(1, 11)) + list(range(21, 31))]
    assert lines_of(part_files(tmp_path)) == sorted(committed)
    in_progress = part_files(tmp_path, hidden=True)
    assert lines_of(in_progress) == [str(n) for n in range(11, 16)]
    assert all(name.endswith(".inprogress.2") for name in in_progress)

    FileCommitter(str(tmp_path), "part", "").recover(1)  # resume after batch 1
    assert part_files(tmp_path, hidden=True) == {}
    assert lines_of(part_files(tmp_path)) == sorted(committed)


def write(path, content: bytes) -> str:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(content)
    return path


def test_recover_finishes_committed_batches_and_deletes_later_ones(tmp_path):
    base = str(tmp_path)
    b1 = write(in_progress_file(f"{base}/h1/part-u1-0", 1), b"one\n")
    b2 = write(in_progress_file(f"{base}/h2/part-u2-0", 2), b"two\n")
    b3 = write(in_progress_file(f"{base}/h2/part-u3-0", 3), b"three\n")
    # Renamed before the crash, yet its in-progress copy is there: the finished file wins.
    write(f"{base}/h1/part-u4-0", b"published\n")
    b4 = write(in_progress_file(f"{base}/h1/part-u4-0", 2), b"stale\n")
    other = write(in_progress_file(f"{base}/h1/other-u5-0", 3), b"another sink\n")

    publisher = FileCommitter(base, "part", "")
    publisher.recover(2)
    assert part_files(tmp_path) == {"h1/part-u1-0": b"one\n", "h2/part-u2-0": b"two\n",
                                    "h1/part-u4-0": b"published\n"}
    assert part_files(tmp_path, hidden=True) == {os.path.relpath(other, base): b"another sink\n"}
    assert not any(os.path.exists(p) for p in (b1, b2, b3, b4))

    publisher.recover(2)  # idempotent
    publisher.commit(2, 0, [b1, b2])  # committing a finished batch again changes nothing
    assert len(part_files(tmp_path)) == 3


def test_publish_fails_clearly_when_the_driver_cannot_see_a_part_file(tmp_path):
    publisher = FileCommitter(str(tmp_path), "part", "")
    with pytest.raises(FileNotFoundError, match="written by subtask 1 is not visible"):
        publisher.commit(0, 1, [in_progress_file(str(tmp_path / "part-u-0"), 0)])


def run_writer(base, records, run_id="run", batch_id=3, subtask=1, part_size=None,
               bucket_id=lambda value, time: "", buckets_by_record=False) -> list:
    """One subtask of a FileSink writer for one batch; returns its in-progress files."""
    context = WriterContext("job", run_id, "sink", subtask, 2, batch_id, "", 0)
    sink = EngineFileSink(str(base), EncodedFormat(lambda v: v.encode() + b"\n"), "part", "",
                          part_size, bucket_id, "sink", buckets_by_record)
    writer = sink.create_writer(context)
    writer.write(records)
    return writer.prepare_commit()


def test_records_go_to_the_part_files_of_their_own_buckets(tmp_path):
    # (a partitioned table's rows: each record's bucket is its partition's directory)
    paths = run_writer(tmp_path, ["a1", "b1", "a2", "a3", "b2"], part_size=4,
                       bucket_id=lambda value, time: "k=" + value[0], buckets_by_record=True)
    FileCommitter(str(tmp_path), "part", "").commit(3, 1, paths)
    files = part_files(tmp_path)
    by_bucket = {}
    for path in sorted(files, key=lambda p: int(p.rsplit("-", 1)[1])):
        by_bucket.setdefault(os.path.dirname(path), []).append(files[path])
    # a part file rolls once larger than 4 bytes, in its own bucket
    assert by_bucket == {"k=a": [b"a1\na2\n", b"a3\n"], "k=b": [b"b1\nb2\n"]}


def test_a_bucket_of_the_batch_is_found_once_not_per_record(tmp_path):
    # (the date-time and base-path assigners: the bucket follows the processing time)
    calls = []
    run_writer(tmp_path, ["a", "b", "c"], bucket_id=lambda value, time: calls.append(value) or "")
    assert calls == [None]


def test_a_retried_task_overwrites_its_own_in_progress_file(tmp_path):
    first = run_writer(tmp_path, ["a", "b", "c"])
    retry = run_writer(tmp_path, ["a", "b"])
    assert retry == first
    assert list(part_files(tmp_path, hidden=True).values()) == [b"a\nb\n"]
    # Another batch, subtask or run never reuses the name.
    assert len({run_writer(tmp_path, ["x"], **kw)[0]
                for kw in ({}, {"batch_id": 4}, {"subtask": 0}, {"run_id": "run2"})}) == 4


@pytest.mark.parametrize("build, error", [
    (lambda: FileSink.for_row_format("/tmp/x", "utf-8"), "encoder must be an Encoder"),
    (lambda: Encoder.simple_string_encoder("no-such-charset"), "unknown charset"),
    (lambda: RollingPolicy.default_rolling_policy(part_size=0), "part_size must be a positive"),
    (lambda: BucketAssigner.date_time_bucket_assigner("yyyy-QQ"), "unsupported pattern 'QQ'"),
    (lambda: BucketAssigner.date_time_bucket_assigner("yyyy", "Mars/Base"), "unknown timezone"),
    (lambda: FileSink.for_row_format("hdfs://nn/out", Encoder.simple_string_encoder()),
     "only local or mounted file systems"),
    (lambda: FileSink.for_row_format("/tmp/x", Encoder.simple_string_encoder())
     .with_rolling_policy(OutputFileConfig("a", "b")), "expected a RollingPolicy"),
])
def test_bad_configuration_fails_at_build_time(build, error):
    with pytest.raises((TypeError, ValueError), match=error):
        build()


def test_streaming_on_spark(spark, tmp_path):
    numbers_job("spark", tmp_path, parallelism=2, batch_size=10).execute()
    files = part_files(tmp_path)
    assert sorted(content.decode().split() for content in files.values()) == sorted(
        [str(n) for n in range(start, start + 10)] for start in range(1, 41, 10))
    assert part_files(tmp_path, hidden=True) == {}
