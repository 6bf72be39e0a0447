"""The connector base classes, as in ``pyflink.datastream.connectors.base``. Connectors the
engine cannot run yet are marked with :class:`UnavailableConnector` (see ``api.unavailable``).
"""
from abc import ABC, abstractmethod
from enum import Enum
from typing import Optional

from api.unavailable import UnavailableConnector

__all__ = ["DeliveryGuarantee", "Sink", "Source", "StreamTransformer", "SupportsPreprocessing"]


class Source:
    """Base class of the unified sources used with ``env.from_source``."""

    def get_java_function(self):
        """JVM-only: there is no Java source here, so this returns None."""
        return None


class Sink:
    """Base class of the unified sinks used with ``ds.sink_to``."""

    def get_java_function(self):
        """JVM-only: there is no Java sink here, so this returns None."""
        return None


class LegacyConnectorFunction(UnavailableConnector):
    """Base of the legacy source and sink functions of external systems (used with
    ``env.add_source`` and ``ds.add_sink``), none of which this engine runs yet."""

    def get_java_function(self):
        """JVM-only: there is no Java function here, so this returns None."""
        return None


class DeliveryGuarantee(Enum):
    """How often a sink may deliver a record: ``EXACTLY_ONCE``, ``AT_LEAST_ONCE`` (duplicates
    possible after a failure) or ``NONE`` (best effort: records may be lost or repeated)."""

    EXACTLY_ONCE = 0
    AT_LEAST_ONCE = 1
    NONE = 2


class StreamTransformer(ABC):
    """A step a sink applies to its input stream before writing it."""

    @abstractmethod
    def apply(self, ds):
        """Returns the stream the sink writes, derived from ``ds``."""


class SupportsPreprocessing(ABC):
    """A sink that may transform its input stream first (see :class:`StreamTransformer`)."""

    @abstractmethod
    def get_transformer(self) -> Optional[StreamTransformer]:
        """The transformer to apply before the sink, or None."""

