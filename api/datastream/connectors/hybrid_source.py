"""Hybrid source, as in ``pyflink.datastream.connectors.hybrid_source``: reads several
sources one after the other (e.g. files, then Kafka).

Not available yet in this engine: ``HybridSource`` can be built, and a job using it fails
when it is built.
"""
from typing import List

from api.unavailable import SOURCE_ALTERNATIVES, UnavailableConnector

from .base import Source

__all__ = ['HybridSource', 'HybridSourceBuilder']


def _checked_source(source) -> Source:
    if not isinstance(source, Source):
        raise TypeError(f"HybridSource: expected a Source, got {source!r}")
    return source


class HybridSource(Source, UnavailableConnector):
    """Reads its sources in order, each to its end before the next starts."""

    _instead = SOURCE_ALTERNATIVES

    def __init__(self, sources: List[Source]):
        self._sources = sources

    @staticmethod
    def builder(first_source: Source) -> 'HybridSourceBuilder':
        """Starts a HybridSource that reads ``first_source`` first."""
        return HybridSourceBuilder([_checked_source(first_source)])


class HybridSourceBuilder(object):
    """Builds a HybridSource from its sources, in reading order."""

    def __init__(self, sources: List[Source]):
        self._sources = sources

    def add_source(self, source: Source) -> 'HybridSourceBuilder':
        """Reads ``source`` after the sources added before."""
        self._sources.append(_checked_source(source))
        return self

    def build(self) -> 'HybridSource':
        return HybridSource(list(self._sources))
