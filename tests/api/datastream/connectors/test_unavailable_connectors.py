"""Using a connector or format this engine cannot run yet fails while the job is built, with
a message naming it and saying what works instead; the connectors that work keep working."""
import pytest

from api.common import SimpleStringSchema, Types, WatermarkStrategy
from api.common.serialization import BulkWriterFactory
from api.datastream.connectors import NumberSequenceSource
from api.datastream.connectors.dynamic_kafka import (DynamicKafkaSource,
                                                     SingleClusterTopicMetadataService)
from api.datastream.connectors.elasticsearch import (Elasticsearch7SinkBuilder,
                                                     ElasticsearchEmitter)
from api.datastream.connectors.file_system import FileSink
from api.datastream.connectors.hybrid_source import HybridSource
from api.datastream.connectors.kinesis import (FlinkKinesisConsumer, KinesisFirehoseSink,
                                               KinesisStreamsSink, PartitionKeyGenerator)
from api.datastream.connectors.pulsar import PulsarSink, PulsarSource
from api.datastream.connectors.rabbitmq import RMQConnectionConfig, RMQSink, RMQSource
from api.datastream.formats.avro import AvroBulkWriters, AvroSchema
from api.datastream.formats.orc import OrcBulkWriters
from api.datastream.formats.parquet import AvroParquetWriters
from api.table.types import DataTypes
from api.unavailable import ConnectorUnavailableError
from tests.conftest import make_env

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the legacy connectors

RMQ = RMQConnectionConfig.Builder().set_uri("amqp://mq").build()
AVRO = AvroSchema.parse_string('{"type": "record", "name": "r", "fields": '
                               '[{"name": "a", "type": "int"}]}')

SOURCES = [
    ("DynamicKafkaSource", lambda: DynamicKafkaSource.builder().set_stream_ids({"s"})
     .set_kafka_metadata_service(SingleClusterTopicMetadataService("c", {}))
     .set_value_only_deserializer(SimpleStringSchema()).build()),
    ("PulsarSource", lambda: PulsarSource.builder().set_service_url("pulsar://p:6650")
     .set_subscription_name("s").set_topics("t")
     .set_deserialization_schema(SimpleStringSchema()).build()),
    ("HybridSource", lambda: HybridSource.builder(NumberSequenceSource(1, 2)).build()),
    ("RMQSource", lambda: RMQSource(RMQ, "q", False, SimpleStringSchema())),
    ("FlinkKinesisConsumer", lambda: FlinkKinesisConsumer("s", SimpleStringSchema(), {})),
]

SINKS = [
    ("PulsarSink", lambda: PulsarSink.builder().set_service_url("pulsar://p:6650")
     .set_topics("t").set_serialization_schema(SimpleStringSchema()).build()),
    ("KinesisStreamsSink", lambda: KinesisStreamsSink.builder().set_stream_name("s")
     .set_serialization_schema(SimpleStringSchema())
     .set_partition_key_generator(PartitionKeyGenerator.random()).build()),
    ("KinesisFirehoseSink", lambda: KinesisFirehoseSink.builder().set_delivery_stream_name("s")
     .set_serialization_schema(SimpleStringSchema()).build()),
    ("ElasticsearchSink", lambda: Elasticsearch7SinkBuilder().set_hosts("http://es:9200")
     .set_emitter(ElasticsearchEmitter.dynamic_index("index")).build()),
    ("RMQSink", lambda: RMQSink(RMQ, "q", SimpleStringSchema())),
]

BULK_WRITERS = [
    ("AvroBulkWriters.for_generic_record", lambda: AvroBulkWriters.for_generic_record(AVRO)),
    ("AvroParquetWriters.for_generic_record",
     lambda: AvroParquetWriters.for_generic_record(AVRO)),
    ("OrcBulkWriters.for_row_type", lambda: OrcBulkWriters.for_row_type(
        DataTypes.ROW([DataTypes.FIELD("a", DataTypes.INT())]))),
]


@pytest.mark.parametrize("name, make", SOURCES, ids=[name for name, _ in SOURCES])
def test_unavailable_sources_fail_at_build_time(name, make):
    env = make_env("local")
    with pytest.raises(ConnectorUnavailableError,
                       match=f"^{name} is not available yet in this engine.*Use instead: "
                             f"env.from_collection"):
        env.from_source(make(), WatermarkStrategy.no_watermarks(), "source")


@pytest.mark.parametrize("name, make", SINKS, ids=[name for name, _ in SINKS])
@pytest.mark.parametrize("method", ["sink_to", "add_sink"])
def test_unavailable_sinks_fail_at_build_time(name, make, method):
    ds = make_env("local").from_collection(["a"], Types.STRING())
    with pytest.raises(ConnectorUnavailableError,
                       match=f"^{name} is not available yet in this engine.*Use instead: "
                             f"ds.sink_to\\(FileSink.for_row_format"):
        getattr(ds, method)(make())


@pytest.mark.parametrize("name, make", BULK_WRITERS, ids=[name for name, _ in BULK_WRITERS])
def test_bulk_formats_fail_at_build_time(name, make, tmp_path):
    factory = make()
    assert isinstance(factory, BulkWriterFactory)
    ds = make_env("local").from_collection(["a"], Types.STRING())
    with pytest.raises(ConnectorUnavailableError,
                       match=f"^The bulk format {name} is not available yet"):
        ds.sink_to(FileSink.for_bulk_format(str(tmp_path), factory).build())


def test_available_sources_and_sinks_still_run(tmp_path):
    env = make_env("local")
    numbers = env.from_source(NumberSequenceSource(1, 3), WatermarkStrategy.no_watermarks(),
                              "numbers")
    assert sorted(numbers.execute_and_collect(limit=10)) == [1, 2, 3]
