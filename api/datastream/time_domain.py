"""TimeDomain, as in ``pyflink.datastream.time_domain``: whether a firing timer is an
event-time or a processing-time timer (``ctx.time_domain()`` in ``on_timer``).

The engine's enum itself, so ``ctx.time_domain() == TimeDomain.EVENT_TIME`` holds.
"""
from engine.runtime.context import TimeDomain

__all__ = ["TimeDomain"]
