"""Windows, window assigners and triggers, as in ``pyflink.datastream.window``.

The implementations are the engine's pure-Python state machines (``engine.time``);
user-written WindowAssigner, MergingWindowAssigner and Trigger subclasses of these
classes work the same way as the built-in ones. The window serializers write Flink's
binary forms; the engine keeps windows as Python objects and does not need them.
"""
import struct
from io import BytesIO

from api.common.serializer import TypeSerializer
from engine.time.triggers import (ContinuousEventTimeTrigger, ContinuousProcessingTimeTrigger,
                                  CountTrigger, EventTimeTrigger, NeverTrigger,
                                  ProcessingTimeTrigger, PurgingTrigger, Trigger,
                                  TriggerResult)
from engine.time.windows import (CountSlidingWindowAssigner, CountTumblingWindowAssigner,
                                 CountWindow, DynamicEventTimeSessionWindows,
                                 DynamicProcessingTimeSessionWindows, EventTimeSessionWindows,
                                 GlobalWindow, GlobalWindows, MergingWindowAssigner,
                                 ProcessingTimeSessionWindows, SessionWindowTimeGapExtractor,
                                 SlidingEventTimeWindows, SlidingProcessingTimeWindows,
                                 TimeWindow, TumblingEventTimeWindows,
                                 TumblingProcessingTimeWindows, Window, WindowAssigner)

__all__ = [
    "TimeWindowSerializer", "CountWindowSerializer", "GlobalWindowSerializer",
    "ContinuousEventTimeTrigger", "ContinuousProcessingTimeTrigger", "CountSlidingWindowAssigner",
    "CountTrigger", "CountTumblingWindowAssigner", "CountWindow",
    "DynamicEventTimeSessionWindows", "DynamicProcessingTimeSessionWindows",
    "EventTimeSessionWindows", "EventTimeTrigger", "GlobalWindow", "GlobalWindows",
    "MergingWindowAssigner", "NeverTrigger", "ProcessingTimeSessionWindows",
    "ProcessingTimeTrigger", "PurgingTrigger", "SessionWindowTimeGapExtractor",
    "SlidingEventTimeWindows", "SlidingProcessingTimeWindows", "TimeWindow", "Trigger",
    "TriggerResult", "TumblingEventTimeWindows", "TumblingProcessingTimeWindows", "Window",
    "WindowAssigner",
]


class TimeWindowSerializer(TypeSerializer[TimeWindow]):
    """A TimeWindow as two big-endian longs: start, end."""

    def serialize(self, element: TimeWindow, stream: BytesIO) -> None:
        stream.write(struct.pack(">qq", element.start, element.end))

    def deserialize(self, stream: BytesIO) -> TimeWindow:
        return TimeWindow(*struct.unpack(">qq", stream.read(16)))


class CountWindowSerializer(TypeSerializer[CountWindow]):
    """A CountWindow as its id, a big-endian long."""

    def serialize(self, element: CountWindow, stream: BytesIO) -> None:
        stream.write(struct.pack(">q", element.id))

    def deserialize(self, stream: BytesIO) -> CountWindow:
        return CountWindow(struct.unpack(">q", stream.read(8))[0])


class GlobalWindowSerializer(TypeSerializer[GlobalWindow]):
    """The GlobalWindow as one zero byte."""

    def serialize(self, element: GlobalWindow, stream: BytesIO) -> None:
        stream.write(b"\x00")

    def deserialize(self, stream: BytesIO) -> GlobalWindow:
        stream.read(1)
        return GlobalWindow.get()
