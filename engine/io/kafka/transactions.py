"""EXACTLY_ONCE delivery to Kafka, idempotently.

A task stages its batch's records (``StagingWriter``); once the driver has committed the
batch, ``KafkaTransactionalCommitter.deliver`` produces them in one transaction, every
record with headers naming the job, sink, subtask, batch and its sequence number. Before
producing, it records the end offsets of the target partitions in a marker file beside
the staged file; a repeated delivery (a retried commit task, a recovery after a crash)
reads the topic from there and produces only the records of that batch the topic does
not hold yet. Aborts alone would do on Apache Kafka; the marker makes a replay safe also
on brokers that show aborted records to ``read_committed`` readers.
"""
import json
import os
import time
from typing import Callable, List

from checkpoint.storage import temporary_path
from core.private_paths import open_private

from engine.io.kafka.client import (DEFAULT_MAX_BLOCK_MS, KafkaConfig, KafkaUnavailableError,
                                    cached_client, consume, forget_client, kafka_library,
                                    ProducerRecord, produce, reader_settings)
from engine.io.sinks import StagedCommitter, staged_file

HEADERS = ("sds.job", "sds.sink", "sds.subtask", "sds.batch", "sds.seq")


class KafkaTransactionalCommitter(StagedCommitter):
    """EXACTLY_ONCE: delivers a committed batch's staged records of one subtask in one
    Kafka transaction (id ``<prefix>-<sink>-<subtask>``), idempotently (see the module
    docstring)."""

    def __init__(self, config: KafkaConfig, transactional_id_prefix: str):
        self.config = config
        self.transactional_id_prefix = transactional_id_prefix

    def _marker(self, batch_id: int, subtask: int) -> str:
        return staged_file(self.context.staging_dir, batch_id, subtask)[:-len(".staged")] + \
            ".offsets"

    def _producer(self, subtask: int):
        transactional_id = f"{self.transactional_id_prefix}-{self.context.sink_id}-{subtask}"
        settings = self.config.client_settings(**{"transactional.id": transactional_id})
        # Starting transactions fences an earlier producer of this id and aborts what it
        # left open.
        return cached_client("Producer", settings, lambda producer: self._blocking(
            "starting transactions", producer.init_transactions))

    def _blocking(self, what: str, call: Callable) -> None:
        try:
            call(self.config.timeout_s("max.block.ms", DEFAULT_MAX_BLOCK_MS))
        except kafka_library().KafkaException as e:
            raise self.config.down(what, "max.block.ms", DEFAULT_MAX_BLOCK_MS, e) from None

    def _end_offsets(self, producer, topics, stable: bool = False) -> List[list]:
        """``[topic, partition, end offset]`` of every partition of ``topics``. ``stable``:
        once no transaction is open before the current end, so that a ``read_committed``
        scan up to it sees every record written so far."""
        timeout = self.config.timeout_s("max.block.ms", DEFAULT_MAX_BLOCK_MS)
        kafka = kafka_library()
        reader = cached_client("Consumer", reader_settings(self.config))
        latest = cached_client("Consumer", dict(reader_settings(self.config),
                                                **{"isolation.level": "read_uncommitted"}))
        ends = []
        for topic in sorted(topics):
            try:
                metadata = producer.list_topics(topic, timeout=timeout).topics[topic]
                for partition in sorted(metadata.partitions):
                    tp = kafka.TopicPartition(topic, partition)
                    end = reader.get_watermark_offsets(tp, timeout=timeout, cached=False)[1]
                    if stable:
                        written = latest.get_watermark_offsets(tp, timeout=timeout,
                                                               cached=False)[1]
                        deadline = time.monotonic() + timeout
                        while end < written:  # another subtask's transaction is open
                            if time.monotonic() > deadline:
                                raise kafka.KafkaException(
                                    f"a transaction stays open in {topic}:{partition}")
                            time.sleep(0.05)
                            end = reader.get_watermark_offsets(tp, timeout=timeout,
                                                               cached=False)[1]
                    ends.append([topic, partition, end])
            except kafka.KafkaException as e:
                raise self.config.down(f"the offsets of topic {topic}", "max.block.ms",
                                       DEFAULT_MAX_BLOCK_MS, e) from None
        return ends

    def _delivered_before(self, producer, marker: str, batch_id: int, subtask: int) -> set:
        """The sequence numbers of this batch's records the topics already hold."""
        with open(marker) as f:
            starts = {(t, p): o for t, p, o in json.load(f)}
        wanted = [self.context.job_name, self.context.sink_id, str(subtask), str(batch_id)]
        found = set()
        topics = {t for t, _ in starts}
        for topic, partition, end in self._end_offsets(producer, topics, stable=True):
            for message in consume(self.config, topic, partition,
                                   starts.get((topic, partition), 0), end):
                headers = dict((k, v.decode()) for k, v in message.headers() or ()
                               if k in HEADERS)
                if [headers.get(h) for h in HEADERS[:4]] == wanted:
                    found.add(int(headers[HEADERS[4]]))
        return found

    def deliver(self, batch_id: int, subtask: int, items: list) -> None:
        try:
            self._deliver(batch_id, subtask, items)
        except (kafka_library().KafkaException, KafkaUnavailableError):
            # A subtask's commits run in its host for the whole run, yet a producer of the
            # same transactional id elsewhere (a replaced host, the driver's recovery) may
            # have fenced this one's cached producer. Once more, with a new producer
            # (delivering again is idempotent).
            self._deliver(batch_id, subtask, items)

    def _deliver(self, batch_id: int, subtask: int, items: list) -> None:
        producer = self._producer(subtask)
        marker = self._marker(batch_id, subtask)
        if os.path.exists(marker):  # delivered (maybe in part) before
            done = self._delivered_before(producer, marker, batch_id, subtask)
        else:
            done = set()
            temporary = temporary_path(marker)  # (a crash leaves it to recover())
            with open_private(temporary) as f:
                json.dump(self._end_offsets(producer, {item[0] for item in items}), f)
            os.replace(temporary, marker)
        fixed = [("sds.job", self.context.job_name), ("sds.sink", self.context.sink_id),
                 ("sds.subtask", str(subtask)), ("sds.batch", str(batch_id))]
        if len(done) == len(items):
            return
        errors: list = []

        def delivered(error, message):
            if error is not None:
                errors.append(str(error))
        try:
            producer.begin_transaction()
            for seq, item in enumerate(items):
                if seq not in done:
                    record = ProducerRecord(*item)
                    produce(producer, record.topic, record.key, record.value,
                            [tuple(h) for h in record.headers or []] + fixed +
                            [("sds.seq", str(seq))],
                            delivered, record.timestamp or 0)
            self._blocking(f"committing the transaction of batch {batch_id}",
                           producer.commit_transaction)
            if errors:
                raise KafkaUnavailableError(f"Kafka did not take records of batch "
                                            f"{batch_id}: {errors[:3]}")
        except BaseException:
            forget_client(producer)  # a new producer fences this one and aborts its transaction
            raise

    def commit(self, batch_id: int, subtask: int, committable: str) -> None:
        super().commit(batch_id, subtask, committable)
        marker = self._marker(batch_id, subtask)
        if os.path.exists(marker):
            os.remove(marker)

    def recover(self, committed_batch: int) -> None:
        super().recover(committed_batch)
        directory = self.context.staging_dir
        if os.path.isdir(directory):  # markers of batches delivered fully before a crash
            for name in os.listdir(directory):
                if name.endswith(".offsets") and not os.path.exists(
                        os.path.join(directory, name[:-len(".offsets")] + ".staged")):
                    os.remove(os.path.join(directory, name))
