"""Operators that call one user function per record: map, flat_map, filter, process."""
from ..errors import OperatorError
from .base import UdfOperator


class MapOperator(UdfOperator):
    def open(self):
        super().open()
        self._map = self.function.map

    def process(self, record):
        try:
            result = self._map(record)
        except Exception as e:
            raise OperatorError.wrap(self.name, record, e) from None
        self.output(result)


class _ManyOutputsOperator(UdfOperator):
    """Emits every element of the iterable (or generator) the user function returns."""

    def _call(self, record):
        raise NotImplementedError

    def process(self, record):
        try:
            results = self._call(record)
            results = () if results is None else list(results)
        except Exception as e:
            raise OperatorError.wrap(self.name, record, e) from None
        output = self.output
        for result in results:
            output(result)


class FlatMapOperator(_ManyOutputsOperator):
    def open(self):
        super().open()
        self._call = self.function.flat_map


class FilterOperator(UdfOperator):
    def open(self):
        super().open()
        self._filter = self.function.filter

    def process(self, record):
        try:
            keep = self._filter(record)
        except Exception as e:
            raise OperatorError.wrap(self.name, record, e) from None
        if keep:
            self.output(record)


class ProcessOperator(_ManyOutputsOperator):
    """Runs a ProcessFunction or KeyedProcessFunction; outputs what process_element yields."""

    def open(self):
        super().open()
        process_element = self.function.process_element
        ctx = self.task.process_context()
        self._call = lambda record: process_element(record, ctx)
