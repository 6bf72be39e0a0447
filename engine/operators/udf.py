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


class FlatMapOperator(UdfOperator):
    def open(self):
        super().open()
        self._flat_map = self.function.flat_map

    def process(self, record):
        try:
            results = self._flat_map(record)
            results = () if results is None else list(results)
        except Exception as e:
            raise OperatorError.wrap(self.name, record, e) from None
        output = self.output
        for result in results:
            output(result)


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


class ProcessOperator(UdfOperator):
    """Runs a ProcessFunction or KeyedProcessFunction; outputs what process_element yields."""

    def open(self):
        super().open()
        self._process_element = self.function.process_element
        self._ctx = self.task.process_context()

    def process(self, record):
        try:
            results = self._process_element(record, self._ctx)
            results = () if results is None else list(results)
        except Exception as e:
            raise OperatorError.wrap(self.name, record, e) from None
        output = self.output
        for result in results:
            output(result)
