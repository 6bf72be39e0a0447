"""What user functions see at run time: RuntimeContext, process Context, TimerService.

These implement the interfaces of ``api.datastream.functions`` by duck typing
(the engine does not import the API).
"""

MIN_WATERMARK = -(2 ** 63)

KEYED_STATE_ONLY = ("Keyed state can only be used on a 'keyed stream', i.e., after a "
                    "'key_by()' operation. Operator: '{}'")


class StreamingRuntimeContext:
    """RuntimeContext of one parallel instance of an operator."""

    def __init__(self, task_name: str, subtask_index: int, parallelism: int,
                 max_parallelism: int, attempt_number: int, job_parameters: dict,
                 keyed_backend):
        self._task_name = task_name
        self._index = subtask_index
        self._parallelism = parallelism
        self._max_parallelism = max_parallelism
        self._attempt = attempt_number
        self._job_parameters = job_parameters
        self._backend = keyed_backend

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

    def get_state(self, state_descriptor):
        return self._keyed().get_state(state_descriptor)

    def get_list_state(self, state_descriptor):
        return self._keyed().get_list_state(state_descriptor)

    def get_map_state(self, state_descriptor):
        return self._keyed().get_map_state(state_descriptor)

    def get_reducing_state(self, state_descriptor):
        return self._keyed().get_reducing_state(state_descriptor)

    def get_aggregating_state(self, state_descriptor):
        return self._keyed().get_aggregating_state(state_descriptor)


class TimerService:
    """Time queries for process functions. Timers come with event-time support."""

    def __init__(self, clock):
        self._clock = clock  # anything with a ``processing_time`` attribute, set per batch

    def current_processing_time(self) -> int:
        return self._clock.processing_time

    def current_watermark(self) -> int:
        return MIN_WATERMARK

    def _no_timers(self, *_):
        raise NotImplementedError("timers are not supported yet by this engine version")

    register_processing_time_timer = register_event_time_timer = _no_timers
    delete_processing_time_timer = delete_event_time_timer = _no_timers


class ProcessContext:
    """The ``ctx`` of ``process_element``; ``get_current_key`` on keyed streams."""

    def __init__(self, timer_service: TimerService, keyed_backend, cursor):
        self._timer_service = timer_service
        self._backend = keyed_backend
        self._cursor = cursor  # knows the timestamp of the record being processed

    def timer_service(self) -> TimerService:
        return self._timer_service

    def timestamp(self):
        """The event timestamp of the record being processed, or None if it has none."""
        return self._cursor.timestamp

    def get_current_key(self):
        if self._backend is None:
            raise RuntimeError("get_current_key() is only available on a KeyedStream")
        return self._backend.get_current_key()
