"""Operators that call one user function per record: map, flat_map, filter, process.

Each loops over a whole chunk and passes on one result chunk; a failing call is
reported with the record it failed on.
"""
from ..errors import OperatorError
from .base import UdfOperator


class MapOperator(UdfOperator):
    def open(self):
        super().open()
        self._map = self.function.map

    def process_chunk(self, records):
        f = self._map
        out = []
        emit = self.cursor.collector(out)
        record = None
        try:
            for record in self.cursor.records(records):
                emit(f(record))
        except Exception as e:
            raise OperatorError.wrap(self.name, record, e) from None
        self.output(out)


class FilterOperator(UdfOperator):
    def open(self):
        super().open()
        self._filter = self.function.filter

    def process_chunk(self, records):
        keep = self._filter
        out = []
        emit = self.cursor.collector(out)
        record = None
        try:
            for record in self.cursor.records(records):
                if keep(record):
                    emit(record)
        except Exception as e:
            raise OperatorError.wrap(self.name, record, e) from None
        self.output(out)


class _ManyOutputsOperator(UdfOperator):
    """Emits every element of the iterable (or generator) the user function returns."""

    def _call(self, record):
        raise NotImplementedError

    def process_chunk(self, records):
        call = self._call
        out = []
        emit = self.cursor.collector(out)
        record = None
        try:
            for record in self.cursor.records(records):
                results = call(record)
                if results is not None:
                    for result in results:
                        emit(result)
        except Exception as e:
            raise OperatorError.wrap(self.name, record, e) from None
        self.output(out)


class FlatMapOperator(_ManyOutputsOperator):
    def open(self):
        super().open()
        self._call = self.function.flat_map


class ProcessOperator(_ManyOutputsOperator):
    """Runs a ProcessFunction or KeyedProcessFunction; outputs what process_element yields."""

    def open(self):
        super().open()
        process_element = self.function.process_element
        ctx = self.task.process_context(self.cursor)
        self._call = lambda record: process_element(record, ctx)
