"""Constants, as in ``pyflink.common.constants``."""

MAX_LONG_VALUE = 0x7fffffffffffffff    # Java's Long.MAX_VALUE, 2^63 - 1
MIN_LONG_VALUE = - MAX_LONG_VALUE - 1  # Java's Long.MIN_VALUE, -2^63
DEFAULT_OUTPUT_TAG = ""                # the tag id of the main output
