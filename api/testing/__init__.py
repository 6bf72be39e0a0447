"""Test utilities for user functions (beyond PyFlink): run one operator by hand.

    from api.testing import KeyedProcessFunctionHarness
"""
from .harness import KeyedProcessFunctionHarness, StreamRecord

__all__ = ["KeyedProcessFunctionHarness", "StreamRecord"]
