"""Metrics of one operator's parallel instance: Flink's built-in ones and those a user
function registers (``runtime_context.get_metrics_group()``).

The metric types and methods are PyFlink's (``counter``, ``gauge``, ``meter``,
``distribution``, ``add_group``). After each micro-batch a subtask reports what
changed (``OperatorMetrics.report``) to the driver, which aggregates the subtasks of
each operator (``engine.driver.job_metrics``).

Records in and out are counted per chunk (``len`` of the list an operator receives or
emits), never per record.
"""
import logging
from typing import Callable, Dict, Optional

from engine.batch import MetricReport

log = logging.getLogger(__name__)

NUM_RECORDS_IN = "numRecordsIn"
NUM_RECORDS_OUT = "numRecordsOut"
NUM_LATE_RECORDS_DROPPED = "numLateRecordsDropped"
NUM_RECORDS_IN_ERRORS = "numRecordsInErrors"
NUM_PENDING_TIMERS = "numPendingTimers"
ACCUMULATED_BUSY_TIME = "accumulatedBusyTime"  # ms a subtask's task spent on its batches


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
    """Counts events (``mark_event``); the driver reports their rate per second over the
    last ``time_span_in_seconds``."""

    def __init__(self, time_span_in_seconds: int = 60):
        super().__init__()
        self.time_span_in_seconds = time_span_in_seconds

    def mark_event(self, value: int = 1) -> None:
        self.inc(value)


class Distribution:
    """Records values (``update``); reported as their count, sum, min and max."""

    def __init__(self):
        self._clear()

    def _clear(self) -> None:
        self.count = 0
        self.sum = 0
        self.min = None
        self.max = None

    def update(self, value: int) -> None:
        self.count += 1
        self.sum += value
        if self.min is None or value < self.min:
            self.min = value
        if self.max is None or value > self.max:
            self.max = value

    def take(self) -> Optional[tuple]:
        """``(count, sum, min, max)`` of the values since the last take (None: none)."""
        if not self.count:
            return None
        taken = (self.count, self.sum, self.min, self.max)
        self._clear()
        return taken


class MetricGroup:
    """A named group of metrics; ``add_group`` nests groups. A metric's identifier is
    its groups' names and its own, joined by dots (``add_group("my", "g")`` gives
    ``my.g.<name>``)."""

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

    def all_metrics(self):
        """``(identifier, metric)`` of this group's metrics and its subgroups'."""
        for name, metric in self.metrics.items():
            yield ".".join(self.scope + (name,)), metric
        for group in self._groups.values():
            yield from group.all_metrics()


class OperatorMetrics:
    """The metrics of one parallel instance of an operator: records in and out (counted
    by the task around the operator's inputs and outputs), the counts of Flink's that
    only some operators keep (``counts``: a window operator's late records dropped, a
    source's records in errors), and the user's metric group."""

    def __init__(self):
        self.records_in = 0
        self.records_out = 0
        self.counts: Dict[str, int] = {}  # name -> count since the last report
        self.group = MetricGroup()
        self._reported: Dict[str, int] = {}  # counter identifier -> count last reported

    def count_in(self, handler: Callable) -> Callable:
        """``handler`` of input chunks, counting their records."""
        def counted(records):
            self.records_in += len(records)
            handler(records)
        return counted

    def count_out(self, emit: Callable) -> Callable:
        """``emit`` of output chunks, counting their records."""
        def counted(records):
            self.records_out += len(records)
            emit(records)
        return counted

    def report(self, node: int, subtask: int, busy_ms: int, is_source: bool = False,
               pending_timers: Optional[int] = None) -> MetricReport:
        """What changed since the last report: counts as increments, gauges as values.
        A source's records in are the records it read (FLIP-33), i.e. its records out;
        ``busy_ms``: the time the operator's task spent on the batch."""
        counters = {NUM_RECORDS_IN: self.records_out if is_source else self.records_in,
                    NUM_RECORDS_OUT: self.records_out, ACCUMULATED_BUSY_TIME: busy_ms}
        self.records_in = self.records_out = 0
        counters.update(self.counts)
        self.counts = dict.fromkeys(self.counts, 0)
        gauges = {} if pending_timers is None else {NUM_PENDING_TIMERS: pending_timers}
        meters, distributions = {}, {}
        for identifier, metric in self.group.all_metrics():
            if isinstance(metric, Counter):
                count = metric.get_count()
                delta = count - self._reported.get(identifier, 0)
                self._reported[identifier] = count
                if isinstance(metric, Meter):
                    meters[identifier] = (delta, metric.time_span_in_seconds)
                else:
                    counters[identifier] = delta
            elif isinstance(metric, Distribution):
                taken = metric.take()
                if taken is not None:
                    distributions[identifier] = taken
            else:
                value = _gauge_value(identifier, metric)
                if value is not None:
                    gauges[identifier] = value
        return MetricReport(node, subtask, counters, meters, gauges, distributions)


def _gauge_value(identifier: str, gauge: Callable):
    """The gauge's value if it is a number or a string; as in Flink, a failing gauge is
    skipped (and logged), not the job's failure."""
    try:
        value = gauge()
    except Exception as e:
        log.warning("Gauge %r failed: %s: %s", identifier, type(e).__name__, e)
        return None
    return value if isinstance(value, (int, float, str)) else None


def merge_distributions(a: Optional[tuple], b: tuple) -> tuple:
    """``(count, sum, min, max)`` of both."""
    if a is None:
        return b
    return a[0] + b[0], a[1] + b[1], min(a[2], b[2]), max(a[3], b[3])

