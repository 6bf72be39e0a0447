"""The job the Kafka crash test runs in a process of its own and kills with SIGKILL:

    python kafka_crash_job.py BOOTSTRAP IN_TOPIC OUT_TOPIC CHECKPOINTS ENDS [EXECUTOR [BATCH]]

Reads ``key,value`` records from IN_TOPIC (bounded: up to the offsets ENDS) in
micro-batches of 20 (or BATCH) offsets per partition, counts each key's records in keyed
state (slowly, unless BATCH is given: then as fast as it can) and writes ``key,n,value``
per record to OUT_TOPIC with EXACTLY_ONCE.

The sink has one subtask: the test broker (Tansu) completes a transaction's commit only
once no transaction that overlaps it on a partition is open (its ``txn_end``), so with two
subtasks committing to the same partitions side by side, a committed transaction can stay
invisible to ``read_committed`` readers for good (seen in one run in three to six, with and
without the driver's direct batches: every record is in the topic once, behind a last
stable offset that never moves). Kafka makes a transaction visible when it commits."""
import sys

from api.common import Configuration, Types, WatermarkStrategy
from api.common.serialization import SimpleStringSchema
from api.datastream import StreamExecutionEnvironment
from api.datastream.connectors.base import DeliveryGuarantee
from api.datastream.connectors.kafka import (KafkaOffsetsInitializer,
                                             KafkaRecordSerializationSchema, KafkaSink,
                                             KafkaSource)
from tests.system.crash import Count


def main(bootstrap, in_topic, out_topic, checkpoints, end_offsets, executor, batch):
    config = Configuration()
    config.set_string("execution.executor", executor)
    config.set_string("execution.micro-batch.size", str(batch or 20))
    config.set_string("state.checkpoints.dir", checkpoints)
    env = StreamExecutionEnvironment.get_execution_environment(config)
    env.set_parallelism(2)
    source = KafkaSource.builder().set_bootstrap_servers(bootstrap).set_topics(in_topic) \
        .set_group_id("crash").set_value_only_deserializer(SimpleStringSchema()) \
        .set_starting_offsets(KafkaOffsetsInitializer.earliest()) \
        .set_bounded(KafkaOffsetsInitializer.offsets(end_offsets)).build()
    sink = KafkaSink.builder().set_bootstrap_servers(bootstrap) \
        .set_record_serializer(KafkaRecordSerializationSchema.builder().set_topic(out_topic)
                               .set_value_serialization_schema(SimpleStringSchema()).build()) \
        .set_delivery_guarantee(DeliveryGuarantee.EXACTLY_ONCE) \
        .set_transactional_id_prefix("crash").build()
    env.from_source(source, WatermarkStrategy.no_watermarks(), "in").uid("in") \
        .map(lambda v: tuple(v.split(","))).key_by(lambda r: r[0]) \
        .process(Count(0 if batch else 0.001)).uid("count") \
        .map(lambda r: ",".join(map(str, r)), Types.STRING()) \
        .sink_to(sink).uid("out").set_parallelism(1)  # (see below)
    env.execute("kafka-crash-job")


if __name__ == "__main__":
    from api.datastream.connectors.kafka import KafkaTopicPartition
    bootstrap, in_topic, out_topic, checkpoints, ends = sys.argv[1:6]
    main(bootstrap, in_topic, out_topic, checkpoints,
         {KafkaTopicPartition(in_topic, int(p)): int(o)
          for p, o in (pair.split(":") for pair in ends.split(","))},
         sys.argv[6] if len(sys.argv) > 6 else "local",
         int(sys.argv[7]) if len(sys.argv) > 7 else None)
