"""The file connectors' builders: FileSource, bulk formats, compaction and the legacy
StreamingFileSink. They record their settings; using one that this engine cannot run yet
(bulk reading formats, StreamingFileSink) fails when the job is built."""
import warnings

import pytest

from api.common import Duration, Encoder, Types, WatermarkStrategy
from api.datastream.connectors.file_system import (
    BulkFormat, FileCompactor, FileCompactStrategy, FileEnumeratorProvider, FileSink,
    FileSource, FileSplitAssignerProvider, OnCheckpointRollingPolicy, RollingPolicy,
    StreamFormat, StreamingFileSink)
from api.datastream.formats.csv import CsvBulkWriters, CsvSchema
from api.datastream.formats.parquet import ParquetColumnarRowInputFormat
from api.table.types import DataTypes
from api.unavailable import ConnectorUnavailableError
from tests.conftest import make_env


def test_file_source_builder_records_its_settings():
    source = FileSource.for_record_stream_format(StreamFormat.text_line_format("UTF-16"),
                                                 "/data/a", "/data/b") \
        .monitor_continuously(Duration.of_seconds(10)) \
        .set_file_enumerator(FileEnumeratorProvider.default_non_splittable_file_enumerator()) \
        .set_split_assigner(FileSplitAssignerProvider.locality_aware_split_assigner()) \
        .build()
    assert source._paths == ("/data/a", "/data/b")
    assert source._format._settings == {"charset_name": "UTF-16"}
    assert source._discovery_interval == Duration.of_seconds(10)
    assert source._file_enumerator._kind == "non_splittable"
    assert source._split_assigner._kind == "locality_aware"
    bounded = FileSource.for_bulk_file_format(BulkFormat("test"), "/data") \
        .monitor_continuously(Duration.of_seconds(1)).process_static_file_set().build()
    assert bounded._discovery_interval is None


def test_file_source_builder_validates():
    with pytest.raises(ValueError, match="at least one path"):
        FileSource.for_record_stream_format(StreamFormat.text_line_format())
    with pytest.raises(ValueError, match="discoveryInterval must be > 0"):
        FileSource.for_record_stream_format(StreamFormat.text_line_format(), "/d") \
            .monitor_continuously(Duration.of_millis(0))
    with pytest.raises(TypeError, match="expected a StreamFormat"):
        FileSource.for_record_stream_format("lines", "/d")
    with pytest.raises(ValueError, match="unknown charset"):
        StreamFormat.text_line_format("nope")


def test_a_file_source_with_a_bulk_format_fails_at_build_time_naming_it():
    env = make_env("local")
    source = FileSource.for_bulk_file_format(
        ParquetColumnarRowInputFormat(DataTypes.ROW([DataTypes.FIELD("a", DataTypes.INT())])), "/data").build()
    with pytest.raises(ConnectorUnavailableError,
                       match="ParquetColumnarRowInputFormat is not available yet in this "
                             "engine.*Use instead: env.from_collection"):
        env.from_source(source, WatermarkStrategy.no_watermarks(), "files")


def test_a_bulk_format_file_sink_rolls_on_checkpoints_only(tmp_path):
    schema = CsvSchema.builder().add_number_column("n").build()
    builder = FileSink.for_bulk_format(str(tmp_path), CsvBulkWriters.for_schema(schema))
    with pytest.raises(ValueError, match="must be OnCheckpointRollingPolicy"):
        builder.with_rolling_policy(RollingPolicy.default_rolling_policy())
    sink = builder.with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy()).build()
    assert isinstance(sink._rolling_policy, OnCheckpointRollingPolicy)
    assert sink.get_transformer() is None
    assert sink.engine_sink(Types.ROW_NAMED(["n"], [Types.LONG()])).part_size is None
    with pytest.raises(TypeError, match="must be a BulkWriterFactory"):
        FileSink.for_bulk_format(str(tmp_path), Encoder.simple_string_encoder())


def test_file_sink_compaction_settings_are_recorded(tmp_path):
    strategy = FileCompactStrategy.builder().enable_compaction_on_checkpoint(3) \
        .set_size_threshold(1024).set_num_compact_threads(2).build()
    compactor = FileCompactor.concat_file_compactor(b"\n")
    sink = FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder()) \
        .enable_compact(strategy, compactor).build()
    assert sink._compaction == (strategy, compactor)
    assert (strategy._num_checkpoints_before_compaction, strategy._size_threshold,
            strategy._num_compact_threads) == (3, 1024, 2)
    assert compactor._file_delimiter == b"\n"
    assert FileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder()) \
        .enable_compact(strategy, FileCompactor.identical_file_compactor()) \
        .disable_compact().build()._compaction is None
    with pytest.raises(ValueError, match="At least one compaction trigger"):
        FileCompactStrategy.builder().set_num_compact_threads(2).build()


def test_streaming_file_sink_is_deprecated_and_unavailable(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sink = StreamingFileSink.for_row_format(str(tmp_path), Encoder.simple_string_encoder()) \
            .with_bucket_check_interval(1000).build()
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    assert sink._settings["bucket_check_interval"] == 1000
    ds = make_env("local").from_collection(["a"], Types.STRING())
    with pytest.raises(ConnectorUnavailableError,
                       match="StreamingFileSink is not available yet.*FileSink.for_row_format"):
        ds.add_sink(sink)
