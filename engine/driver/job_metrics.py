"""The driver's view of a job's metrics, aggregated per operator after each batch.

Each subtask reports its operators' metrics as a ``MetricReport`` (``engine.runtime.metrics``);
the driver sums counters and meters over subtasks and batches, merges distributions,
and keeps each subtask's latest gauge values (numeric ones are summed over subtasks).
Names are Flink's: ``numRecordsIn``, ``numRecordsOut``, ``numRecordsInPerSecond``,
``numRecordsOutPerSecond``, ``numLateRecordsDropped``, ``numRecordsInErrors`` (records a
source skipped as unreadable), ``currentInputWatermark``, and
at job level ``lastCheckpointDuration``, ``lastCheckpointSize``,
``numberOfCompletedCheckpoints``, ``numberOfFailedCheckpoints``; FLIP-33's
``watermarkLag``; a task's ``accumulatedBusyTime`` (ms, summed over subtasks) and
``busyTimeMsPerSecond`` (of its busiest subtask: the ms it worked per second since the
batch before), on each operator it runs; and this engine's
``numPendingTimers``, ``stateSize`` (bytes of an operator's state in the last
checkpoint), ``lastBatchDuration``.
"""
import collections
import os
import threading
import time
from typing import Any, Callable, Dict, List, Optional

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import GaugeMetricFamily

from checkpoint.state_store import _operator_dir_name as operator_dir_name

from engine.batch import MetricReport
from engine.graph import JobPlan
from engine.runtime.metrics import (ACCUMULATED_BUSY_TIME, NUM_LATE_RECORDS_DROPPED,
                                    NUM_RECORDS_IN,
                                    NUM_RECORDS_IN_ERRORS, NUM_RECORDS_OUT, merge_distributions)
from engine.time.watermarks import MAX_WATERMARK, MIN_WATERMARK

RATE_SPAN_SECONDS = 60  # Flink's MeterView default


class Rate:
    """Events per second over the last ``span`` seconds, from a running total sampled
    after each batch (Flink's MeterView)."""

    def __init__(self, span: float, now: float):
        self.span = span
        self.samples = collections.deque([(now, 0)])
        self.total = 0

    def add(self, count: int, now: float) -> None:
        self.total += count
        samples = self.samples
        samples.append((now, self.total))
        while len(samples) > 2 and samples[1][0] <= now - self.span:
            samples.popleft()

    def per_second(self) -> float:
        (first_time, first_total), (last_time, last_total) = self.samples[0], self.samples[-1]
        elapsed = last_time - first_time
        return (last_total - first_total) / elapsed if elapsed > 0 else 0.0


class _OperatorTotals:
    def __init__(self, now: float):
        self.counters: Dict[str, int] = {}
        self.rates: Dict[str, Rate] = {}
        self.gauges: Dict[int, Dict[str, Any]] = {}  # subtask -> its latest values
        self.distributions: Dict[str, tuple] = {}
        self.started = now

    def add(self, report: MetricReport, now: float) -> None:
        counters = self.counters
        for name, delta in report.counters.items():
            counters[name] = counters.get(name, 0) + delta
        for name, (delta, span) in report.meters.items():
            rate = self.rates.get(name)
            if rate is None:
                rate = self.rates[name] = Rate(span, self.started)
            rate.add(delta, now)
        self.gauges.setdefault(report.subtask, {}).update(report.gauges)
        for name, stats in report.distributions.items():
            self.distributions[name] = merge_distributions(self.distributions.get(name), stats)

    def values(self) -> Dict[str, Any]:
        values: Dict[str, Any] = dict(self.counters)
        for name, rate in self.rates.items():
            values[name] = {"count": rate.total, "rate": rate.per_second()}
        for subtask in sorted(self.gauges):  # numbers summed; others: the first subtask's
            for name, value in self.gauges[subtask].items():
                if name not in values:
                    values[name] = value
                elif _is_number(value) and _is_number(values[name]):
                    values[name] += value
        for name, (count, total, low, high) in self.distributions.items():
            values[name] = {"count": count, "sum": total, "min": low, "max": high,
                            "mean": total / count}
        return values


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class JobMetrics:
    """A job's metrics as the driver aggregates them; ``snapshot()`` is the latest
    view, safe to read from other threads (Prometheus, ``JobClient``)."""

    def __init__(self, plan: JobPlan, job_name: str, job_id: str,
                 clock: Callable[[], float] = time.monotonic):
        self.plan = plan
        self.job_name = job_name
        self.job_id = job_id
        self._clock = clock
        now = clock()
        self._operators = {node_id: _OperatorTotals(now) for node_id in plan.nodes}
        self._rates = {(node_id, name): Rate(RATE_SPAN_SECONDS, now)
                       for node_id in plan.nodes for name in (NUM_RECORDS_IN, NUM_RECORDS_OUT)}
        self.names = _operator_names(plan)  # node id -> its name in the snapshots
        self._sources = [stage.nodes[0] for stage in plan.stages if stage.is_source]
        self._sinks = [n for n, node in plan.nodes.items()
                       if not node.chained and not node.out_edges]
        self._job: Dict[str, Any] = {"numberOfCompletedCheckpoints": 0,
                                     "numberOfFailedCheckpoints": 0}
        self._state_sizes: Dict[int, int] = {}
        self._busy: Dict[int, float] = {}  # node id -> busyTimeMsPerSecond, last batch
        self._last_batch = now  # when the last batch's reports came
        self._lock = threading.Lock()
        self._snapshot: Optional[dict] = None

    def batch_completed(self, batch_id: int, results: list, watermark: int, wall_time_ms: int,
                        duration_ms: float) -> dict:
        """Adds a committed batch's reports; returns the new snapshot."""
        now = self._clock()
        counts = collections.Counter()
        elapsed_ms, self._last_batch = (now - self._last_batch) * 1000, now
        self._busy = {}
        for result in results:
            if isinstance(result, MetricReport):
                self._operators[result.node].add(result, now)
                for name in (NUM_RECORDS_IN, NUM_RECORDS_OUT):
                    counts[(result.node, name)] += result.counters[name]
                # Flink's busyTimeMsPerSecond of the operator's busiest subtask
                busy = min(1000.0, 1000 * result.counters[ACCUMULATED_BUSY_TIME]
                           / max(elapsed_ms, 1e-3))
                self._busy[result.node] = max(self._busy.get(result.node, 0.0), busy)
        for key, rate in self._rates.items():
            rate.add(counts[key], now)
        has_watermark = MIN_WATERMARK < watermark < MAX_WATERMARK
        self._job.update(
            lastBatchDuration=round(duration_ms, 3), currentInputWatermark=watermark,
            watermarkLag=wall_time_ms - watermark if has_watermark else None)
        return self._publish(batch_id, wall_time_ms)

    def checkpoint_completed(self, path: str, duration_ms: float) -> None:
        """Records a completed checkpoint: its duration, and its size in total and by
        operator (the bytes of its files)."""
        sizes = sizes_by_operator(path)
        job = self._job
        job["numberOfCompletedCheckpoints"] += 1
        job.update(lastCheckpointDuration=round(duration_ms, 3),
                   lastCheckpointSize=sum(sizes.values()), lastCheckpointExternalPath=path)
        by_dir = {operator_dir_name(node.uid): node_id for node_id, node in self.plan.nodes.items()}
        self._state_sizes = {by_dir[d]: size for d, size in sizes.items() if d in by_dir}

    def checkpoint_failed(self) -> None:
        self._job["numberOfFailedCheckpoints"] += 1

    def _publish(self, batch_id: int, wall_time_ms: int) -> dict:
        operators = {}
        for node_id, totals in self._operators.items():
            values = totals.values()
            for name in (NUM_RECORDS_IN, NUM_RECORDS_OUT):
                values[name + "PerSecond"] = self._rates[(node_id, name)].per_second()
            values["currentInputWatermark"] = self._job["currentInputWatermark"]
            values["busyTimeMsPerSecond"] = round(self._busy.get(node_id, 0.0), 1)
            if node_id in self._state_sizes:
                values["stateSize"] = self._state_sizes[node_id]
            operators[self.names[node_id]] = values
        job = dict(self._job)
        # The job's records in and out: read by its sources, reaching its sinks.
        job["numRecordsInPerSecond"] = sum(
            self._rates[(n, NUM_RECORDS_OUT)].per_second() for n in self._sources)
        job["numRecordsOutPerSecond"] = sum(
            self._rates[(n, NUM_RECORDS_IN)].per_second() for n in self._sinks)
        for name in (NUM_LATE_RECORDS_DROPPED, NUM_RECORDS_IN_ERRORS):
            job[name] = sum(values.get(name, 0) for values in operators.values())
        snapshot = {"job_name": self.job_name, "job_id": self.job_id, "batch": batch_id,
                    "timestamp": wall_time_ms, "job": job, "operators": operators}
        with self._lock:
            self._snapshot = snapshot
        return snapshot

    def snapshot(self) -> Optional[dict]:
        """The metrics after the latest committed batch (None before the first)."""
        with self._lock:
            return self._snapshot


def _operator_names(plan: JobPlan) -> Dict[int, str]:
    """Node id -> its name in the metrics: the operator's name, or ``name (uid)`` where
    several operators share a name."""
    counts = collections.Counter(node.name for node in plan.nodes.values())
    return {node_id: node.name if counts[node.name] == 1 else f"{node.name} ({node.uid})"
            for node_id, node in plan.nodes.items()}


def sizes_by_operator(path: str) -> Dict[str, int]:
    """Bytes of each operator directory's files under a checkpoint's ``state/`` (and of
    its other files under the key "")."""
    sizes: Dict[str, int] = collections.defaultdict(int)
    state_dir = os.path.join(path, "state")
    for directory, _, names in os.walk(path):
        relative = os.path.relpath(directory, state_dir)
        operator = "" if relative.startswith(os.pardir) else relative.split(os.sep)[0]
        for name in names:
            try:
                sizes[operator] += os.path.getsize(os.path.join(directory, name))
            except OSError:  # (removed meanwhile, e.g. by retention)
                pass
    return dict(sizes)


def prometheus_text(snapshot: Optional[dict]) -> str:
    """The snapshot in Prometheus' text format (0.0.4, written by ``prometheus_client``),
    with the names Flink's PrometheusReporter gives: ``flink_jobmanager_job_<metric>`` and
    ``flink_taskmanager_job_task_operator_<metric>``, labelled by job and operator.
    Only numbers are exported; a meter as its rate, a distribution as
    ``_count``/``_sum``/``_min``/``_max``."""
    if snapshot is None:
        return ""
    families: Dict[str, GaugeMetricFamily] = {}
    job_labels = {"job_id": snapshot["job_id"], "job_name": snapshot["job_name"]}
    for name, value in snapshot["job"].items():
        _add_samples(families, "jobmanager_job", name, job_labels, value)
    for operator, values in snapshot["operators"].items():
        labels = dict(job_labels, operator_name=operator)
        for name, value in values.items():
            _add_samples(families, "taskmanager_job_task_operator", name, labels, value)
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Families(list(families.values())))
    return generate_latest(registry).decode("utf-8")


class _Families:
    """A prometheus_client collector of metric families made already."""

    def __init__(self, families: List[GaugeMetricFamily]):
        self.families = families

    def collect(self):
        return self.families


def _add_samples(families: Dict[str, GaugeMetricFamily], scope: str, name: str,
                 labels: Dict[str, str], value) -> None:
    if isinstance(value, dict):
        if "rate" in value:  # a meter
            _add_samples(families, scope, name, labels, value["rate"])
        else:  # a distribution
            for part in ("count", "sum", "min", "max"):
                _add_samples(families, scope, f"{name}_{part}", labels, value[part])
        return
    if not _is_number(value):
        return
    family_name = _metric_name(f"flink_{scope}_{name}")
    family = families.get(family_name)
    if family is None:  # (the help text Flink's reporter gives)
        family = families[family_name] = GaugeMetricFamily(
            family_name, f"{name} (scope: {scope})", labels=list(labels))
    family.add_metric([str(label) for label in labels.values()], value)


def _metric_name(name: str) -> str:
    """Characters Prometheus does not allow in names become ``_`` (as Flink does)."""
    return "".join(c if c.isascii() and (c.isalnum() or c in "_:") else "_" for c in name)
