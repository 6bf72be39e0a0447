"""Serialization helpers, as in ``pyflink.common.serialization``."""
import codecs

__all__ = ["Encoder"]


class Encoder:
    """How FileSink writes a record into a row-format part file (as
    ``pyflink.common.serialization.Encoder``)."""

    def __init__(self, charset_name: str):
        try:
            codecs.lookup(charset_name)
        except (LookupError, TypeError):
            raise ValueError(f"Encoder: unknown charset {charset_name!r}") from None
        self._charset_name = charset_name

    @staticmethod
    def simple_string_encoder(charset_name: str = "UTF-8") -> "Encoder":
        """Writes each record's string form and a ``\\n``: Java's ``toString()`` of the
        record for declared types, ``str()`` for untyped records."""
        return Encoder(charset_name)
