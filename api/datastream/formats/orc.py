"""ORC formats, as in ``pyflink.datastream.formats.orc``.

Not available yet in this engine: the bulk writers can be created, and a job using one
fails when it is built.
"""
from typing import Optional

from api.common.configuration import Configuration
from api.common.serialization import (BulkWriterFactory, RowDataBulkWriterFactory,
                                      UnavailableBulkFormat)
from api.table.types import RowType, checked_data_type

__all__ = ['OrcBulkWriters']


class _OrcWriterFactory(RowDataBulkWriterFactory, UnavailableBulkFormat):
    """A bulk writer factory of ORC files (not available yet)."""


class OrcBulkWriters(object):
    """Bulk writers of ORC files from rows, for FileSink."""

    @staticmethod
    def for_row_type(row_type: RowType, writer_properties: Optional[Configuration] = None,
                     hadoop_config: Optional[Configuration] = None) -> BulkWriterFactory:
        """Writes rows of ``row_type`` (a ``DataTypes.ROW``), with ORC
        ``writer_properties``."""
        return _OrcWriterFactory(
            'OrcBulkWriters.for_row_type',
            checked_data_type('OrcBulkWriters', 'row_type', row_type, RowType),
            writer_properties=writer_properties or Configuration(),
            hadoop_config=hadoop_config or Configuration())
