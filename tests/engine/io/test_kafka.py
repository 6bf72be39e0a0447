"""The Kafka source and sink through the engine's protocols, against a real broker (Tansu):
splits, planned ranges and repeatable reads, start and stop offsets, discovery, Kafka
timestamps, bad records, an unreachable broker, and the sink's delivery guarantees."""
import logging
import os
import pickle
import time

import pytest

from api.common import Row, SimpleStringSchema, Types, WatermarkStrategy
from api.common.serialization import RowFieldExtractorSchema
from api.datastream.connectors import DeliveryGuarantee
from api.datastream.connectors.kafka import (FlinkKafkaConsumer, FlinkKafkaProducer,
                                             KafkaOffsetResetStrategy, KafkaOffsetsInitializer,
                                             KafkaRecordSerializationSchema, KafkaSink,
                                             KafkaSource, KafkaTopicPartition)
from api.datastream.formats.csv import CsvRowDeserializationSchema
from api.datastream.formats.json import JsonRowDeserializationSchema, JsonRowSerializationSchema
from engine.io.kafka.client import KafkaUnavailableError
from engine.io.kafka.transactions import HEADERS
from engine.errors import RecordReadError
from engine.io.sinks import CommitterContext, WriterContext, read_staged, staged_file
from benchmarks.kafka_broker import (create_topic, free_port, produce, read_messages,
                                     read_values, unique_topic)
from tests.conftest import GatheringSink, make_env

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the legacy classes


def source(bootstrap, *topics, deserializer=None, **settings):
    builder = KafkaSource.builder().set_bootstrap_servers(bootstrap) \
        .set_value_only_deserializer(deserializer or SimpleStringSchema())
    if "pattern" in settings:
        builder.set_topic_pattern(settings.pop("pattern"))
    else:
        builder.set_topics(*topics)
    if "starting" in settings:
        builder.set_starting_offsets(settings.pop("starting"))
    if "bounded" in settings:
        builder.set_bounded(settings.pop("bounded"))
    builder.set_properties(settings.pop("properties", {}))
    for key, value in settings.items():
        builder.set_property(key, value)
    return builder.build().engine_source()


def drain(engine_source, positions=None, max_records=1000):
    """Plans and reads batches (as the driver and the tasks do) until nothing is left;
    the records per split and the positions reached."""
    positions = dict(positions or {})
    records = {}
    while True:
        progressed = False
        for split in engine_source.splits(1):
            if split not in positions:
                positions[split] = engine_source.start_position(split)
            if engine_source.is_finished(split, positions[split]):
                continue
            planned = engine_source.plan(split, positions[split], max_records, 0)
            if planned is None:
                continue
            read, after = engine_source.read(planned.descriptor)
            assert after == planned.end
            records.setdefault(split, []).extend(read)
            positions[split] = after
            progressed = True
        if not progressed:
            return records, positions


def values(records):
    return {split: [v for _, v in pairs] for split, pairs in records.items()}


def test_a_partition_is_a_split_read_in_planned_ranges_with_kafka_timestamps(kafka_broker):
    bootstrap = kafka_broker.bootstrap
    topic = create_topic(bootstrap, unique_topic(), partitions=2)
    for partition in (0, 1):
        produce(bootstrap, topic, [f"p{partition}-{i}" for i in range(7)], partition=partition,
                timestamps=[1000 * (partition + 1) + i for i in range(7)])
    kafka = source(bootstrap, topic)
    assert kafka.splits(2) == [f"{topic}:0", f"{topic}:1"]
    assert kafka.stamps_records and not kafka.bounded
    assert kafka.start_position(f"{topic}:0") == 0

    first = kafka.plan(f"{topic}:0", 0, 3, 0)
    assert first.end == 3 and first.descriptor == (topic, 0, 0, 3)
    assert kafka.read(first.descriptor) == ([(1000, "p0-0"), (1001, "p0-1"), (1002, "p0-2")],
                                            3)
    # A retried task reads the same range again, from a pickled copy of the source.
    assert pickle.loads(pickle.dumps(kafka)).read(first.descriptor) == \
        kafka.read(first.descriptor)

    records, positions = drain(kafka, {f"{topic}:0": 3}, max_records=2)
    assert values(records) == {f"{topic}:0": [f"p0-{i}" for i in range(3, 7)],
                               f"{topic}:1": [f"p1-{i}" for i in range(7)]}
    assert records[f"{topic}:1"][0] == (2000, "p1-0")
    assert positions == {f"{topic}:0": 7, f"{topic}:1": 7}
    assert kafka.plan(f"{topic}:0", 7, 10, 0) is None  # nothing new: no range
    assert not kafka.is_finished(f"{topic}:0", 7)  # unbounded

    produce(bootstrap, topic, ["late"], partition=1)
    records, positions = drain(kafka, positions)
    assert values(records) == {f"{topic}:1": ["late"]}


def test_transaction_markers_inside_a_range_are_skipped(kafka_broker):
    from confluent_kafka import Producer
    bootstrap = kafka_broker.bootstrap
    topic = create_topic(bootstrap, unique_topic())
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": unique_topic()})
    producer.init_transactions(30)
    for batch in range(3):
        producer.begin_transaction()
        for i in range(2):
            producer.produce(topic, f"{batch}-{i}".encode())
        producer.commit_transaction(30)
    records, positions = drain(source(bootstrap, topic), max_records=2)
    assert values(records) == {f"{topic}:0": ["0-0", "0-1", "1-0", "1-1", "2-0", "2-1"]}
    assert positions == {f"{topic}:0": 9}  # three commit markers took an offset each


def test_starting_offsets(kafka_broker):
    bootstrap = kafka_broker.bootstrap
    topic = create_topic(bootstrap, unique_topic(), partitions=2)
    for partition in (0, 1):
        produce(bootstrap, topic, [str(i) for i in range(5)], partition=partition,
                timestamps=[100 + 10 * i for i in range(5)], one_batch_each=True)
    p0, p1 = f"{topic}:0", f"{topic}:1"

    def start(initializer, **properties):
        kafka = source(bootstrap, topic, starting=initializer, **properties)
        kafka.splits(1)
        return [kafka.start_position(p0), kafka.start_position(p1)]

    assert start(KafkaOffsetsInitializer.earliest()) == [0, 0]
    assert start(KafkaOffsetsInitializer.latest()) == [5, 5]
    assert start(KafkaOffsetsInitializer.timestamp(120)) == [2, 2]
    assert start(KafkaOffsetsInitializer.timestamp(125)) == [3, 3]
    assert start(KafkaOffsetsInitializer.timestamp(999)) == [5, 5]  # none: the end
    assert start(KafkaOffsetsInitializer.offsets(
        {KafkaTopicPartition(topic, 0): 3})) == [3, 0]
    assert start(KafkaOffsetsInitializer.offsets(
        {KafkaTopicPartition(topic, 0): 3}, KafkaOffsetResetStrategy.LATEST)) == [3, 5]

    group = unique_topic("group")
    from confluent_kafka import Consumer, TopicPartition
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group})
    consumer.commit(offsets=[TopicPartition(topic, 0, 4)], asynchronous=False)
    consumer.close()
    assert start(KafkaOffsetsInitializer.committed_offsets(
        KafkaOffsetResetStrategy.LATEST), **{"group.id": group}) == [4, 5]
    assert start(KafkaOffsetsInitializer.committed_offsets(
        KafkaOffsetResetStrategy.EARLIEST), **{"group.id": group}) == [4, 0]
    with pytest.raises(ValueError, match=f"{p1} has no committed offset for group "
                                         f"'{group}' and the offset reset strategy is NONE"):
        start(KafkaOffsetsInitializer.committed_offsets(), **{"group.id": group})


def test_a_bounded_source_stops_at_the_stopping_offsets(kafka_broker):
    bootstrap = kafka_broker.bootstrap
    topic = create_topic(bootstrap, unique_topic(), partitions=2)
    produce(bootstrap, topic, ["a", "b", "c"], partition=0)
    kafka = source(bootstrap, topic, bounded=KafkaOffsetsInitializer.latest())
    assert kafka.bounded and not kafka.splits_change
    kafka.splits(1)
    produce(bootstrap, topic, ["after the stop"], partition=0)
    records, positions = drain(kafka, max_records=2)
    assert values(records) == {f"{topic}:0": ["a", "b", "c"]}
    assert positions == {f"{topic}:0": 3, f"{topic}:1": 0}
    assert kafka.is_finished(f"{topic}:0", 3) and kafka.is_finished(f"{topic}:1", 0)

    stop_at_2 = KafkaOffsetsInitializer.offsets({KafkaTopicPartition(topic, 0): 2,
                                                 KafkaTopicPartition(topic, 1): 0})
    records, _ = drain(source(bootstrap, topic, bounded=stop_at_2))
    assert values(records) == {f"{topic}:0": ["a", "b"]}


def test_new_topics_matching_the_pattern_are_discovered(kafka_broker):
    bootstrap = kafka_broker.bootstrap
    prefix = unique_topic("discover")
    first = create_topic(bootstrap, f"{prefix}-a")
    produce(bootstrap, first, ["a0", "a1"])
    kafka = source(bootstrap, pattern=f"{prefix}-.*",
                   starting=KafkaOffsetsInitializer.latest(),
                   **{"partition.discovery.interval.ms": "200"})
    slow = source(bootstrap, pattern=f"{prefix}-.*")  # discovery every 5 minutes (Flink's)
    assert kafka.splits_change and slow.splits_change
    assert kafka.splits(1) == [f"{first}:0"] == slow.splits(1)
    assert kafka.start_position(f"{first}:0") == 2  # latest

    second = create_topic(bootstrap, f"{prefix}-b", partitions=2)
    create_topic(bootstrap, f"other-{prefix}-c")  # does not match the whole pattern
    produce(bootstrap, second, ["b0"], partition=1)
    time.sleep(0.25)
    assert kafka.splits(1) == [f"{first}:0", f"{second}:0", f"{second}:1"]
    assert slow.splits(1) == [f"{first}:0"]
    # A partition found while the job runs is read from its start.
    assert kafka.start_position(f"{second}:1") == 0
    records, _ = drain(kafka, {f"{first}:0": 2})
    assert values(records) == {f"{second}:1": ["b0"]}


def test_a_missing_topic_fails(kafka_broker):
    kafka = source(kafka_broker.bootstrap, "no-such-topic-here")
    with pytest.raises(ValueError, match=r"Kafka topics \['no-such-topic-here'\] do not "
                                         r"exist at 127.0.0.1:"):
        kafka.splits(1)


JSON_ROW = JsonRowDeserializationSchema.builder().type_info(
    Types.ROW_NAMED(["id", "name"], [Types.INT(), Types.STRING()]))


def test_a_bad_record_fails_naming_split_offset_and_record(kafka_broker):
    bootstrap = kafka_broker.bootstrap
    topic = create_topic(bootstrap, unique_topic())
    produce(bootstrap, topic, ['{"id": 1, "name": "a"}', '{"id": 2, "name": broken', "x" * 500])
    kafka = source(bootstrap, topic, deserializer=JSON_ROW.build())
    kafka.splits(1)
    range_ = kafka.plan(f"{topic}:0", 0, 10, 0)
    with pytest.raises(RecordReadError) as failure:
        kafka.read(range_.descriptor)
    error = failure.value
    assert (error.split, error.offset, error.record) == \
        (f"{topic}:0", 1, b'{"id": 2, "name": broken')
    assert error.where() == f"split {topic}:0 at offset 1: record " \
                            f"b'{{\"id\": 2, \"name\": broken'"
    assert "Failed to deserialize JSON" in str(error.cause)

    csv = CsvRowDeserializationSchema.Builder(Types.ROW([Types.INT()])).build()
    with pytest.raises(RecordReadError) as failure:
        source(bootstrap, topic, deserializer=csv).read(range_.descriptor)
    assert failure.value.offset == 0


def test_ignore_parse_errors_skips_and_counts_bad_records(kafka_broker, caplog):
    bootstrap = kafka_broker.bootstrap
    topic = create_topic(bootstrap, unique_topic())
    produce(bootstrap, topic, ['{"id": 1, "name": "a"}', "not json", "[1]",
                               '{"id": 3, "name": "c"}'])
    kafka = source(bootstrap, topic, deserializer=JSON_ROW.ignore_parse_errors().build())
    with caplog.at_level(logging.WARNING, logger="engine.io.kafka.source"):
        records, positions = drain(kafka)
    assert values(records) == {f"{topic}:0": [Row(id=1, name="a"), Row(id=3, name="c")]}
    assert positions == {f"{topic}:0": 4}
    assert [r.getMessage() for r in caplog.records] == [
        f"Kafka {topic}:0 offsets 0-3: 2 records gave no value (unreadable records skipped "
        f"by the format's ignore-parse-errors) "]


def test_a_broker_that_is_down_fails_after_the_api_timeout():
    down = f"127.0.0.1:{free_port()}"
    kafka = source(down, "t", **{"default.api.timeout.ms": "1500"})
    began = time.monotonic()
    with pytest.raises(KafkaUnavailableError,
                       match=f"Kafka at {down} did not answer a metadata request within "
                             f"1500 ms \\(property default.api.timeout.ms\\)"):
        kafka.splits(1)
    with pytest.raises(KafkaUnavailableError, match="reading t:0 at offset 0 .up to 5. within "
                                                    "1500 ms .property default.api.timeout"):
        kafka.read(("t", 0, 0, 5))
    assert time.monotonic() - began < 15


def test_the_legacy_consumer_reads_from_the_group_offsets_or_auto_offset_reset(kafka_broker):
    bootstrap = kafka_broker.bootstrap
    topic = create_topic(bootstrap, unique_topic())
    produce(bootstrap, topic, ["a", "b"])
    properties = {"bootstrap.servers": bootstrap, "group.id": unique_topic("group")}
    latest = FlinkKafkaConsumer(topic, SimpleStringSchema(), properties).engine_source()
    assert not latest.splits_change  # the legacy consumer discovers only when told to
    latest.splits(1)
    assert latest.start_position(f"{topic}:0") == 2  # no group offset: auto.offset.reset
    earliest = FlinkKafkaConsumer(topic, SimpleStringSchema(), dict(
        properties, **{"auto.offset.reset": "earliest"})).engine_source()
    records, _ = drain(earliest)
    assert values(records) == {f"{topic}:0": ["a", "b"]}


# --- sink ---------------------------------------------------------------------------------

def record_serializer(topic):
    return KafkaRecordSerializationSchema.builder().set_topic(topic) \
        .set_value_serialization_schema(SimpleStringSchema()).build()


def kafka_sink(bootstrap, topic, guarantee, **properties):
    builder = KafkaSink.builder().set_bootstrap_servers(bootstrap) \
        .set_record_serializer(record_serializer(topic)) \
        .set_delivery_guarantee(guarantee).set_transactional_id_prefix("tx")
    for key, value in properties.items():
        builder.set_property(key, value)
    return builder.build().engine_sink(Types.STRING())


def writer_context(tmp_path, batch_id, subtask=0):
    return WriterContext("job", "run-1", "sink-1", subtask, 2, batch_id, str(tmp_path))


def test_at_least_once_writes_from_the_task_and_waits_at_the_batch_end(kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic = create_topic(bootstrap, unique_topic())
    sink = kafka_sink(bootstrap, topic, DeliveryGuarantee.AT_LEAST_ONCE)
    writer = sink.create_writer(writer_context(tmp_path, 0))
    writer.write(["a", "b"])
    writer.write(["c"])
    assert writer.prepare_commit() is None
    assert read_values(bootstrap, topic) == ["a", "b", "c"]

    legacy = FlinkKafkaProducer(topic, SimpleStringSchema(), {"bootstrap.servers": bootstrap})
    writer = legacy.engine_sink(Types.STRING()).create_writer(writer_context(tmp_path, 1))
    writer.write(["d"])
    writer.prepare_commit()
    assert read_values(bootstrap, topic) == ["a", "b", "c", "d"]


def test_at_least_once_fails_the_batch_when_the_broker_is_down(tmp_path):
    sink = kafka_sink(f"127.0.0.1:{free_port()}", "t", DeliveryGuarantee.AT_LEAST_ONCE,
                      **{"delivery.timeout.ms": "1000"})
    writer = sink.create_writer(writer_context(tmp_path, 0))
    writer.write(["a"])
    with pytest.raises(KafkaUnavailableError, match="did not take 1 records .property "
                                                    "delivery.timeout.ms bounds the wait"):
        writer.prepare_commit()


def stage(sink, tmp_path, batch_id, records, subtask=0):
    writer = sink.create_writer(writer_context(tmp_path, batch_id, subtask))
    writer.write(records)
    return writer.prepare_commit()


def committer(sink, tmp_path):
    result = sink.create_committer()
    result.open(CommitterContext("job", "sink-1", str(tmp_path)))
    return result


def test_exactly_once_delivers_a_committed_batch_once(kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic = create_topic(bootstrap, unique_topic(), partitions=2)
    sink = kafka_sink(bootstrap, topic, DeliveryGuarantee.EXACTLY_ONCE)
    staged = stage(sink, tmp_path, 3, ["a", "b", "c"], subtask=1)
    assert staged == staged_file(str(tmp_path), 3, 1)
    assert read_values(bootstrap, topic) == []  # staged: nothing in Kafka yet

    commit = committer(sink, tmp_path)
    assert commit.commits_in_tasks
    commit.commit(3, 1, staged)
    commit.commit(3, 1, staged)  # a retried commit task
    messages = read_messages(bootstrap, topic)
    assert sorted(m.value() for m in messages) == [b"a", b"b", b"c"]
    assert sorted(dict(m.headers())["sds.seq"] for m in messages) == [b"0", b"1", b"2"]
    assert {tuple(dict(m.headers())[h] for h in HEADERS[:4]) for m in messages} == \
        {(b"job", b"sink-1", b"1", b"3")}
    assert os.listdir(tmp_path) == []  # staged file and offsets marker are gone


def test_a_delivery_repeated_after_a_crash_writes_nothing_twice(kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    topic = create_topic(bootstrap, unique_topic(), partitions=2)
    sink = kafka_sink(bootstrap, topic, DeliveryGuarantee.EXACTLY_ONCE)
    records = [f"r{i}" for i in range(20)]
    staged = stage(sink, tmp_path, 0, records)
    # A crash after the transaction committed, before the staged file was deleted.
    committer(sink, tmp_path).deliver(0, 0, read_staged(staged))
    # A crash in the middle of the next batch's delivery: part of it was produced.
    staged_next = stage(sink, tmp_path, 1, ["s0", "s1", "s2"])
    committer(sink, tmp_path).deliver(1, 0, read_staged(staged_next)[:1])
    staged_last = stage(sink, tmp_path, 2, ["never committed"])
    # A crash while the offsets marker of a delivery is written leaves a partial file.
    crashing = committer(sink, tmp_path)

    def crash(*args):
        raise CrashBeforeCommit()
    crashing._end_offsets = crash
    with pytest.raises(CrashBeforeCommit):
        crashing.commit(2, 0, staged_last)

    restarted = committer(sink, tmp_path)
    restarted.recover(1)  # the job resumes after batch 1
    assert sorted(read_values(bootstrap, topic)) == sorted(records + ["s0", "s1", "s2"])
    assert not os.path.exists(staged) and not os.path.exists(staged_next)
    assert os.listdir(tmp_path) == []


class CrashBeforeCommit(Exception):
    pass


def test_records_of_a_transaction_left_open_by_a_crash_are_not_repeated(kafka_broker, tmp_path):
    """The restarted committer fences the crashed transaction. Kafka hides its records
    from read_committed readers; Tansu shows them: either way each record is read once."""
    bootstrap = kafka_broker.bootstrap
    topic = create_topic(bootstrap, unique_topic())
    sink = kafka_sink(bootstrap, topic, DeliveryGuarantee.EXACTLY_ONCE)
    staged = stage(sink, tmp_path, 0, ["a", "b"])
    crashing = committer(sink, tmp_path)

    def crash(what, call):
        if what.startswith("committing"):
            raise CrashBeforeCommit()
        call(30)
    crashing._blocking = crash
    with pytest.raises(CrashBeforeCommit):
        crashing.commit(0, 0, staged)
    assert os.path.exists(staged)

    committer(sink, tmp_path).recover(0)
    assert sorted(read_values(bootstrap, topic)) == ["a", "b"]


def test_exactly_once_fails_clearly_when_the_broker_is_down(tmp_path):
    sink = kafka_sink(f"127.0.0.1:{free_port()}", "t", DeliveryGuarantee.EXACTLY_ONCE,
                      **{"max.block.ms": "1000"})
    staged = stage(sink, tmp_path, 0, ["a"])
    with pytest.raises(KafkaUnavailableError, match="did not answer starting transactions "
                                                    "within 1000 ms .property max.block.ms"):
        committer(sink, tmp_path).commit(0, 0, staged)
    assert os.path.exists(staged)  # kept for the next attempt


def test_delivery_none_logs_what_the_broker_did_not_take(tmp_path, caplog):
    sink = kafka_sink(f"127.0.0.1:{free_port()}", "t", DeliveryGuarantee.NONE,
                      **{"delivery.timeout.ms": "1000"})
    writer = sink.create_writer(writer_context(tmp_path, 0))
    writer.write(["a"])
    with caplog.at_level(logging.WARNING, logger="engine.io.kafka.sink"):
        assert writer.prepare_commit() is None
    assert "did not take 1 records" in caplog.text


def test_exactly_once_writes_keys_and_chosen_topics(kafka_broker, tmp_path):
    bootstrap = kafka_broker.bootstrap
    even = create_topic(bootstrap, unique_topic("even"))
    odd = create_topic(bootstrap, unique_topic("odd"), partitions=2)
    serializer = KafkaRecordSerializationSchema.builder() \
        .set_topic_selector(lambda row: even if row[0] % 2 == 0 else odd) \
        .set_key_serialization_schema(RowFieldExtractorSchema(1)) \
        .set_value_serialization_schema(JsonRowSerializationSchema.builder().with_type_info(
            Types.ROW_NAMED(["n", "key"], [Types.INT(), Types.PRIMITIVE_ARRAY(Types.BYTE())]))
            .build()).build()
    sink = KafkaSink.builder().set_bootstrap_servers(bootstrap) \
        .set_record_serializer(serializer) \
        .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE).build() \
        .engine_sink(Types.ROW([Types.INT(), Types.PRIMITIVE_ARRAY(Types.BYTE())]))
    rows = [Row(n, f"k{n}".encode()) for n in range(6)]
    staged = stage(sink, tmp_path, 0, rows)
    commit = committer(sink, tmp_path)
    commit.deliver(0, 0, read_staged(staged))  # then a crash before the staged file went
    commit.recover(0)
    assert sorted(m.key() for m in read_messages(bootstrap, even)) == [b"k0", b"k2", b"k4"]
    assert sorted(m.key() for m in read_messages(bootstrap, odd)) == [b"k1", b"k3", b"k5"]
    assert read_messages(bootstrap, even)[0].value() == b'{"n":0,"key":"azA="}'


def test_a_partition_set_is_read_as_given(kafka_broker):
    bootstrap = kafka_broker.bootstrap
    topic = create_topic(bootstrap, unique_topic(), partitions=3)
    for partition in range(3):
        produce(bootstrap, topic, [str(partition)], partition=partition)
    kafka = KafkaSource.builder().set_bootstrap_servers(bootstrap) \
        .set_partitions({KafkaTopicPartition(topic, 2), KafkaTopicPartition(topic, 0)}) \
        .set_value_only_deserializer(SimpleStringSchema()).build().engine_source()
    assert not kafka.splits_change
    assert kafka.splits(1) == [f"{topic}:0", f"{topic}:2"]
    records, _ = drain(kafka)
    assert values(records) == {f"{topic}:0": ["0"], f"{topic}:2": ["2"]}


def test_a_partition_without_an_end_offset_is_named(kafka_broker):
    # The end offsets of every split come in one request: an error for one partition
    # names it, not the request.
    bootstrap = kafka_broker.bootstrap
    topic = create_topic(bootstrap, unique_topic())
    produce(bootstrap, topic, ["a"])
    kafka = KafkaSource.builder().set_bootstrap_servers(bootstrap) \
        .set_partitions({KafkaTopicPartition(topic, 0), KafkaTopicPartition(topic, 3)}) \
        .set_value_only_deserializer(SimpleStringSchema()).build().engine_source()
    kafka.splits(1)
    with pytest.raises(KafkaUnavailableError,
                       match=f"Kafka at {bootstrap} gave no end offset for {topic}:3: .*"
                             "Unknown partition"):
        kafka.plan(f"{topic}:0", 0, 10, 0)


def test_records_skipped_as_unreadable_are_the_sources_num_records_in_errors(kafka_broker):
    bootstrap = kafka_broker.bootstrap
    topic = create_topic(bootstrap, unique_topic())
    produce(bootstrap, topic, ['{"id": 1, "name": "a"}', "not json", "[1]",
                               '{"id": 3, "name": "c"}'])
    kafka = KafkaSource.builder().set_bootstrap_servers(bootstrap).set_topics(topic) \
        .set_bounded(KafkaOffsetsInitializer.latest()) \
        .set_value_only_deserializer(JSON_ROW.ignore_parse_errors().build()).build()
    env = make_env("local", micro_batch_size=2)
    out = GatheringSink()
    env.from_source(kafka, WatermarkStrategy.no_watermarks(), "orders").add_sink(out)
    metrics = env.execute().get_metrics()
    assert sorted(row.id for row in out.values()) == [1, 3]
    assert metrics["job"]["numRecordsInErrors"] == 2
    assert metrics["operators"]["Source: orders"]["numRecordsInErrors"] == 2
    assert metrics["operators"]["Source: orders"]["numRecordsIn"] == 2


def test_the_next_batch_starts_at_once_while_input_waits(kafka_broker):
    # An interval of ten minutes between batches, and records for five batches waiting:
    # a batch that finds more input after it starts the next one at once. (Waiting out
    # the interval, the job would take 40 minutes.)
    topic = create_topic(kafka_broker.bootstrap, unique_topic("waiting"), 1)
    produce(kafka_broker.bootstrap, topic, [str(i) for i in range(50)])
    assert source(kafka_broker.bootstrap, topic).has_input(f"{topic}:0", 0)
    env = make_env("local", micro_batch_size=10,
                   **{"execution.micro-batch.interval": 600_000})
    sink = GatheringSink()
    env.from_source(KafkaSource.builder().set_bootstrap_servers(kafka_broker.bootstrap)
                    .set_topics(topic).set_value_only_deserializer(SimpleStringSchema())
                    .set_starting_offsets(KafkaOffsetsInitializer.earliest()).build(),
                    WatermarkStrategy.no_watermarks(), "waiting").add_sink(sink)
    client = env.execute_async()
    try:
        deadline = time.time() + 60
        while len(sink.values()) < 50 and time.time() < deadline:
            time.sleep(0.05)
        assert sorted(map(int, sink.values())) == list(range(50))
    finally:
        client.cancel().result(timeout=30)
    assert not source(kafka_broker.bootstrap, topic).has_input(f"{topic}:0", 50)
