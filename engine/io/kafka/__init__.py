"""Kafka for the engine: ``source`` reads topic partitions as splits, ``sink`` produces
from the tasks or, for EXACTLY_ONCE, delivers each committed batch in a Kafka
transaction (``transactions``); ``client`` holds the librdkafka clients they share."""
