"""``JavaObjectWrapper``, as in ``pyflink.common.utils``."""

__all__ = ['JavaObjectWrapper']


class JavaObjectWrapper(object):
    """Base of the classes that wrap a Java object in PyFlink (rolling policies, bucket
    assigners, bulk writer factories, ...); they are plain Python objects here."""

    def get_java_object(self):
        """JVM-only: there is no Java object here, so this returns None."""
        return None
