"""split / select, as in the older Python streaming guide: ``ds.split(OutputSelector)``
names the outputs of each element, ``SplitStream.select(*names)`` is the stream of the
elements with one of those names. Built on side outputs: the "Split" operator passes
every element on (the SplitStream itself is a DataStream of all elements) and emits it
once to the side output of each ``select`` whose names it was given.
"""
from abc import ABC, abstractmethod
from functools import partial
from typing import Callable, Iterable, List, Tuple, Union

from engine.runtime.operators.udf import ProcessOperator

from . import functions as fn
from .data_stream import DataStream
from .output_tag import OutputTag


class OutputSelector(ABC):
    """Names the outputs an element of a split stream goes to::

        class StreamSelector(OutputSelector):
            def select(self, value):
                return ["even"] if value % 2 == 0 else ["odd"]
    """

    @abstractmethod
    def select(self, value) -> Iterable[str]:
        """The output names of ``value`` (an element may go to several or to none)."""


class _Splitter(fn.ProcessFunction):
    """Emits each element, and once more to each selection that shares a name with it."""

    def __init__(self, select: Callable):
        self.select = select
        self.selections: List[Tuple[OutputTag, frozenset]] = []  # filled by select() calls

    def process_element(self, value, ctx):
        names = self.select(value)
        if isinstance(names, (str, bytes)) or not isinstance(names, Iterable):
            raise TypeError(f"OutputSelector.select() must return an iterable of output "
                            f"names (e.g. ['even']), got {names!r}")
        names = set(names)
        yield value
        for tag, selected in self.selections:
            if not selected.isdisjoint(names):
                yield tag, value


class SplitStream(DataStream):
    """A DataStream whose elements carry the output names an OutputSelector gave them;
    ``select`` picks the elements of some names."""

    def __init__(self, stream: DataStream, splitter: _Splitter):
        super().__init__(stream._env, stream._transformation)
        self._splitter = splitter

    def select(self, *output_names: str) -> DataStream:
        """The elements whose selected names include one of ``output_names``, in their
        order: ``split_stream.select("even")``, ``select("even", "odd")``."""
        if not output_names:
            raise ValueError("select() needs at least one output name")
        for name in output_names:
            if not isinstance(name, str) or not name:
                raise ValueError(f"select(): output names are non-empty strings, got {name!r}")
        selections = self._splitter.selections
        tag = OutputTag(f"split-select-{len(selections)}", self.get_type())
        selections.append((tag, frozenset(output_names)))
        stream = self.get_side_output(tag)
        stream._transformation.name = f"Select: {', '.join(output_names)}"
        return stream


def split(stream: DataStream, output_selector: Union[OutputSelector, Callable]) -> SplitStream:
    """``stream.split(output_selector)``: see the module docstring."""
    if isinstance(output_selector, OutputSelector):
        select = output_selector.select
    elif callable(output_selector):
        select = output_selector
    else:
        raise TypeError(f"split() expects an OutputSelector or a function, got "
                        f"{type(output_selector).__name__}")
    splitter = _Splitter(select)
    split_stream = stream._operator("Split", partial(ProcessOperator, splitter),
                                    stream.get_type())
    return SplitStream(split_stream, splitter)
