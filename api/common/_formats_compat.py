"""Like ``pyflink.common``, ``api.common`` also offers the row schemas of
``api.datastream.formats`` (for programs written against older PyFlink versions). They are
imported on first use, so that importing ``api.common`` does not import ``api.datastream``."""
import importlib

_FORMAT_MODULES = {
    'JsonRowSerializationSchema': 'json', 'JsonRowDeserializationSchema': 'json',
    'CsvRowSerializationSchema': 'csv', 'CsvRowDeserializationSchema': 'csv',
    'AvroRowSerializationSchema': 'avro', 'AvroRowDeserializationSchema': 'avro',
}


def __getattr__(name: str):
    module = _FORMAT_MODULES.get(name)
    if module is None:
        raise AttributeError(f"module 'api.common' has no attribute {name!r}")
    return getattr(importlib.import_module(f'api.datastream.formats.{module}'), name)
