"""Iterations: ``DataStream.iterate()`` and ``IterativeStream.close_with(feedback)``.

A micro-batch engine feeds records back *into the next batch*: what the feedback stream
carries in batch b reaches the iteration head (merged with the input) in batch b+1,
through the driver (an "Iteration Sink" whose committed records an "Iteration Source"
reads in the next batch). A bounded job ends when its sources are finished and a batch
fed nothing back, so ``max_wait_time_ms`` (how long Flink's head waits for feedback) is
not needed to end it and is only recorded. The records of each round are those of
Flink's iteration, whatever the parallelism; their order within a batch is not. Feedback
records lose their timestamps, as they cross the driver.

Checkpoints are refused: the records in flight on the feedback edge are not part of a
checkpoint (nor of Flink's: it documents iterations as without exactly-once), so a job
with an iteration cannot have a checkpoint directory or a restart strategy that restarts
it; it fails at build time saying so.
"""
from functools import partial
from typing import Any, Iterable, List, Optional, Tuple

from api.common.watermark_strategy import WatermarkStrategy
from engine.graph import Transformation
from engine.runtime.operators.io import SinkOperator
from engine.driver.restart import FailureRate, FixedDelay
from engine.io.sinks import Committer, ListWriter, Sink, SinkWriter, WriterContext
from engine.io.sources import Source, SplitRange

from .data_stream import DataStream, _is_pickled

_SPLIT = "feedback"


class _FeedbackChannel:
    """Driver: the records the last committed batch fed back, for the next batch."""

    def __init__(self):
        self.records: List[Any] = []


class _FeedbackReader(Source):
    """Task side of the iteration source: a range's records travel in its descriptor."""

    parallelism = 1

    def read(self, descriptor) -> Tuple[Iterable, Any]:
        records, end = descriptor
        return records, end


class _FeedbackSource(_FeedbackReader):
    """Driver side: one split whose next range is what the last batch fed back; finished
    while nothing waits (the job then ends with a batch without input: ``feeds_back``)."""

    feeds_back = True

    def __init__(self, channel: _FeedbackChannel):
        self.channel = channel

    def splits(self, parallelism: int) -> List[str]:
        return [_SPLIT]

    def plan(self, split, position, max_records, now_ms) -> Optional[SplitRange]:
        channel = self.channel
        count = min(len(channel.records), int(min(max_records, 2 ** 62)))
        if count == 0:
            return None
        records, channel.records = channel.records[:count], channel.records[count:]
        end = position + count
        return SplitRange(split, (records, end), end)

    def is_finished(self, split, position) -> bool:
        return not self.channel.records

    def for_tasks(self) -> Source:
        return _FeedbackReader()


class _SourceOf:
    """What ``env.from_source`` takes: the engine source and the stream's type."""

    def __init__(self, source: Source, type_info):
        self._source, self._type_info = source, type_info

    def engine_source(self) -> Source:
        return self._source

    def get_produced_type(self):
        return self._type_info


class _FeedbackCommitter(Committer):
    def __init__(self, channel: _FeedbackChannel):
        self.channel = channel

    def commit(self, batch_id: int, subtask: int, committable: list) -> None:
        self.channel.records.extend(committable)


class _FeedbackSink(Sink):
    """The feedback edge's end: each batch's records go to the channel when it commits."""

    def __init__(self, channel: _FeedbackChannel, to_item):
        self.channel = channel
        self.to_item = to_item

    def create_writer(self, context: WriterContext) -> SinkWriter:
        return ListWriter(self.to_item)

    def create_committer(self) -> Committer:
        return _FeedbackCommitter(self.channel)

    def __getstate__(self):  # the tasks need no channel
        return {"to_item": self.to_item, "channel": None}


class IterativeStream(DataStream):
    """The head of an iteration (``stream.iterate()``): the input merged with what
    ``close_with`` feeds back."""

    def __init__(self, stream: DataStream, max_wait_time_ms: int = 0):
        if not isinstance(max_wait_time_ms, int) or max_wait_time_ms < 0:
            raise ValueError(f"max_wait_time_ms must be an int >= 0, got {max_wait_time_ms!r}")
        env = stream._env
        self._channel = _FeedbackChannel()
        self.max_wait_time_ms = max_wait_time_ms
        self._closed = False
        type_info = stream.get_type()
        feedback = env.from_source(_SourceOf(_FeedbackSource(self._channel), type_info),
                                   WatermarkStrategy.no_watermarks(), "Iteration Source",
                                   type_info)
        super().__init__(env, stream.union(feedback)._transformation)
        env._iterations.append(self)

    def close_with(self, feedback_stream: DataStream) -> DataStream:
        """Feeds ``feedback_stream`` back to this head (into the next micro-batch);
        returns it."""
        if self._closed:
            raise ValueError("this iteration is already closed")
        if feedback_stream._env is not self._env:
            raise ValueError("the feedback stream belongs to another environment")
        type_info = self.get_type()
        sink = _FeedbackSink(self._channel, None if _is_pickled(type_info)
                             else type_info.convert)
        self._env._add_transformation(Transformation(
            "sink", "Iteration Sink", [feedback_stream._transformation],
            partial(SinkOperator, sink), pact="Data Sink", sink=sink))
        self._closed = True
        return feedback_stream


def check_iterations(iterations: list, checkpoint_dir: Optional[str], restart_policy) -> None:
    """Build-time checks of a job's iterations (see the module docstring)."""
    if any(not iteration._closed for iteration in iterations):
        raise ValueError("An iteration was never closed: call close_with(feedback_stream) on "
                         "the IterativeStream that iterate() returned before executing.")
    if not iterations:
        return
    if checkpoint_dir is not None:
        raise ValueError(
            "A job with an iteration cannot be checkpointed here: the records in flight on "
            "its feedback edge are not part of a checkpoint, so a resumed job would lose "
            "them. Run it without state.checkpoints.dir (and without "
            "enable_checkpointing), or loop inside one function (e.g. a flat_map).")
    if isinstance(restart_policy, (FixedDelay, FailureRate)):
        raise ValueError(
            "A job with an iteration cannot be restarted from its last batch (the feedback "
            "in flight would be lost): use RestartStrategies.no_restart() or "
            "fall_back_restart() (Spark's task retries).")
