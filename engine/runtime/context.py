"""What user functions see at run time: RuntimeContext, process Context, TimerService.

These implement the interfaces of ``api.datastream.functions`` by duck typing
(the engine does not import the API).
"""

from enum import Enum

from core.state_spec import StateKind
from statebackends.ttl import ttl_state

from engine.runtime.state_descriptors import kind_of, spec_and_ttl
from engine.runtime.metrics import MetricGroup
from engine.time.timers import EVENT_TIME, PROCESSING_TIME
from engine.time.watermarks import MIN_WATERMARK

KEYED_STATE_ONLY = ("Keyed state can only be used on a 'keyed stream', i.e., after a "
                    "'key_by()' operation. Operator: '{}'")


TTL_NEEDS_CLOCK = ("State {!r} has time-to-live enabled, but operator '{}' has no "
                   "processing-time clock to expire it with")


class StreamingRuntimeContext:
    """RuntimeContext of one parallel instance of an operator.

    ``clock.processing_time`` is the task's processing time, which state with
    time-to-live (``descriptor.enable_time_to_live``) expires by.
    """

    def __init__(self, task_name: str, subtask_index: int, parallelism: int,
                 max_parallelism: int, attempt_number: int, job_parameters: dict,
                 keyed_backend, clock=None, metrics_group: MetricGroup = None):
        self._task_name = task_name
        self._index = subtask_index
        self._parallelism = parallelism
        self._max_parallelism = max_parallelism
        self._attempt = attempt_number
        self._job_parameters = job_parameters
        self._backend = keyed_backend
        self._clock = clock
        self._ttl_states = {}  # state name -> TTL state, kept alive for the operator's life
        self._metrics = MetricGroup() if metrics_group is None else metrics_group

    def get_task_name(self) -> str:
        return self._task_name

    def get_task_name_with_subtasks(self) -> str:
        return f"{self._task_name} ({self._index + 1}/{self._parallelism})#{self._attempt}"

    def get_number_of_parallel_subtasks(self) -> int:
        return self._parallelism

    def get_max_number_of_parallel_subtasks(self) -> int:
        return self._max_parallelism

    def get_index_of_this_subtask(self) -> int:
        return self._index

    def get_attempt_number(self) -> int:
        return self._attempt

    def get_job_parameter(self, key: str, default_value: str):
        return self._job_parameters.get(key, default_value)

    def _keyed(self):
        if self._backend is None:
            raise RuntimeError(KEYED_STATE_ONLY.format(self._task_name))
        return self._backend

    def _state(self, kind: StateKind, descriptor):
        backend = self._keyed()
        spec, ttl_config = spec_and_ttl(descriptor, kind)
        if ttl_config is None:
            return backend.state(spec)
        if self._clock is None:
            raise RuntimeError(TTL_NEEDS_CLOCK.format(spec.name, self._task_name))
        state = ttl_state(backend, spec, ttl_config, self._clock)
        self._ttl_states[spec.name] = state
        return state

    def get_state(self, state_descriptor):
        return self._state(StateKind.VALUE, state_descriptor)

    def get_list_state(self, state_descriptor):
        return self._state(StateKind.LIST, state_descriptor)

    def get_map_state(self, state_descriptor):
        return self._state(StateKind.MAP, state_descriptor)

    def get_reducing_state(self, state_descriptor):
        return self._state(StateKind.REDUCING, state_descriptor)

    def get_aggregating_state(self, state_descriptor):
        return self._state(StateKind.AGGREGATING, state_descriptor)

    def state_of(self, state_descriptor):
        """The state of any kind of descriptor (as its ``get_*_state`` would give)."""
        kind = kind_of(state_descriptor)
        if kind is None:
            raise TypeError(f"expected a state descriptor, got {type(state_descriptor).__name__}")
        return self._state(kind, state_descriptor)

    def get_metrics_group(self) -> MetricGroup:
        """This instance's metric group; the driver aggregates its metrics over the
        operator's subtasks after each micro-batch (see engine.runtime.metrics)."""
        return self._metrics


class TimeDomain(Enum):
    """The time domain of a firing timer (``ctx.time_domain()`` in ``on_timer``)."""
    EVENT_TIME = 0
    PROCESSING_TIME = 1


TIMERS_NEED_KEYS = "Setting timers is only supported on a keyed stream (after key_by())."


class TimerService:
    """Time and timers for process functions.

    ``clock`` (the task) has the batch's ``processing_time`` and the operator's
    ``current_watermark``; ``timers`` is the keyed operator's InternalTimerService
    (None on a non-keyed stream, where timers cannot be set).
    """

    def __init__(self, clock, timers=None, backend=None):
        self._clock = clock
        self._timers = timers
        self._backend = backend

    def current_processing_time(self) -> int:
        return self._clock.processing_time

    def current_watermark(self) -> int:
        return self._clock.current_watermark

    def _change(self, method: str, domain: str, timestamp: int):
        if self._timers is None:
            raise RuntimeError(TIMERS_NEED_KEYS)
        backend = self._backend
        getattr(self._timers, method)(domain, backend.current_slot[0],  # (the key's identity)
                                      backend.get_current_namespace(), timestamp)

    def register_event_time_timer(self, timestamp: int):
        self._change("register", EVENT_TIME, timestamp)

    def register_processing_time_timer(self, timestamp: int):
        self._change("register", PROCESSING_TIME, timestamp)

    def delete_event_time_timer(self, timestamp: int):
        self._change("delete", EVENT_TIME, timestamp)

    def delete_processing_time_timer(self, timestamp: int):
        self._change("delete", PROCESSING_TIME, timestamp)


class ProcessContext:
    """The ``ctx`` of ``process_element`` and ``on_timer``."""

    def __init__(self, timer_service: TimerService, keyed_backend, cursor, operator):
        self._timer_service = timer_service
        self._backend = keyed_backend
        self._cursor = cursor  # knows the timestamp of the record (or timer) at hand
        self._operator = operator
        self.firing_domain = None  # set while a timer fires

    def timer_service(self) -> TimerService:
        return self._timer_service

    def timestamp(self) -> int:
        """The event timestamp of the record being processed (or of the firing timer);
        Long.MIN_VALUE when the record has none, as in PyFlink."""
        timestamp = self._cursor.timestamp
        return MIN_WATERMARK if timestamp is None else timestamp

    def output(self, output_tag, value) -> None:
        """Emits ``value`` to the side output ``output_tag`` (same as yielding
        ``(output_tag, value)``)."""
        self._operator.emit_side(output_tag, value, cursor=self._cursor)

    def get_current_key(self):
        if self._backend is None:
            raise RuntimeError("get_current_key() is only available on a KeyedStream")
        return self._backend.get_current_key()

    def time_domain(self) -> TimeDomain:
        """In ``on_timer``: the domain of the firing timer."""
        return self.firing_domain
