"""A one-operator test harness for KeyedProcessFunctions (like Flink's
KeyedOneInputStreamOperatorTestHarness or Spark's TwsTester).

The harness runs the engine's own ProcessOperator, keyed state backend and timer
service in-process, without Spark: the function sees the same contexts, state, timer
order and timestamps as in a job, while the test decides when the watermark and the
processing time move.
"""
from __future__ import annotations

from typing import Any, Dict, Hashable, Iterable, List, NamedTuple, Optional

from api.datastream import functions as fn
from core.codec import key_identity
from engine.errors import OperatorError
from engine.runtime.operators.base import is_pickled
from engine.runtime.operators.udf import ProcessOperator
from engine.runtime.context import TimeDomain
from engine.runtime.task import OperatorTask
from engine.time.timers import EVENT_TIME, PROCESSING_TIME, InternalTimerService
from engine.time.watermarks import MAX_WATERMARK, MIN_WATERMARK
from statebackends.base import VOID_NAMESPACE
from statebackends.hashmap import HashMapKeyedStateBackend

__all__ = ["KeyedProcessFunctionHarness", "StreamRecord"]


class StreamRecord(NamedTuple):
    """An output record with its timestamp (None when it has none).

    Records emitted by ``process_element`` carry the input element's timestamp;
    records emitted by an event-time timer carry the timer's time; records emitted by
    a processing-time timer carry None, as in a job.
    """
    value: Any
    timestamp: Optional[int]


_DOMAINS = {TimeDomain.EVENT_TIME: EVENT_TIME, TimeDomain.PROCESSING_TIME: PROCESSING_TIME,
            EVENT_TIME: EVENT_TIME, PROCESSING_TIME: PROCESSING_TIME}


class _Clock:
    """The harness's time: what the TimerService reports, moved by the test."""

    def __init__(self, processing_time: int):
        self.processing_time = processing_time
        self.current_watermark = MIN_WATERMARK


class KeyedProcessFunctionHarness:
    """Drives one KeyedProcessFunction by hand: elements, watermarks, processing time,
    and a look at its output, side outputs, timers and keyed state.

    ``function`` is opened on construction (``open(runtime_context)`` with subtask 0 of
    1) and closed by ``close()`` or at the end of a ``with`` block. ``key_selector`` is
    what ``key_by`` would get (a KeySelector or a callable). Side outputs are captured
    for the ``side_output_tags`` given here (a job, too, drops side outputs nobody
    reads). ``output_type`` converts main outputs as ``process(..., output_type)`` does.
    Errors of the function surface as ``engine.errors.OperatorError``, as in a job.

    Example::

        with KeyedProcessFunctionHarness(MyTimeout(), lambda r: r[0],
                                         side_output_tags=[LATE]) as h:
            h.process_element(("a", 1), timestamp=1000)
            assert h.pending_timers() == [(1100, "a")]
            h.advance_watermark(1100)             # fires the timer
            assert h.take_output() == [("timeout", "a")]
            assert h.state("count", "a") == 1
            assert h.side_output(LATE) == []
    """

    def __init__(self, function, key_selector, max_parallelism: int = 128,
                 side_output_tags: Iterable = (), output_type=None,
                 processing_time: int = 0, batch_mode: bool = False,
                 job_parameters: Optional[Dict[str, str]] = None,
                 name: str = "KeyedProcess"):
        self._get_key = fn.wrap_key_selector(key_selector).get_key
        self._name = name
        self._convert = None if is_pickled(output_type) else output_type.convert
        self.backend = HashMapKeyedStateBackend(name, (0, max_parallelism - 1), max_parallelism)
        self.timers = InternalTimerService(self.backend)
        # The timer service's own tables are the only states registered so far.
        self._internal_states = set(self.backend.state_kinds())
        self._clock = _Clock(processing_time)
        # subtask 0 of 1, owning every key group, in a job whose records carry timestamps
        self._task = OperatorTask(self._clock, 0, 1, max_parallelism, dict(job_parameters or {}),
                                  self.backend, self.timers, timed=True, batch_mode=batch_mode)
        self._output: List[StreamRecord] = []
        self._side: Dict[str, List[StreamRecord]] = {}
        self.operator = operator = ProcessOperator(fn.wrap_keyed_process(function))
        operator.setup(name, self._task)
        operator.output = self._collect_main
        for tag in side_output_tags:
            tag_id = getattr(tag, "tag_id", tag)
            records = self._side[tag_id] = []
            operator.side_outputs[tag_id] = _collector(records)
        self._closed = False
        operator.open()

    # --- lifecycle ----------------------------------------------------------------
    def close(self) -> None:
        """Closes the function (once)."""
        if not self._closed:
            self._closed = True
            self.operator.close()

    def __enter__(self) -> "KeyedProcessFunctionHarness":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # --- input and time -----------------------------------------------------------
    def process_element(self, value, timestamp: Optional[int] = None) -> None:
        """Sets the current key to ``key_selector(value)`` and runs ``process_element``
        on ``value`` (``ctx.timestamp()`` is ``timestamp``, or Long.MIN_VALUE if None).
        Timers that are already due fire at the next watermark or processing-time
        change, as they fire at the end of a micro-batch in a job."""
        try:
            key = self._get_key(value)
        except Exception as e:
            raise OperatorError.wrap(f"{self._name} (key selector)", value, e) from None
        self.operator.process_chunk([(key, (timestamp, value))])

    def process_elements(self, values: Iterable, timestamps: Optional[Iterable] = None) -> None:
        """``process_element`` for each value (with the matching timestamp, if given)."""
        values = list(values)
        stamps = [None] * len(values) if timestamps is None else list(timestamps)
        if len(stamps) != len(values):
            raise ValueError(f"{len(values)} values but {len(stamps)} timestamps")
        for value, timestamp in zip(values, stamps):
            self.process_element(value, timestamp)

    def advance_watermark(self, watermark: int) -> None:
        """Moves the watermark to ``watermark`` (it never goes back) and fires the due
        timers: event-time ones up to the watermark in timestamp (then key) order,
        including those registered while firing, and processing-time ones up to the
        current processing time."""
        self._clock.current_watermark = max(self._clock.current_watermark, watermark)
        self._fire(flush_processing=False)

    def set_processing_time(self, time: int) -> None:
        """Moves the processing time to ``time`` (it never goes back) and fires the due
        timers (processing-time ones up to ``time``)."""
        self._clock.processing_time = max(self._clock.processing_time, time)
        self._fire(flush_processing=False)

    def end_input(self) -> None:
        """What the end of a bounded job does: the watermark becomes Long.MAX_VALUE, so
        every event-time timer fires; in ``batch_mode`` every processing-time timer
        fires too (in STREAMING mode they are dropped, as in PyFlink)."""
        self._clock.current_watermark = MAX_WATERMARK
        self._fire(flush_processing=self._task.batch_mode)
        self.operator.end_input()

    def _fire(self, flush_processing: bool) -> None:
        clock = self._clock
        self.operator.fire_timers(clock.current_watermark, clock.processing_time,
                                  flush_processing)

    @property
    def current_watermark(self) -> int:
        return self._clock.current_watermark

    @property
    def current_processing_time(self) -> int:
        return self._clock.processing_time

    # --- output -------------------------------------------------------------------
    def _collect_main(self, elements: list) -> None:
        convert = self._convert
        for timestamp, value in elements:
            if convert is not None:
                try:
                    value = convert(value)
                except Exception as e:
                    raise OperatorError.wrap(self._name, value, e) from None
            self._output.append(StreamRecord(value, timestamp))

    def output(self, with_timestamps: bool = False) -> list:
        """The main output so far: values, or StreamRecords ``(value, timestamp)``."""
        return _values(self._output, with_timestamps)

    def take_output(self, with_timestamps: bool = False) -> list:
        """Like ``output()``, and clears it."""
        records = _values(self._output, with_timestamps)
        self._output.clear()
        return records

    def side_output(self, tag, with_timestamps: bool = False) -> list:
        """What went to side output ``tag`` (an OutputTag or its id) so far."""
        return _values(self._side_records(tag), with_timestamps)

    def take_side_output(self, tag, with_timestamps: bool = False) -> list:
        """Like ``side_output(tag)``, and clears it."""
        records = self._side_records(tag)
        values = _values(records, with_timestamps)
        records.clear()
        return values

    def _side_records(self, tag) -> List[StreamRecord]:
        tag_id = getattr(tag, "tag_id", tag)
        try:
            return self._side[tag_id]
        except KeyError:
            raise KeyError(f"side output {tag_id!r} is not captured: pass its OutputTag in "
                           f"side_output_tags=[...] when creating the harness") from None

    # --- timers and state ---------------------------------------------------------
    def pending_timers(self, domain=TimeDomain.EVENT_TIME) -> List[tuple]:
        """The timers not yet fired in ``domain`` (a TimeDomain) as ``(timestamp, key)``,
        in firing order."""
        try:
            name = _DOMAINS[domain]
        except (KeyError, TypeError):
            raise ValueError(f"unknown time domain {domain!r}; use TimeDomain.EVENT_TIME or "
                             f"TimeDomain.PROCESSING_TIME") from None
        return [(timestamp, key) for timestamp, key, _ in self.timers.pending(name)]

    def state(self, name, key: Hashable):
        """The value of state ``name`` (a name or a state descriptor) for ``key``: the
        value of a ValueState, a list for a ListState, a dict for a MapState, the
        accumulator of a Reducing/AggregatingState; None if empty. A copy. Keys compare as
        state compares them (``core.codec.key_identity``: 1, 1.0 and True are three)."""
        name = name.get_name() if hasattr(name, "get_name") else name
        identity = key_identity(key)
        for state_name, state_key, namespace, value in self.backend.entries():
            if state_name == name and namespace == VOID_NAMESPACE and \
                    key_identity(state_key) == identity:
                return _copy(value)
        return None

    def keyed_state(self) -> Dict[Hashable, Dict[str, Any]]:
        """Every key's non-empty states: ``{key: {state name: value}}`` (copies, as from
        ``state``); timers are not included (see ``pending_timers``). Keys equal in Python
        but distinct in state (1 and True) share one entry of this dict: ``state`` tells
        them apart."""
        view: Dict[Hashable, Dict[str, Any]] = {}
        for name, key, namespace, value in self.backend.entries():
            if name not in self._internal_states and namespace == VOID_NAMESPACE:
                view.setdefault(key, {})[name] = _copy(value)
        return view

    def keys(self) -> list:
        """The keys that have state (timers excluded)."""
        return list(self.keyed_state())


def _collector(records: List[StreamRecord]):
    def collect(elements: list) -> None:
        records.extend(StreamRecord(value, timestamp) for timestamp, value in elements)
    return collect


def _values(records: List[StreamRecord], with_timestamps: bool) -> list:
    return list(records) if with_timestamps else [r.value for r in records]


def _copy(value):
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    return value
