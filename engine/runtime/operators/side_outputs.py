"""Side outputs of an operator instance: what its user function sends to an OutputTag.

A process function, a window function (process, apply, or the one given to a window's
``reduce``/``aggregate``) and a window's late elements all reach ``get_side_output(tag)``
the same way: a result ``(OutputTag, value)`` goes to that tag's side output, converted to
the tag's type, as in PyFlink.
"""
from engine.errors import OperatorError
from engine.runtime.operators.base import is_pickled


def is_side_output(result) -> bool:
    """Whether a user function's result is ``(OutputTag, value)``: a record of that side
    output rather than of the main output."""
    return type(result) is tuple and len(result) == 2 and hasattr(result[0], "tag_id")


class SideOutputs:
    """The side outputs of one operator instance. ``add`` buffers a value for its tag
    (dropped if nobody consumes the tag); ``flush`` passes each tag's buffered elements on
    as one chunk to where the task wired that tag (``Operator.side_outputs``)."""

    def __init__(self, operator_name: str, shape, targets: dict):
        self._operator_name = operator_name
        self._element = shape.element
        self._targets = targets  # tag id -> where its chunks go
        self._buffers = {tag_id: [] for tag_id in targets}

    def add(self, tag, value, timestamp=None) -> None:
        """Buffers ``value`` for side output ``tag`` (an OutputTag), at ``timestamp``."""
        records = self._buffers.get(tag.tag_id)
        if records is None:
            return
        if not is_pickled(tag.type_info):
            try:
                value = tag.type_info.convert(value)
            except Exception as e:
                raise OperatorError.wrap(f"{self._operator_name} (side output {tag.tag_id!r})",
                                         value, e) from None
        records.append(self._element(value, timestamp))

    def flush(self) -> None:
        """Passes on what was buffered since the last flush."""
        for tag_id, records in self._buffers.items():
            if records:
                self._targets[tag_id](records[:])
                records.clear()
