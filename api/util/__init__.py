"""``pyflink.util``: the exceptions PyFlink raises."""
