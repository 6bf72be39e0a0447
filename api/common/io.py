"""InputFormat, as in ``pyflink.common.io``: what ``env.create_input`` reads.

PyFlink's input formats wrap Java classes, which cannot run here. An InputFormat that
``create_input`` accepts is one that also reads like a Source (``from_source`` takes it
too); a Java input format fails with a message saying so.
"""

__all__ = ['InputFormat']


class InputFormat:
    """Base of input formats for ``StreamExecutionEnvironment.create_input``."""

    def __init__(self, j_input_format=None):
        if j_input_format is not None:
            raise TypeError("A Java InputFormat needs a JVM, which this engine does not have: "
                            "read the data with env.from_source(...) and a Source instead.")

    def get_java_object(self):
        """JVM-only: there is no Java input format here, so this returns None."""
        return None
