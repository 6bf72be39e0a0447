"""TestStream: a source whose micro-batches, watermarks and processing time a test
scripts step by step (like Beam's TestStream). Beyond PyFlink, which has none."""
from typing import Iterable, List, Tuple

from engine.io import sources

from api.common.typeinfo import TypeInformation, Types


class TestStream:
    """A scripted source for tests: each step is one micro-batch.

    ``add_elements`` puts records (with their timestamps) into a batch;
    ``advance_watermark_to`` sets the watermark the job advances to after that batch
    (event-time timers up to it fire); ``advance_processing_time`` moves the job's
    processing-time clock (which starts at 0), firing processing-time timers::

        stream = (TestStream()
                  .add_elements([("a", 1000), ("b", 2000)])
                  .advance_watermark_to(1500)
                  .advance_processing_time(60_000)
                  .add_elements([("a", 1200)]))
        ds = env.from_source(stream, WatermarkStrategy.no_watermarks(), "test")

    The input ends with the watermark at +infinity, as bounded input does in Flink.
    """

    __test__ = False  # not a pytest test class

    def __init__(self, type_info: TypeInformation = None):
        self._steps: List[Tuple[str, object]] = []
        self._type_info = type_info

    def add_elements(self, timestamped_values: Iterable[Tuple[object, int]]) -> "TestStream":
        """A batch of ``(value, timestamp)`` pairs."""
        self._steps.append(("elements", [(value, timestamp)
                                         for value, timestamp in timestamped_values]))
        return self

    def advance_watermark_to(self, timestamp: int) -> "TestStream":
        """The watermark reaches ``timestamp`` (it never goes back)."""
        self._steps.append(("watermark", timestamp))
        return self

    def advance_processing_time(self, duration_ms: int) -> "TestStream":
        """Processing time moves forward by ``duration_ms``."""
        if duration_ms < 0:
            raise ValueError("processing time cannot go back")
        self._steps.append(("processing_time", duration_ms))
        return self

    def get_produced_type(self) -> TypeInformation:
        return self._type_info or Types.PICKLED_BYTE_ARRAY()

    def engine_source(self) -> sources.ScriptedSource:
        return sources.ScriptedSource(self._steps)
