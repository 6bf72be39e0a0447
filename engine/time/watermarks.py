"""Watermark generation and combination, once per micro-batch.

Flink emits watermarks periodically from each source split (or each parallel
instance of a mid-stream ``assign_timestamps_and_watermarks``) and combines them
with a minimum. Here a tracker plays both parts at the end of each batch:

    for each input:  tracker.observe(input_id, max_ts_of_its_batch_or_None, finished)
    watermark = tracker.advance(now)  # now: the batch's processing time

``WatermarkStep`` is that move for one batch, fixed before the batch runs except for
its records' timestamps: the driver applies it to its tracker after the batch, and a
stage that has the batch's timestamps of every input (they travel with the records)
applies it to a copy during the batch, so both reach the same watermark.

A timer or window with ``time <= watermark`` is due; an element with
``timestamp <= watermark`` is late. Both judgements belong to the caller.

Everything here is pure Python: no Spark, no I/O.
"""
import copy
from dataclasses import dataclass
from typing import Any, Dict, FrozenSet, Hashable, Mapping, Optional

MIN_WATERMARK = -2 ** 63     # Long.MIN_VALUE: the watermark before any
MAX_WATERMARK = 2 ** 63 - 1  # Long.MAX_VALUE: end of input, every timer fires

KINDS = ("bounded", "monotonous", "no_watermarks")


@dataclass(frozen=True)
class WatermarkSpec:
    """How one input generates watermarks; a plain-data view of a WatermarkStrategy.

    ``kind``: "bounded" (uses ``max_out_of_orderness_ms``), "monotonous" (bounded
    with 0) or "no_watermarks". ``idle_timeout_ms``: ``with_idleness``, or None.
    """
    kind: str = "no_watermarks"
    max_out_of_orderness_ms: int = 0
    idle_timeout_ms: Optional[int] = None

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"unknown watermark kind {self.kind!r}; expected one of {KINDS}")
        if self.max_out_of_orderness_ms < 0:
            raise ValueError("max out-of-orderness must not be negative")
        if self.kind == "monotonous" and self.max_out_of_orderness_ms != 0:
            raise ValueError("monotonous timestamps have no out-of-orderness")
        if self.idle_timeout_ms is not None and self.idle_timeout_ms <= 0:
            # As Flink's WatermarksWithIdleness.
            raise ValueError("idleTimeout must be greater than zero")

    def build(self) -> "WatermarkGenerator":
        """A fresh generator for one input."""
        if self.kind == "no_watermarks":
            return NoWatermarks()
        return BoundedOutOfOrderness(self.max_out_of_orderness_ms)


class WatermarkGenerator:
    """One input's watermark from the timestamps it has seen (no idleness here)."""

    def on_event(self, timestamp: int) -> None:
        """Sees one record's timestamp."""

    def observe(self, max_timestamp: Optional[int]) -> None:
        """Sees a batch's maximum timestamp (None: no records). The generators
        here depend only on the maximum, so this equals ``on_event(max)``."""
        if max_timestamp is not None:
            self.on_event(max_timestamp)

    def current(self) -> int:
        """The watermark a periodic emit would give now; never decreases."""
        return MIN_WATERMARK

    def snapshot(self) -> Optional[int]:
        return None

    def restore(self, state: Optional[int]) -> None:
        pass


class NoWatermarks(WatermarkGenerator):
    """Flink's NoWatermarksGenerator: emits nothing, so this input stays at
    MIN_WATERMARK (and holds a combined watermark there) until it is idle or
    finished. End of input still brings MAX_WATERMARK, through the tracker."""


class BoundedOutOfOrderness(WatermarkGenerator):
    """Flink's BoundedOutOfOrdernessWatermarks (and, with 0, AscendingTimestampsWatermarks).

    Watermark = max timestamp - out_of_orderness - 1. The -1: a watermark t
    promises that no more elements with timestamp <= t come, and an element
    exactly ``out_of_orderness`` behind the maximum is still allowed. Before any
    record Flink starts the maximum at MIN + out_of_orderness + 1, so the first
    watermark is exactly MIN_WATERMARK; records with a smaller timestamp (e.g.
    MIN, Flink's "no timestamp") leave it there.
    """

    def __init__(self, out_of_orderness_ms: int):
        self.out_of_orderness_ms = out_of_orderness_ms
        self._max_timestamp = MIN_WATERMARK + out_of_orderness_ms + 1

    def on_event(self, timestamp: int) -> None:
        if timestamp > self._max_timestamp:
            self._max_timestamp = timestamp

    def current(self) -> int:
        return self._max_timestamp - self.out_of_orderness_ms - 1

    def snapshot(self) -> Optional[int]:
        return self._max_timestamp

    def restore(self, state: Optional[int]) -> None:
        if state is not None:
            self.on_event(state)


class _Input:
    """Tracker-side state of one input: its generator, idleness and end."""

    __slots__ = ("spec", "generator", "finished", "active_since_check",
                 "last_activity_ms", "idle")

    def __init__(self, spec: WatermarkSpec):
        self.spec = spec
        self.generator = spec.build()
        self.finished = False
        # Registration counts as activity: a new input is idle only after a
        # full timeout without records, as Flink's idleness timer starts fresh.
        self.active_since_check = True
        self.last_activity_ms: Optional[int] = None
        self.idle = False

    def check_idle(self, now_ms: int) -> bool:
        # Flink (WatermarksWithIdleness) checks idleness only at a periodic
        # emit, and an emit that saw records since the previous one resets the
        # timer. Here advance() is the periodic emit. Records reach us only as
        # batch statistics, so the time of the check that first sees them is
        # when the input was last active; it is idle once strictly more than
        # idle_timeout has passed since (Flink's ">"). Flink starts its
        # countdown at the following quiet check instead, which only delays
        # idleness by one emit interval - one whole batch here, so we don't.
        timeout = self.spec.idle_timeout_ms
        if self.active_since_check:
            self.active_since_check = False
            self.last_activity_ms = now_ms
            self.idle = False
        elif timeout is not None:
            self.idle = now_ms - self.last_activity_ms > timeout
        return self.idle


class WatermarkTracker:
    """The combined watermark over many inputs (source splits or partitions).

    Like Flink's CombinedWatermarkStatus: the minimum over the inputs that are
    neither idle nor finished, never going back. If every remaining input is
    idle, the combined output is idle and the watermark stays where it was.
    Once every input has finished it is MAX_WATERMARK (end of input), unless
    ``dynamic_inputs``: then more inputs may still come (splits discovered
    while running), the watermark stays, and only end_of_input() gives MAX, as
    a Flink source reader ends only when told no more splits come. With no
    inputs yet it stays put (MIN_WATERMARK at first). Inputs may be added until
    end of input; a new input starts at MIN_WATERMARK and so holds the
    watermark where it is (never lowers it) until it catches up, goes idle or
    finishes. ``watermark``: a floor to start from, e.g. a committed one.
    """

    def __init__(self, watermark: int = MIN_WATERMARK, *, dynamic_inputs: bool = False):
        self._inputs: Dict[Hashable, _Input] = {}
        self._watermark = watermark
        self._idle = False
        self._dynamic = dynamic_inputs

    # -- inputs ---------------------------------------------------------------

    def add_input(self, input_id: Hashable, spec: WatermarkSpec) -> None:
        """Registers an input (a split, or a partition of a mid-stream assigner)."""
        if self._watermark == MAX_WATERMARK:
            raise ValueError(f"watermark input {input_id!r} added after end of input")
        if input_id in self._inputs:
            raise ValueError(f"watermark input {input_id!r} is already registered")
        self._inputs[input_id] = _Input(spec)

    def has_input(self, input_id: Hashable) -> bool:
        return input_id in self._inputs

    def observe(self, input_id: Hashable, max_timestamp: Optional[int],
                finished: bool = False) -> None:
        """Feeds one input's statistics for a batch.

        ``max_timestamp``: the largest event timestamp of its records in the
        batch, or None if it had none (records without a timestamp count as
        MIN_WATERMARK: activity that does not move the watermark).
        ``finished``: the input has ended; it no longer holds the watermark back.
        """
        state = self._inputs.get(input_id)
        if state is None:
            raise KeyError(f"unknown watermark input {input_id!r}; add_input it first")
        if state.finished:
            if max_timestamp is not None:
                raise ValueError(f"watermark input {input_id!r} has records after it finished")
            return
        if max_timestamp is not None:
            state.generator.observe(max_timestamp)
            state.active_since_check = True
        if finished:
            # Flink releases a finished split's output from the multiplexer.
            state.finished = True

    # -- the combined watermark -------------------------------------------------

    def advance(self, now_ms: int) -> int:
        """The periodic emit at processing time ``now_ms``: applies idleness,
        recomputes and returns the combined watermark."""
        remaining = [s for s in self._inputs.values() if not s.finished]
        if not remaining:
            if self._inputs and not self._dynamic:
                self._watermark = MAX_WATERMARK
            # Waiting for new inputs, nothing holds the watermark: idle.
            self._idle = self._dynamic and self._watermark != MAX_WATERMARK
            return self._watermark
        active = [s for s in remaining if not s.check_idle(now_ms)]
        self._idle = not active
        if active:
            low = min(s.generator.current() for s in active)
            if low > self._watermark:
                self._watermark = low
        return self._watermark

    def end_of_input(self) -> int:
        """Every input is finished (including when there were none): MAX_WATERMARK."""
        for state in self._inputs.values():
            state.finished = True
        self._watermark = MAX_WATERMARK
        self._idle = False
        return self._watermark

    def watermark(self) -> int:
        """The combined watermark as of the last advance()."""
        return self._watermark

    def is_idle(self) -> bool:
        """Every unfinished input was idle at the last advance()."""
        return self._idle

    def is_finished(self) -> bool:
        """The last advance() (or end_of_input()) reached end of input: MAX_WATERMARK."""
        return self._watermark == MAX_WATERMARK

    def input_watermark(self, input_id: Hashable) -> int:
        """One input's own watermark (its generator's), for metrics and tests."""
        return self._inputs[input_id].generator.current()

    def is_input_idle(self, input_id: Hashable) -> bool:
        """Whether the input was idle at the last advance()."""
        return self._inputs[input_id].idle

    # -- checkpoints ------------------------------------------------------------

    def snapshot(self) -> Dict[str, Any]:
        """Plain data for the metadata log: the combined watermark and, per
        input, its spec, generator state and end. Idleness timers are not kept:
        after a restore they start afresh, as in Flink."""
        return {
            "watermark": self._watermark,
            "dynamic_inputs": self._dynamic,
            "inputs": [
                (input_id, {"kind": s.spec.kind,
                            "max_out_of_orderness_ms": s.spec.max_out_of_orderness_ms,
                            "idle_timeout_ms": s.spec.idle_timeout_ms,
                            "generator": s.generator.snapshot(),
                            "finished": s.finished})
                for input_id, s in self._inputs.items()
            ],
        }

    @classmethod
    def restore(cls, snapshot: Dict[str, Any]) -> "WatermarkTracker":
        """A tracker continuing from ``snapshot()``; its watermark never goes below it."""
        tracker = cls(MIN_WATERMARK, dynamic_inputs=snapshot["dynamic_inputs"])
        for input_id, entry in snapshot["inputs"]:
            if isinstance(input_id, list):  # a tuple id round-tripped through JSON
                input_id = tuple(input_id)
            tracker.add_input(input_id, WatermarkSpec(
                entry["kind"], entry["max_out_of_orderness_ms"], entry["idle_timeout_ms"]))
            state = tracker._inputs[input_id]
            state.generator.restore(entry["generator"])
            state.finished = entry["finished"]
        tracker._watermark = snapshot["watermark"]
        return tracker


@dataclass(frozen=True)
class WatermarkStep:
    """One batch's move of a ``WatermarkTracker``: every input observes its largest
    timestamp of the batch (None without records), the inputs in ``finished`` end, and
    the tracker advances at the batch's processing time ``now_ms``."""
    tracker: WatermarkTracker  # as the batch starts; never changed here
    finished: FrozenSet[Hashable]
    now_ms: int

    def advanced(self, max_timestamps: Mapping[Hashable, int]) -> WatermarkTracker:
        """A copy of the tracker after the batch whose inputs' largest timestamps are
        ``max_timestamps`` (input id -> timestamp; inputs without records are absent)."""
        tracker = copy.deepcopy(self.tracker)
        if not tracker.is_finished():
            for input_id in list(tracker._inputs):
                tracker.observe(input_id, max_timestamps.get(input_id),
                                finished=input_id in self.finished)
        tracker.advance(self.now_ms)
        return tracker
