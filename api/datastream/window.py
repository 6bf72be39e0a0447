"""Windows, window assigners and triggers, as in ``pyflink.datastream.window``.

The implementations are the engine's pure-Python state machines (``engine.time``);
user-written WindowAssigner, MergingWindowAssigner and Trigger subclasses of these
classes work the same way as the built-in ones.
"""
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
