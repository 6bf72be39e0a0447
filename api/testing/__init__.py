"""Test utilities (beyond PyFlink): run one operator by hand, or script a source's
batches, watermarks and processing time.

    from api.testing import KeyedProcessFunctionHarness, TestStream
"""
from .harness import KeyedProcessFunctionHarness, StreamRecord
from .test_stream import TestStream

__all__ = ["KeyedProcessFunctionHarness", "StreamRecord", "TestStream"]
