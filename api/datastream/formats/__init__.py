"""Data formats for sources, sinks and their schemas, as in ``pyflink.datastream.formats``."""
