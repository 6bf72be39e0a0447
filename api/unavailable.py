"""The one place that refuses connectors and formats this engine cannot run yet.

Every connector and format class of PyFlink exists in ``api`` and its builders work: they
record their settings and validate them as PyFlink does. A class whose external system
(Kafka, Pulsar, JDBC, ...) or file format (Avro, Parquet, ORC, ...) the engine does not
handle yet is an :class:`UnavailableConnector`; using it in a job (``from_source``,
``add_source``, ``sink_to``, ``add_sink``) fails while the job is being built, through
:func:`check_available`, with a message naming it and saying what works instead.
"""

__all__ = ["ConnectorUnavailableError", "UnavailableConnector", "check_available",
           "SINK_ALTERNATIVES", "SOURCE_ALTERNATIVES"]

SOURCE_ALTERNATIVES = ("env.from_collection(...), or env.from_source(...) with a "
                       "NumberSequenceSource, DataGeneratorSource or FileSource")
SINK_ALTERNATIVES = ("ds.sink_to(FileSink.for_row_format(...)), ds.print(), or "
                     "ds.add_sink(...) with a Python SinkFunction")


class ConnectorUnavailableError(NotImplementedError):
    """A job uses a connector or format whose system this engine does not run yet."""


class UnavailableConnector:
    """Marks a connector or format this engine cannot run yet: building and configuring it
    works, using it in a job fails at build time (see :func:`check_available`).

    Subclasses set ``_instead`` (what works instead) and may override ``_connector_name``.
    """

    _instead: str = ""

    def _connector_name(self) -> str:
        return type(self).__name__


def check_available(connector) -> None:
    """Raises :class:`ConnectorUnavailableError` if ``connector`` cannot run in this engine."""
    if isinstance(connector, UnavailableConnector):
        instead = f" Use instead: {connector._instead}." if connector._instead else ""
        raise ConnectorUnavailableError(
            f"{connector._connector_name()} is not available yet in this engine: it can be "
            f"built and configured, but a job cannot use it.{instead}")
