"""Metrics a user function registers (``runtime_context.get_metrics_group()``).

The metric types and methods are PyFlink's (``counter``, ``gauge``, ``meter``,
``distribution``, ``add_group``). Values live in the parallel instance that registered
them, for the function's own use; there is no metric reporter, so they are not
published anywhere.
"""
from typing import Callable, Dict, List


class Counter:
    """A count that goes up and down."""

    def __init__(self):
        self._count = 0

    def inc(self, n: int = 1) -> None:
        self._count += n

    def dec(self, n: int = 1) -> None:
        self._count -= n

    def get_count(self) -> int:
        return self._count


class Meter(Counter):
    """Counts events (``mark_event``); the rate over ``time_span_in_seconds`` is not kept."""

    def __init__(self, time_span_in_seconds: int = 60):
        super().__init__()
        self.time_span_in_seconds = time_span_in_seconds

    def mark_event(self, value: int = 1) -> None:
        self.inc(value)


class Distribution:
    """Records values (``update``)."""

    def __init__(self):
        self.values: List[int] = []

    def update(self, value: int) -> None:
        self.values.append(value)


class MetricGroup:
    """A named group of metrics; ``add_group`` nests groups."""

    def __init__(self, scope: tuple = ()):
        self.scope = scope
        self.metrics: Dict[str, object] = {}
        self._groups: Dict[tuple, "MetricGroup"] = {}

    def add_group(self, name: str, extra: str = None) -> "MetricGroup":
        key = (name,) if extra is None else (name, extra)
        if key not in self._groups:
            self._groups[key] = MetricGroup(self.scope + key)
        return self._groups[key]

    def counter(self, name: str) -> Counter:
        return self.metrics.setdefault(name, Counter())

    def gauge(self, name: str, obj: Callable[[], int]) -> None:
        self.metrics[name] = obj

    def meter(self, name: str, time_span_in_seconds: int = 60) -> Meter:
        return self.metrics.setdefault(name, Meter(time_span_in_seconds))

    def distribution(self, name: str) -> Distribution:
        return self.metrics.setdefault(name, Distribution())
