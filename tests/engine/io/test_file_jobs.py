"""File jobs end to end through ``env.execute``: FileSource over a static set of files and
watching a directory, FileSink with a Parquet bulk format, and a job that fails and is
restarted from its checkpoint directory without losing or repeating a line."""
import gzip
import os
import time
from collections import Counter

import pyarrow.parquet as pq
import pytest

from api.common import Duration, Row, Types, WatermarkStrategy
from api.common.job_status import JobStatus
from api.datastream import RuntimeExecutionMode
from api.datastream.connectors.file_system import (BucketAssigner, Encoder, FileSink,
                                                   FileSource, StreamFormat)
from api.datastream.formats.parquet import ParquetBulkWriters
from api.datastream.functions import MapFunction
from api.table.types import DataTypes
from engine.io.files import source as file_source
from engine.errors import JobExecutionException
from tests.conftest import finished_lines, make_env


def write_inputs(directory) -> list:
    """A large text file (cut into several splits), a gzip file, a hidden file and a
    nested one; returns the lines the source must read."""
    directory.mkdir(exist_ok=True)
    (directory / "nested").mkdir(exist_ok=True)
    big = [f"big {i}" for i in range(2000)]
    (directory / "big.txt").write_text("\n".join(big) + "\n")
    zipped = [f"zip {i}" for i in range(300)]
    (directory / "z.gz").write_bytes(gzip.compress("\r\n".join(zipped).encode()))
    (directory / "nested" / "n.txt").write_text("nested\n")
    (directory / ".hidden").write_text("never\n")
    return big + zipped + ["nested"]


def text_files(*paths, interval=None) -> FileSource:
    builder = FileSource.for_record_stream_format(StreamFormat.text_line_format(),
                                                  *map(str, paths))
    if interval is not None:
        builder.monitor_continuously(interval)
    return builder.build()



def row_sink(out_dir) -> FileSink:
    return FileSink.for_row_format(str(out_dir), Encoder.simple_string_encoder()) \
        .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner()).build()


@pytest.mark.parametrize("parallelism", [1, 3])
def test_a_static_file_set_is_read_once(executor, tmp_path, monkeypatch, parallelism):
    monkeypatch.setattr(file_source, "SPLIT_SIZE", 4096)  # big.txt becomes 5 splits
    expected = write_inputs(tmp_path / "in")
    env = make_env(executor, parallelism=parallelism, micro_batch_size=97)
    ds = env.from_source(text_files(tmp_path / "in"), WatermarkStrategy.no_watermarks(),
                         "files")
    assert ds.get_type() == Types.STRING()
    assert sorted(ds.execute_and_collect()) == sorted(expected)


def test_read_text_file_reads_a_directory_with_the_same_machinery(tmp_path):
    expected = write_inputs(tmp_path / "in")
    env = make_env("local", parallelism=2)
    assert sorted(env.read_text_file(str(tmp_path / "in")).execute_and_collect()) == \
        sorted(expected)


def wait_for(predicate, timeout=60.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_monitoring_picks_up_a_file_written_while_the_job_runs(tmp_path):
    source_dir, out = tmp_path / "in", tmp_path / "out"
    source_dir.mkdir()
    (source_dir / "a.txt").write_text("a1\na2\n")
    env = make_env("local", parallelism=2, micro_batch_size=10)
    env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
    env.from_source(text_files(source_dir, interval=Duration.of_millis(100)),
                    WatermarkStrategy.no_watermarks(), "watched").sink_to(row_sink(out))
    client = env.execute_async("monitor")
    try:
        wait_for(lambda: sorted(finished_lines(out)) == ["a1", "a2"])
        # Written elsewhere and moved in: complete when it appears.
        (tmp_path / "b.tmp").write_text("b1\nb2\nb3\n")
        os.rename(tmp_path / "b.tmp", source_dir / "b.txt")
        wait_for(lambda: len(finished_lines(out)) == 5)
        assert client.get_job_status().result() is JobStatus.RUNNING
    finally:
        client.cancel().result(timeout=60)
    assert sorted(finished_lines(out)) == ["a1", "a2", "b1", "b2", "b3"]


def test_a_parquet_file_sink_job(executor, tmp_path):
    row_type = Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()])
    columns = DataTypes.ROW([DataTypes.FIELD("id", DataTypes.INT()),
                             DataTypes.FIELD("name", DataTypes.STRING())])
    env = make_env(executor, parallelism=2, micro_batch_size=7)
    env.from_collection([(i, f"n{i}") for i in range(50)]) \
        .map(lambda t: Row(id=t[0], name=t[1]), output_type=row_type) \
        .sink_to(FileSink.for_bulk_format(str(tmp_path / "out"),
                                          ParquetBulkWriters.for_row_type(columns))
                 .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner()).build())
    env.execute("parquet")
    names = [n for n in os.listdir(tmp_path / "out") if not n.startswith(".")]
    rows = [row for name in names for row in pq.read_table(tmp_path / "out" / name).to_pylist()]
    assert sorted(rows, key=lambda r: r["id"]) == [{"id": i, "name": f"n{i}"}
                                                   for i in range(50)]
    assert len(names) > 2  # one file per subtask and batch


class FailOnce(MapFunction):
    """Fails on one line while ``marker`` does not exist (the first run only)."""

    def __init__(self, line: str, marker: str):
        self.line = line
        self.marker = marker

    def map(self, value):
        if value == self.line and not os.path.exists(self.marker):
            open(self.marker, "w").close()
            raise RuntimeError("injected failure")
        return value


def test_a_restarted_job_neither_skips_nor_repeats_a_line(tmp_path, monkeypatch):
    monkeypatch.setattr(file_source, "SPLIT_SIZE", 4096)
    expected = write_inputs(tmp_path / "in")
    marker = str(tmp_path / "failed")

    def run():
        env = make_env("local", parallelism=2, micro_batch_size=50,
                       **{"state.checkpoints.dir": str(tmp_path / "checkpoints")})
        env.set_runtime_mode(RuntimeExecutionMode.STREAMING)
        env.enable_checkpointing(100)
        env.from_source(text_files(tmp_path / "in"), WatermarkStrategy.no_watermarks(),
                        "files").uid("files") \
            .map(FailOnce("big 1700", marker), Types.STRING()).uid("map") \
            .sink_to(row_sink(tmp_path / "out")).uid("sink")
        env.execute("restarted")

    with pytest.raises(JobExecutionException, match="injected failure"):
        run()
    committed = finished_lines(tmp_path / "out")
    assert 0 < len(committed) < len(expected)
    run()  # resumes from the positions of the last committed batch
    assert Counter(finished_lines(tmp_path / "out")) == Counter(expected)


JOB = os.path.join(os.path.dirname(__file__), "file_crash_job.py")


def test_a_file_job_killed_with_sigkill_resumes_exactly_once(tmp_path):
    import random
    import subprocess
    import sys
    expected = write_inputs(tmp_path / "in")
    metadata = tmp_path / "checkpoints" / "file-crash-job" / "metadata"
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(JOB))))

    def start():
        return subprocess.Popen([sys.executable, JOB, str(tmp_path / "in"),
                                 str(tmp_path / "checkpoints"), str(tmp_path / "out")],
                                cwd=root, env=dict(os.environ, PYTHONPATH=root),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

    def commits():
        return [int(n) for n in os.listdir(metadata) if n.isdigit()] if metadata.exists() \
            else []

    rng = random.Random(7)
    # the job runs about 12 batches (7 splits, 40 lines each per batch); two kills before
    for batch_id in sorted(rng.sample(range(2, 9), 2)):
        process = start()
        while max(commits(), default=-1) < batch_id:
            assert process.poll() is None, process.stderr.read().decode()
            time.sleep(0.005)
        time.sleep(rng.uniform(0, 0.1))
        process.kill()
        process.wait()
    process = start()
    _, stderr = process.communicate(timeout=300)
    assert process.returncode == 0, stderr.decode()
    assert Counter(finished_lines(tmp_path / "out")) == Counter(expected)
