"""The Kafka sink: NONE and AT_LEAST_ONCE produce from the tasks (``DirectWriter``);
EXACTLY_ONCE stages each batch's records and delivers them in a Kafka transaction once
the batch is committed (``engine.io.kafka.transactions``)."""
import logging
from typing import Any, Callable, Dict

from engine.io.kafka.client import (KafkaConfig, KafkaUnavailableError, ProducerRecord,
                                    cached_client, produce)
from engine.io.kafka.transactions import KafkaTransactionalCommitter
from engine.io.sinks import Committer, Sink, SinkWriter, StagingWriter, WriterContext

log = logging.getLogger(__name__)


class DirectWriter(SinkWriter):
    """NONE and AT_LEAST_ONCE: produces from the task as records arrive and waits for
    them at the end of the batch; a failed delivery fails the batch (AT_LEAST_ONCE) or is
    logged (NONE)."""

    def __init__(self, config: KafkaConfig, to_record: Callable, fail_on_error: bool):
        self.config = config
        self.to_record = to_record
        self.fail_on_error = fail_on_error
        self.producer = cached_client("Producer", config.client_settings())
        self.errors: list = []

    def _delivered(self, error, message) -> None:
        if error is not None:
            self.errors.append(f"{message.topic()}: {error}")

    def write(self, values: list) -> None:
        producer, to_record, delivered = self.producer, self.to_record, self._delivered
        for value in values:
            record = ProducerRecord(*to_record(value))
            produce(producer, record.topic, record.key, record.value, record.headers,
                    delivered, record.timestamp or 0)
        producer.poll(0)

    def prepare_commit(self) -> None:
        remaining = self.producer.flush(
            self.config.timeout_s("delivery.timeout.ms", 300_000) + 5)
        if remaining:
            self.errors.append(f"{remaining} records not acknowledged")
        if self.errors:
            message = (f"Kafka at {self.config.properties.get('bootstrap.servers')} did not "
                       f"take {len(self.errors)} records (property delivery.timeout.ms "
                       f"bounds the wait): {self.errors[:3]}")
            if self.fail_on_error:
                raise KafkaUnavailableError(message)
            log.warning(message)
        return None


class _NothingToCommit(Committer):
    def commit(self, batch_id: int, subtask: int, committable: Any) -> None:
        pass


class KafkaSink(Sink):
    """Writes records to Kafka; ``to_record(value)`` gives its :class:`ProducerRecord`;
    ``guarantee`` is "none", "at_least_once" or "exactly_once"."""

    stages_in_job_directory = True

    def __init__(self, properties: Dict[str, str], to_record: Callable, guarantee: str,
                 transactional_id_prefix: str = "kafka-sink"):
        if guarantee not in ("none", "at_least_once", "exactly_once"):
            raise ValueError(f"Unknown delivery guarantee {guarantee!r}")
        self.config = KafkaConfig(properties)
        self.to_record = to_record
        self.guarantee = guarantee
        self.transactional_id_prefix = transactional_id_prefix

    def create_writer(self, context: WriterContext) -> SinkWriter:
        if self.guarantee == "exactly_once":
            return StagingWriter(context, self.to_record)
        return DirectWriter(self.config, self.to_record, self.guarantee == "at_least_once")

    def create_committer(self) -> Committer:
        if self.guarantee == "exactly_once":
            return KafkaTransactionalCommitter(self.config, self.transactional_id_prefix)
        return _NothingToCommit()
