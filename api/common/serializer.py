"""TypeSerializer, as in ``pyflink.common.serializer``: turns values of one type into bytes
on a stream and back (e.g. the window serializers of ``api.datastream.window``)."""
from abc import ABC, abstractmethod
from io import BytesIO
from typing import Generic, TypeVar

T = TypeVar('T')

__all__ = ['TypeSerializer']


class TypeSerializer(ABC, Generic[T]):
    """Writes values of type T to a binary stream and reads them back."""

    @abstractmethod
    def serialize(self, element: T, stream: BytesIO) -> None:
        """Writes ``element`` to ``stream``."""

    @abstractmethod
    def deserialize(self, stream: BytesIO) -> T:
        """Reads one element from ``stream``."""

    def __eq__(self, other):
        return type(other) is type(self) and vars(other) == vars(self)

    def __hash__(self):
        return hash(type(self).__name__)

    def __repr__(self):
        return "%s()" % type(self).__name__
