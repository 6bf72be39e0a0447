"""Kafka connectors: builders record their settings and check them as Flink does when they
are built; the record serialization schema works (running them: tests/engine/io)."""
import warnings

import pytest

from api.common import Row, SimpleStringSchema, Types
from api.common.serialization import RowFieldExtractorSchema
from api.datastream.connectors import DeliveryGuarantee
from api.datastream.connectors.dynamic_kafka import (
    DynamicKafkaSource, KafkaRecordDeserializationSchema, KafkaStreamSetSubscriber,
    SingleClusterTopicMetadataService, StreamPatternSubscriber)
from api.datastream.connectors.kafka import (
    FlinkKafkaConsumer, FlinkKafkaProducer, KafkaOffsetResetStrategy, KafkaOffsetsInitializer,
    KafkaRecordSerializationSchema, KafkaSink, KafkaSource, KafkaTopicPartition,
    KafkaTopicSelector, Semantic)
from api.datastream.formats.json import JsonRowSerializationSchema


def source_builder():
    return KafkaSource.builder().set_bootstrap_servers("broker:9092") \
        .set_value_only_deserializer(SimpleStringSchema())


def test_kafka_source_builder_records_its_settings():
    partitions = {KafkaTopicPartition("t", 0), KafkaTopicPartition("t", 1)}
    stop = KafkaOffsetsInitializer.offsets({KafkaTopicPartition("t", 0): 42})
    source = source_builder().set_partitions(partitions).set_group_id("g") \
        .set_client_id_prefix("app").set_property("fetch.max.bytes", "1024") \
        .set_properties({"isolation.level": "read_committed"}) \
        .set_starting_offsets(KafkaOffsetsInitializer.committed_offsets(
            KafkaOffsetResetStrategy.EARLIEST)) \
        .set_bounded(stop).build()
    assert source._properties == {"bootstrap.servers": "broker:9092", "group.id": "g",
                                  "client.id.prefix": "app", "fetch.max.bytes": "1024",
                                  "isolation.level": "read_committed"}
    assert source._subscription == ("PartitionSetSubscriber", partitions)
    assert source._starting_offsets._kind == "committed_offsets"
    assert source._starting_offsets._settings == {
        "offset_reset_strategy": KafkaOffsetResetStrategy.EARLIEST}
    assert (source._stopping_offsets, source._bounded) == (stop, True)
    assert stop._settings["offsets"] == {KafkaTopicPartition("t", 0): 42}
    assert isinstance(source._deserializer, SimpleStringSchema)
    unbounded = source_builder().set_topics("a", "b") \
        .set_unbounded(KafkaOffsetsInitializer.latest()).build()
    assert unbounded._subscription == ("TopicListSubscriber", ["a", "b"])
    assert (unbounded._starting_offsets._kind, unbounded._bounded) == ("earliest", False)
    assert source_builder().set_topic_pattern("in-.*").build()._subscription == \
        ("TopicPatternSubscriber", "in-.*")


@pytest.mark.parametrize("builder, message", [
    (lambda: KafkaSource.builder().set_topics("t")
     .set_value_only_deserializer(SimpleStringSchema()),
     "Property bootstrap.servers is required but not provided"),
    (lambda: source_builder(), "No subscribe mode is specified"),
    (lambda: KafkaSource.builder().set_bootstrap_servers("b:1").set_topics("t"),
     "Deserialization schema is required but not provided"),
    (lambda: source_builder().set_topics("t")
     .set_starting_offsets(KafkaOffsetsInitializer.committed_offsets()),
     "Property group.id is required when using committed offset"),
])
def test_kafka_source_build_checks(builder, message):
    with pytest.raises(ValueError, match=message):
        builder().build()


def test_kafka_source_takes_one_subscription():
    with pytest.raises(ValueError, match="Cannot use topic pattern for consumption because a "
                                         "TopicListSubscriber is already set"):
        source_builder().set_topics("t").set_topic_pattern("t.*")
    with pytest.raises(TypeError, match="deserialization_schema must be a DeserializationSchema"):
        KafkaSource.builder().set_value_only_deserializer("utf-8")


def test_record_serialization_schema_gives_topic_key_and_value():
    row_type = Types.ROW_NAMED(["key", "word", "n"],
                               [Types.PRIMITIVE_ARRAY(Types.BYTE()), Types.STRING(), Types.INT()])
    schema = KafkaRecordSerializationSchema.builder() \
        .set_topic_selector(lambda row: "topic-" + row.word) \
        .set_key_serialization_schema(RowFieldExtractorSchema(0)) \
        .set_value_serialization_schema(
            JsonRowSerializationSchema.builder().with_type_info(row_type).build()) \
        .build()
    record = schema._record(Row(key=b"k1", word="hi", n=3))
    assert record == ("topic-hi", b"k1", b'{"key":"azE=","word":"hi","n":3}')

    class ByLength(KafkaTopicSelector):
        def apply(self, data):
            return "long" if len(data) > 3 else "short"

    fixed = KafkaRecordSerializationSchema.builder().set_topic("words") \
        .set_value_serialization_schema(SimpleStringSchema()).build()
    assert fixed._record("hello") == ("words", None, b"hello")
    selected = KafkaRecordSerializationSchema.builder().set_topic_selector(ByLength()) \
        .set_value_serialization_schema(SimpleStringSchema()).build()
    assert selected._record("hello")[0] == "long"


@pytest.mark.parametrize("builder, error, message", [
    (lambda: KafkaRecordSerializationSchema.builder().set_topic("t"), ValueError,
     "No value serializer is configured"),
    (lambda: KafkaRecordSerializationSchema.builder()
     .set_value_serialization_schema(SimpleStringSchema()), ValueError,
     "No topic selector is configured"),
    (lambda: KafkaRecordSerializationSchema.builder().set_topic("t").set_topic("u"), ValueError,
     "Topic selector already set"),
    (lambda: KafkaRecordSerializationSchema.builder().set_topic_selector("t"), TypeError,
     "topic_selector must be KafkaTopicSelector or a callable"),
])
def test_record_serialization_schema_build_checks(builder, error, message):
    with pytest.raises(error, match=message):
        builder().build()


def test_kafka_sink_builder():
    serializer = KafkaRecordSerializationSchema.builder().set_topic("out") \
        .set_value_serialization_schema(SimpleStringSchema()).build()
    sink = KafkaSink.builder().set_bootstrap_servers("broker:9092") \
        .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE) \
        .set_transactional_id_prefix("job-1").set_property("linger.ms", "5") \
        .set_record_serializer(serializer).build()
    assert sink._properties == {"bootstrap.servers": "broker:9092", "linger.ms": "5"}
    assert (sink._delivery_guarantee, sink._transactional_id_prefix, sink._record_serializer) \
        == (DeliveryGuarantee.EXACTLY_ONCE, "job-1", serializer)
    assert sink.get_transformer() is None
    defaults = KafkaSink.builder().set_bootstrap_servers("b:1") \
        .set_record_serializer(serializer).build()
    assert (defaults._delivery_guarantee, defaults._transactional_id_prefix) == \
        (DeliveryGuarantee.NONE, "kafka-sink")
    with pytest.raises(ValueError, match="recordSerializer must be set"):
        KafkaSink.builder().set_bootstrap_servers("b:1").build()
    with pytest.raises(ValueError, match="bootstrapServers must be set"):
        KafkaSink.builder().set_record_serializer(serializer).build()


def test_legacy_consumer_and_producer_record_their_settings():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        consumer = FlinkKafkaConsumer("t", SimpleStringSchema(), {"group.id": "g"})
    assert any("Use KafkaSource instead" in str(w.message) for w in caught)
    consumer.set_start_from_timestamp(1000).set_commit_offsets_on_checkpoints(False)
    assert (consumer._topics, consumer._properties, consumer._start_from,
            consumer._commit_offsets_on_checkpoints) == (["t"], {"group.id": "g"},
                                                         ("timestamp", 1000), False)
    assert consumer.get_produced_type() == Types.STRING()
    producer = FlinkKafkaProducer("out", SimpleStringSchema(), {"bootstrap.servers": "b:1"},
                                  semantic=Semantic.EXACTLY_ONCE).set_log_failures_only(True)
    assert (producer._topic, producer._semantic, producer._log_failures_only,
            producer._kafka_producer_pool_size) == ("out", Semantic.EXACTLY_ONCE, True, 5)


def test_topic_partitions_are_values():
    assert KafkaTopicPartition("t", 1) == KafkaTopicPartition("t", 1)
    assert len({KafkaTopicPartition("t", 1), KafkaTopicPartition("t", 1),
                KafkaTopicPartition("t", 2)}) == 2


def test_dynamic_kafka_source_builder():
    source = DynamicKafkaSource.builder().set_stream_ids({"s1", "s2"}) \
        .set_kafka_metadata_service(SingleClusterTopicMetadataService(
            "cluster", {"bootstrap.servers": "b:1"})) \
        .set_value_only_deserializer(SimpleStringSchema()).set_group_id("g") \
        .set_bounded(KafkaOffsetsInitializer.latest()).build()
    settings = source._settings
    assert isinstance(settings["subscriber"], KafkaStreamSetSubscriber)
    assert settings["subscriber"]._stream_ids == {"s1", "s2"}
    assert settings["properties"] == {"group.id": "g"}
    assert settings["stopping_offsets"]._kind == "latest"
    deserializer = settings["deserializer"]
    assert isinstance(deserializer, KafkaRecordDeserializationSchema)
    assert deserializer._deserialize(b"hi") == "hi"
    assert deserializer._produced_type() == Types.STRING()
    with pytest.raises(ValueError, match="Kafka metadata service is required"):
        DynamicKafkaSource.builder().set_stream_pattern("s.*") \
            .set_value_only_deserializer(SimpleStringSchema()).build()
    assert isinstance(DynamicKafkaSource.builder().set_stream_pattern("s.*")
                      ._settings["subscriber"], StreamPatternSubscriber)
