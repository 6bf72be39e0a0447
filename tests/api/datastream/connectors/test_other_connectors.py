"""The builders and options of the JDBC, RabbitMQ, Pulsar, Kinesis, Elasticsearch, Cassandra
and hybrid connectors record their settings and check them as Flink does."""
import warnings

import pytest

from api.common import Duration, SimpleStringSchema, Types
from api.datastream.connectors import DeliveryGuarantee, NumberSequenceSource
from api.datastream.connectors.cassandra import (CassandraCommitter, CassandraFailureHandler,
                                                 CassandraSink, ClusterBuilder,
                                                 ConsistencyLevel, MapperOptions)
from api.datastream.connectors.elasticsearch import (Elasticsearch6SinkBuilder,
                                                     Elasticsearch7SinkBuilder,
                                                     ElasticsearchEmitter, FlushBackoffType)
from api.datastream.connectors.hybrid_source import HybridSource
from api.datastream.connectors.jdbc import (JdbcConnectionOptions, JdbcExecutionOptions,
                                            JdbcSink)
from api.datastream.connectors.kinesis import (FlinkKinesisConsumer, KinesisFirehoseSink,
                                               KinesisShardAssigner, KinesisStreamsSink,
                                               PartitionKeyGenerator, WatermarkTracker)
from api.datastream.connectors.pulsar import (MessageDelayer, PulsarSink, PulsarSource,
                                              RangeGenerator, StartCursor, StopCursor,
                                              TopicRoutingMode)
from api.datastream.connectors.rabbitmq import RMQConnectionConfig, RMQSink, RMQSource
from api.unavailable import ConnectorUnavailableError
from tests.conftest import make_env

ROW = Types.ROW([Types.INT(), Types.STRING()])


def test_jdbc_options_and_sink():
    connection = JdbcConnectionOptions.JdbcConnectionOptionsBuilder() \
        .with_url("jdbc:postgresql://db/shop").with_driver_name("org.postgresql.Driver") \
        .with_user_name("app").with_password("secret").build()
    assert (connection.get_db_url(), connection.get_driver_name(), connection.get_user_name(),
            connection.get_password()) == ("jdbc:postgresql://db/shop", "org.postgresql.Driver",
                                           "app", "secret")
    defaults = JdbcExecutionOptions.defaults()
    assert (defaults.get_batch_size(), defaults.get_batch_interval_ms(),
            defaults.get_max_retries()) == (5000, 0, 3)
    execution = JdbcExecutionOptions.builder().with_batch_size(100) \
        .with_batch_interval_ms(200).with_max_retries(0).build()
    assert (execution.get_batch_size(), execution.get_batch_interval_ms(),
            execution.get_max_retries()) == (100, 200, 0)
    sink = JdbcSink.sink("insert into t values (?, ?)", ROW, connection)
    assert (sink._sql, sink._type_info, sink._connection_options) == \
        ("insert into t values (?, ?)", ROW, connection)
    assert sink._execution_options.get_batch_size() == 5000
    assert sink.get_java_function() is None
    with pytest.raises(ValueError, match="No dbURL supplied"):
        JdbcConnectionOptions.JdbcConnectionOptionsBuilder().build()
    with pytest.raises(ValueError, match="max_retries must not be negative"):
        JdbcExecutionOptions.builder().with_max_retries(-1).build()
    with pytest.raises(TypeError, match="type_info must be a row type"):
        JdbcSink.sink("insert", Types.INT(), connection)


def test_rabbitmq_connection_config():
    config = RMQConnectionConfig.Builder().set_host("mq").set_port(5672).set_virtual_host("/") \
        .set_user_name("guest").set_password("pw").set_automatic_recovery(True) \
        .set_requested_heartbeat(30).set_prefetch_count(10).build()
    assert (config.get_host(), config.get_port(), config.get_virtual_host(),
            config.get_user_name(), config.get_password(), config.is_automatic_recovery(),
            config.get_requested_heartbeat()) == ("mq", 5672, "/", "guest", "pw", True, 30)
    assert config.get_uri() is None and config.get_connection_timeout() is None
    by_uri = RMQConnectionConfig.Builder().set_uri("amqp://guest:pw@mq:5672/").build()
    assert by_uri.get_uri() == "amqp://guest:pw@mq:5672/" and by_uri.get_host() is None
    with pytest.raises(ValueError, match="port can not be null"):
        RMQConnectionConfig.Builder().set_host("mq").build()
    source = RMQSource(config, "queue", True, SimpleStringSchema())
    sink = RMQSink(config, "queue", SimpleStringSchema())
    assert (source._queue_name, source._use_correlation_id, sink._queue_name) == \
        ("queue", True, "queue")


def test_pulsar_builders():
    source = PulsarSource.builder().set_service_url("pulsar://p:6650") \
        .set_admin_url("http://p:8080").set_subscription_name("sub").set_topics("in") \
        .set_start_cursor(StartCursor.from_publish_time(5)) \
        .set_bounded_stop_cursor(StopCursor.at_event_time(9)) \
        .set_range_generator(RangeGenerator.fixed_key(keys="k")) \
        .set_deserialization_schema(SimpleStringSchema()).set_config("pulsar.x", "1").build()
    settings = source._settings
    assert (settings["topics"], settings["subscription_name"], settings["bounded"],
            settings["config"]) == (["in"], "sub", True, {"pulsar.x": "1"})
    assert settings["start_cursor"] == StartCursor.from_publish_time(5)
    assert settings["stop_cursor"] == StopCursor.at_event_time(9)
    assert settings["range_generator"]._arguments["keys"] == ["k"]
    assert StartCursor.default_start_cursor() == StartCursor.earliest()
    assert StopCursor.default_stop_cursor() == StopCursor.never()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        PulsarSource.builder().set_config_with_dict({"a": "b"})
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    with pytest.raises(ValueError, match="subscription_name is required"):
        PulsarSource.builder().set_service_url("pulsar://p:6650").set_topics("in") \
            .set_deserialization_schema(SimpleStringSchema()).build()
    sink = PulsarSink.builder().set_service_url("pulsar://p:6650").set_topics(["a", "b"]) \
        .set_delivery_guarantee(DeliveryGuarantee.AT_LEAST_ONCE) \
        .set_topic_routing_mode(TopicRoutingMode.MESSAGE_KEY_HASH) \
        .delay_sending_message(MessageDelayer.fixed(Duration.of_seconds(1))) \
        .set_serialization_schema(SimpleStringSchema()).build()
    assert (sink._settings["topics"], sink._settings["topic_routing_mode"]) == \
        (["a", "b"], TopicRoutingMode.MESSAGE_KEY_HASH)
    with pytest.raises(ValueError, match="serialization_schema is required"):
        PulsarSink.builder().set_service_url("pulsar://p:6650").set_topics("a").build()


def test_kinesis_builders():
    consumer = FlinkKinesisConsumer("stream", SimpleStringSchema(), {"aws.region": "eu-west-1"}) \
        .set_shard_assigner(KinesisShardAssigner.uniform_shard_assigner()) \
        .set_watermark_tracker(WatermarkTracker.job_manager_watermark_tracker("agg"))
    assert (consumer._streams, consumer._config_props, consumer._shard_assigner._kind) == \
        (["stream"], {"aws.region": "eu-west-1"}, "uniform")
    sink = KinesisStreamsSink.builder().set_stream_name("out") \
        .set_serialization_schema(SimpleStringSchema()) \
        .set_partition_key_generator(PartitionKeyGenerator.fixed()) \
        .set_max_batch_size(50).set_fail_on_error(True).build()
    assert (sink._settings["stream_name"], sink._settings["max_batch_size"],
            sink._settings["fail_on_error"]) == ("out", 50, True)
    with pytest.raises(ValueError, match="partition_key_generator is required"):
        KinesisStreamsSink.builder().set_stream_name("out") \
            .set_serialization_schema(SimpleStringSchema()).build()
    firehose = KinesisFirehoseSink.builder().set_delivery_stream_name("fh") \
        .set_serialization_schema(SimpleStringSchema()) \
        .set_firehose_client_properties({"aws.region": "us-east-1"}).build()
    assert firehose._settings["delivery_stream_name"] == "fh"


def test_elasticsearch_builders():
    sink = Elasticsearch7SinkBuilder().set_hosts("http://es:9200") \
        .set_emitter(ElasticsearchEmitter.static_index("idx", "id")) \
        .set_bulk_flush_max_actions(10) \
        .set_bulk_flush_backoff_strategy(FlushBackoffType.EXPONENTIAL, 3, 100).build()
    assert (sink._settings["version"], sink._settings["hosts"],
            sink._settings["bulk_flush_backoff"]) == (7, ["http://es:9200"],
                                                      (FlushBackoffType.EXPONENTIAL, 3, 100))
    emitter = sink._settings["emitter"]
    assert (emitter._index, emitter._key_field, emitter._dynamic) == ("idx", "id", False)
    with pytest.raises(ValueError, match="emitter is required"):
        Elasticsearch6SinkBuilder().set_hosts(["http://es:9200"]).build()
    with pytest.raises(ValueError, match="does not support the EXACTLY_ONCE"):
        Elasticsearch6SinkBuilder().set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE)
    with pytest.raises(ValueError, match="Max number of buffered actions"):
        Elasticsearch6SinkBuilder().set_bulk_flush_max_actions(0)


def test_cassandra_builder_records_settings_and_build_fails():
    ds = make_env("local").from_collection([(1, "a")], Types.TUPLE([Types.INT(),
                                                                    Types.STRING()]))
    cluster = ClusterBuilder("java cluster builder")
    builder = CassandraSink.add_sink(ds).set_query("INSERT INTO ks.t (id, v) VALUES (?, ?);") \
        .set_host("cassandra").set_mapper_options(MapperOptions().ttl(60).consistency_level(
            ConsistencyLevel.QUORUM)) \
        .enable_write_ahead_log(CassandraCommitter.default_checkpoint_committer(cluster, "ks")) \
        .set_failure_handler(CassandraFailureHandler.no_op()) \
        .set_max_concurrent_requests(10, Duration.of_seconds(5))
    assert builder._settings["host"] == ("cassandra", 9042)
    assert builder._settings["mapper_options"]._settings == {
        "ttl": 60, "consistency_level": ConsistencyLevel.QUORUM}
    with pytest.raises(ConnectorUnavailableError, match="CassandraSink is not available yet"):
        builder.build()


def test_hybrid_source_builder():
    first, second = NumberSequenceSource(1, 5), NumberSequenceSource(6, 9)
    source = HybridSource.builder(first).add_source(second).build()
    assert source._sources == [first, second]
    with pytest.raises(TypeError, match="expected a Source"):
        HybridSource.builder(first).add_source([1, 2])
