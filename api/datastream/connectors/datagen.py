"""DataGeneratorSource, as in Flink's ``connector.datagen.source``: a source of records
made by a Python function, bounded or unbounded, optionally rate limited."""
from typing import Callable, Optional

from engine.io import sources

from api.common.typeinfo import TypeInformation, Types

from .base import Source


class DataGeneratorSource(Source):
    """Record ``i`` is ``generator_function(i)`` for ``i`` in ``0..count-1`` (every index
    once, spread over the parallel splits); unbounded when ``count`` is None, until the
    job is cancelled. ``records_per_second`` limits the total rate::

        env.from_source(DataGeneratorSource(lambda i: ("k%d" % (i % 10), i), count=None,
                                            records_per_second=1000),
                        WatermarkStrategy.no_watermarks(), "generated")
    """

    def __init__(self, generator_function: Callable[[int], object],
                 count: Optional[int] = None, records_per_second: Optional[float] = None,
                 type_info: TypeInformation = None):
        if not callable(generator_function):
            raise TypeError("generator_function must be callable")
        if count is not None and count < 0:
            raise ValueError(f"count must not be negative, got {count}")
        if records_per_second is not None and records_per_second <= 0:
            raise ValueError(f"records_per_second must be positive, got {records_per_second}")
        self._function = generator_function
        self._count = count
        self._rate = records_per_second
        self._type_info = type_info

    def get_produced_type(self) -> TypeInformation:
        return self._type_info or Types.PICKLED_BYTE_ARRAY()

    def engine_source(self) -> sources.GeneratorSource:
        return sources.GeneratorSource(self._function, self._count, self._rate)
