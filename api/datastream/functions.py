"""User-defined function interfaces, as in ``pyflink.datastream.functions``.

Every operator that takes a function object also takes a plain callable; the
``wrap_*`` helpers at the bottom turn either into the function object the
engine calls, and reject the wrong kind of function at build time.
"""
from abc import ABC, abstractmethod
from typing import Any, Callable, Generic, TypeVar, Union

from .timerservice import TimerService

IN1 = TypeVar("IN1")
IN2 = TypeVar("IN2")
OUT = TypeVar("OUT")
KEY = TypeVar("KEY")
IN = TypeVar("IN")
W = TypeVar("W")
W2 = TypeVar("W2")


class Function(ABC):
    """Base of all user-defined functions: an ``open``/``close`` lifecycle."""

    def open(self, runtime_context: "RuntimeContext") -> None:
        """Initialization method, called once per parallel instance before any record."""

    def close(self) -> None:
        """Tear-down method, called after the last record at the end of input."""


class MapFunction(Function):
    """Transforms each element into exactly one element: ``ds.map(MyMapFunction())``."""

    @abstractmethod
    def map(self, value):
        """The mapping method: takes an element and returns the transformed element."""


class FlatMapFunction(Function):
    """Transforms each element into zero, one or more elements (an iterable or generator)."""

    @abstractmethod
    def flat_map(self, value):
        """Takes an element and returns (or yields) zero or more elements."""


class FilterFunction(Function):
    """A predicate: elements for which ``filter`` returns true are kept."""

    @abstractmethod
    def filter(self, value) -> bool:
        """Returns True to keep the element."""


class ReduceFunction(Function):
    """Combines two values of the same type into one: ``key_by(...).reduce(MyReduceFunction())``."""

    @abstractmethod
    def reduce(self, value1, value2):
        """Combines the accumulated value ``value1`` with the new ``value2``."""


class AggregateFunction(Function):
    """Incremental aggregation through an accumulator (used by AggregatingState and windows)."""

    @abstractmethod
    def create_accumulator(self):
        """Creates a new, empty accumulator."""

    @abstractmethod
    def add(self, value, accumulator):
        """Adds ``value`` to ``accumulator`` and returns the new accumulator."""

    @abstractmethod
    def get_result(self, accumulator):
        """Gets the aggregation result from the accumulator."""

    @abstractmethod
    def merge(self, acc_a, acc_b):
        """Merges two accumulators into one."""


class KeySelector(Function):
    """Extracts the key of an element for ``key_by``."""

    @abstractmethod
    def get_key(self, value):
        """Returns the key of ``value``."""


class Partitioner(Function):
    """Chooses the target partition of a key for ``partition_custom``."""

    @abstractmethod
    def partition(self, key: Any, num_partitions: int) -> int:
        """Returns the target partition index in ``[0, num_partitions)``."""


class ProcessFunction(Function):
    """Processes each element, yielding zero or more outputs; may use the Context."""

    class Context(ABC):
        """Information available during ``process_element``."""

        @abstractmethod
        def timer_service(self) -> TimerService:
            """Returns the TimerService for querying time."""

        @abstractmethod
        def timestamp(self) -> int:
            """Timestamp of the element being processed (Long.MIN_VALUE if it has none)."""

        @abstractmethod
        def output(self, output_tag, value) -> None:
            """Emits ``value`` to a side output (the same as yielding ``(output_tag, value)``)."""

    @abstractmethod
    def process_element(self, value, ctx: "ProcessFunction.Context"):
        """Processes one element; yields (or returns an iterable of) output elements."""


class KeyedProcessFunction(Function):
    """Processes each element of a KeyedStream, with keyed state through the runtime context."""

    class Context(ProcessFunction.Context):
        """Information available during ``process_element``."""

        @abstractmethod
        def get_current_key(self):
            """Returns the key of the element being processed."""

    class OnTimerContext(Context):
        """Information available during ``on_timer``."""

        @abstractmethod
        def time_domain(self):
            """The TimeDomain (EVENT_TIME or PROCESSING_TIME) of the firing timer."""

    @abstractmethod
    def process_element(self, value, ctx: "KeyedProcessFunction.Context"):
        """Processes one element; yields (or returns an iterable of) output elements."""

    def on_timer(self, timestamp: int, ctx: "KeyedProcessFunction.OnTimerContext"):
        """Called when a registered timer fires; yields output elements."""


class CoMapFunction(Function):
    """A map over two connected streams: ``ds1.connect(ds2).map(MyCoMapFunction())``. One
    instance serves both inputs, so they can share state."""

    @abstractmethod
    def map1(self, value):
        """Maps an element of the first input."""

    @abstractmethod
    def map2(self, value):
        """Maps an element of the second input."""


class CoFlatMapFunction(Function):
    """A flat map over two connected streams; each method yields zero or more elements."""

    @abstractmethod
    def flat_map1(self, value):
        """Yields the outputs of an element of the first input."""

    @abstractmethod
    def flat_map2(self, value):
        """Yields the outputs of an element of the second input."""


class CoProcessFunction(Function):
    """Processes the elements of two connected (non-keyed) streams."""

    class Context(ABC):
        """Information available during ``process_element1``/``process_element2``."""

        @abstractmethod
        def timer_service(self) -> TimerService:
            """Returns the TimerService for querying time."""

        @abstractmethod
        def timestamp(self) -> int:
            """Timestamp of the element being processed."""

    @abstractmethod
    def process_element1(self, value, ctx: "CoProcessFunction.Context"):
        """Processes an element of the first input; yields output elements."""

    @abstractmethod
    def process_element2(self, value, ctx: "CoProcessFunction.Context"):
        """Processes an element of the second input; yields output elements."""


class KeyedCoProcessFunction(Function):
    """Processes the elements of two connected keyed streams, with keyed state and timers
    shared by both inputs."""

    class Context(ABC):
        """Information available during ``process_element1``/``process_element2``."""

        @abstractmethod
        def get_current_key(self):
            """Returns the key of the element being processed."""

        @abstractmethod
        def timer_service(self) -> TimerService:
            """Returns the TimerService for querying time and registering timers."""

        @abstractmethod
        def timestamp(self) -> int:
            """Timestamp of the element being processed."""

    class OnTimerContext(Context):
        """Information available during ``on_timer``."""

        @abstractmethod
        def time_domain(self):
            """The TimeDomain (EVENT_TIME or PROCESSING_TIME) of the firing timer."""

    @abstractmethod
    def process_element1(self, value, ctx: "KeyedCoProcessFunction.Context"):
        """Processes an element of the first input; yields output elements."""

    @abstractmethod
    def process_element2(self, value, ctx: "KeyedCoProcessFunction.Context"):
        """Processes an element of the second input; yields output elements."""

    def on_timer(self, timestamp: int, ctx: "KeyedCoProcessFunction.OnTimerContext"):
        """Called when a registered timer fires; yields output elements."""


class BaseBroadcastProcessFunction(Function):
    """What every broadcast process function shares: contexts with broadcast state."""

    class BaseContext(ABC):
        """Time information available to both sides."""

        @abstractmethod
        def timestamp(self) -> int:
            """Timestamp of the element being processed."""

        @abstractmethod
        def current_processing_time(self) -> int:
            """Returns the current processing time."""

        @abstractmethod
        def current_watermark(self) -> int:
            """Returns the current event-time watermark."""

    class Context(BaseContext):
        """The broadcast side's context: read-write broadcast state."""

        @abstractmethod
        def get_broadcast_state(self, state_descriptor) -> "BroadcastState":
            """The broadcast state of ``state_descriptor`` (a MapStateDescriptor), writable."""

    class ReadOnlyContext(BaseContext):
        """The other side's context: read-only broadcast state."""

        @abstractmethod
        def get_broadcast_state(self, state_descriptor) -> "ReadOnlyBroadcastState":
            """The broadcast state of ``state_descriptor``, read-only."""


class BroadcastProcessFunction(BaseBroadcastProcessFunction, Generic[IN1, IN2, OUT]):
    """Processes a non-keyed stream connected with a BroadcastStream."""

    class Context(BaseBroadcastProcessFunction.Context, ABC):
        """The broadcast side's context."""

    class ReadOnlyContext(BaseBroadcastProcessFunction.ReadOnlyContext, ABC):
        """The non-broadcast side's context."""

    @abstractmethod
    def process_element(self, value: IN1, ctx: ReadOnlyContext):
        """Processes an element of the non-broadcast side; yields output elements."""

    @abstractmethod
    def process_broadcast_element(self, value: IN2, ctx: Context):
        """Processes an element of the broadcast side; yields output elements."""


class KeyedBroadcastProcessFunction(BaseBroadcastProcessFunction, Generic[KEY, IN1, IN2, OUT]):
    """Processes a KeyedStream connected with a BroadcastStream, with keyed state and timers
    on the keyed side."""

    class Context(BaseBroadcastProcessFunction.Context, ABC):
        """The broadcast side's context."""

        def apply_to_keyed_state(self, state_descriptor, function) -> None:
            """Calls ``function(key, state)`` for every key that has state of
            ``state_descriptor`` in this parallel instance (Flink's applyToKeyedState)."""
            raise NotImplementedError

    class ReadOnlyContext(BaseBroadcastProcessFunction.ReadOnlyContext, ABC):
        """The keyed side's context."""

        @abstractmethod
        def timer_service(self) -> TimerService:
            """A TimerService for querying time and registering timers."""

        @abstractmethod
        def get_current_key(self) -> KEY:
            """Returns the key of the element being processed."""

    class OnTimerContext(ReadOnlyContext, ABC):
        """Information available during ``on_timer``."""

        @abstractmethod
        def time_domain(self):
            """The TimeDomain of the firing timer."""

        @abstractmethod
        def get_current_key(self) -> KEY:
            """Returns the key of the firing timer."""

    @abstractmethod
    def process_element(self, value: IN1, ctx: ReadOnlyContext):
        """Processes an element of the keyed side; yields output elements."""

    @abstractmethod
    def process_broadcast_element(self, value: IN2, ctx: Context):
        """Processes an element of the broadcast side; yields output elements."""

    def on_timer(self, timestamp: int, ctx: OnTimerContext):
        """Called when a timer registered on the keyed side fires; yields output elements."""


class WindowFunction(Function, Generic[IN, OUT, KEY, W]):
    """Evaluates a keyed window: ``apply(key, window, inputs)`` yields the outputs.

    Generic as in PyFlink: ``class Count(WindowFunction[tuple, tuple, str, TimeWindow])``."""

    @abstractmethod
    def apply(self, key, window, inputs):
        """Evaluates the window's elements (or its one aggregated value)."""


class ProcessWindowFunction(Function, Generic[IN, OUT, KEY, W]):
    """Evaluates a keyed window with a Context: ``process(key, context, elements)``.

    Generic as in PyFlink, its Context too::

        class Count(ProcessWindowFunction[tuple, tuple, str, TimeWindow]):
            def process(self, key, context: ProcessWindowFunction.Context[TimeWindow], elements):
                yield key, context.window().start, len(list(elements))
    """

    class Context(ABC, Generic[W2]):
        """The window being evaluated, time, and per-window / per-key state."""

        @abstractmethod
        def window(self):
            """The window being evaluated."""

        @abstractmethod
        def current_processing_time(self) -> int:
            """The current processing time."""

        @abstractmethod
        def current_watermark(self) -> int:
            """The current event-time watermark."""

        @abstractmethod
        def window_state(self):
            """State accessor (get_state, ...) scoped to the key and this window."""

        @abstractmethod
        def global_state(self):
            """State accessor scoped to the key, across windows."""

    @abstractmethod
    def process(self, key, context: "ProcessWindowFunction.Context", elements):
        """Evaluates the window; yields (or returns an iterable of) outputs."""

    def clear(self, context: "ProcessWindowFunction.Context") -> None:
        """Called when the window is cleaned up: delete its per-window state here."""


class AllWindowFunction(Function, Generic[IN, OUT, W]):
    """Evaluates a non-keyed window: ``apply(window, inputs)`` yields the outputs."""

    @abstractmethod
    def apply(self, window, inputs):
        """Evaluates the window's elements (or its one aggregated value)."""


class ProcessAllWindowFunction(Function, Generic[IN, OUT, W]):
    """Evaluates a non-keyed window with a Context: ``process(context, elements)``."""

    Context = ProcessWindowFunction.Context

    @abstractmethod
    def process(self, context: "ProcessWindowFunction.Context", elements):
        """Evaluates the window; yields (or returns an iterable of) outputs."""

    def clear(self, context: "ProcessWindowFunction.Context") -> None:
        """Called when the window is cleaned up."""


class KeyedStateStore(ABC):
    """Access to keyed state: the state of the current key (and, in a window function's
    ``window_state()``, of the current window)."""

    @abstractmethod
    def get_state(self, state_descriptor):
        """Keyed ValueState for a ValueStateDescriptor."""

    @abstractmethod
    def get_list_state(self, state_descriptor):
        """Keyed ListState for a ListStateDescriptor."""

    @abstractmethod
    def get_map_state(self, state_descriptor):
        """Keyed MapState for a MapStateDescriptor."""

    @abstractmethod
    def get_reducing_state(self, state_descriptor):
        """Keyed ReducingState for a ReducingStateDescriptor."""

    @abstractmethod
    def get_aggregating_state(self, state_descriptor):
        """Keyed AggregatingState for an AggregatingStateDescriptor."""


class RuntimeContext(KeyedStateStore):
    """Information about the parallel instance running a function, and access to keyed state."""

    @abstractmethod
    def get_task_name(self) -> str:
        """Name of the task the function runs in."""

    @abstractmethod
    def get_task_name_with_subtasks(self) -> str:
        """Task name with the subtask indicator, e.g. ``Map (2/4)#0``."""

    @abstractmethod
    def get_number_of_parallel_subtasks(self) -> int:
        """Parallelism of the task."""

    @abstractmethod
    def get_max_number_of_parallel_subtasks(self) -> int:
        """Max parallelism (number of key groups) of the task."""

    @abstractmethod
    def get_index_of_this_subtask(self) -> int:
        """Index of this parallel subtask, from 0 to parallelism - 1."""

    @abstractmethod
    def get_attempt_number(self) -> int:
        """Attempt number of this subtask; the first attempt is 0."""

    @abstractmethod
    def get_job_parameter(self, key: str, default_value: str):
        """Global job parameter ``key`` as a string, or ``default_value``."""

    @abstractmethod
    def get_metrics_group(self):
        """This parallel instance's metric group (``counter``, ``gauge``, ``meter``,
        ``distribution``, ``add_group``). Metrics are kept in the instance for the
        function's own use; there is no metric reporter to publish them."""


class SourceFunction(Function):
    """A legacy source for ``env.add_source``, written in Python: ``run(ctx)`` emits records
    with ``ctx.collect(value)`` until its input ends or ``cancel()`` is called. It runs in
    the driver, with parallelism 1; after a restore it runs again and the records the
    committed batches had are skipped. (PyFlink's wrap Java classes, which cannot run
    here; the connectors' Python sources subclass this too.)"""

    def __init__(self, source_func=None):
        if source_func is not None:
            raise TypeError(f"SourceFunction({source_func!r}) names a Java source, which needs "
                            "a JVM: read the data with env.from_source(...) and a Source.")

    def run(self, ctx) -> None:
        """Emits the source's records through ``ctx.collect``."""
        raise NotImplementedError(f"{type(self).__name__} has no run(ctx)")

    def cancel(self) -> None:
        """Asks ``run`` to return (the job was cancelled)."""

    def get_java_function(self):
        """JVM-only: there is no Java function here, so this returns None."""
        return None


class SinkFunction(Function):
    """A sink written in Python: ``invoke(value, context)`` is called in the parallel
    tasks for every record, where the records are, as in Flink. Like Flink's
    SinkFunction it writes at least once: a batch that fails and runs again invokes it
    again (the connector sinks write exactly once).
    """

    @abstractmethod
    def invoke(self, value, context) -> None:
        """Writes one record."""

    def get_java_function(self):
        """JVM-only: there is no Java function here, so this returns None."""
        return None


# --- wrapping plain callables -------------------------------------------------------

class _CallableFunction(Function):
    """Base for the wrappers of plain callables: the callable itself becomes the
    instance's ``method``, so calling it costs no extra Python frame."""
    method = ""

    def __init__(self, func: Callable):
        setattr(self, self.method, func)


def _callable_class(name: str, interface: type, method: str) -> type:
    """The class ``name`` that wraps a plain callable as an ``interface``: the callable
    becomes each instance's ``method``. Bound to ``name`` in this module, the class
    pickles by reference."""
    return type(interface)(name, (_CallableFunction, interface),
                           {"__module__": __name__, "method": method, method: None})


_MapCallable = _callable_class("_MapCallable", MapFunction, "map")
_FlatMapCallable = _callable_class("_FlatMapCallable", FlatMapFunction, "flat_map")
_FilterCallable = _callable_class("_FilterCallable", FilterFunction, "filter")
_ReduceCallable = _callable_class("_ReduceCallable", ReduceFunction, "reduce")
_KeySelectorCallable = _callable_class("_KeySelectorCallable", KeySelector, "get_key")
_PartitionerCallable = _callable_class("_PartitionerCallable", Partitioner, "partition")
_ProcessCallable = _callable_class("_ProcessCallable", ProcessFunction, "process_element")


def _wrap(func, interface: type, wrapper: type, operation: str):
    if isinstance(func, interface):
        return func
    if isinstance(func, Function) or not callable(func):
        raise TypeError(
            f"{operation}() expects a {interface.__name__} or a callable, "
            f"got {type(func).__name__}")
    return wrapper(func)


def wrap_map(func: Union[MapFunction, Callable]) -> MapFunction:
    return _wrap(func, MapFunction, _MapCallable, "map")


def wrap_flat_map(func: Union[FlatMapFunction, Callable]) -> FlatMapFunction:
    return _wrap(func, FlatMapFunction, _FlatMapCallable, "flat_map")


def wrap_filter(func: Union[FilterFunction, Callable]) -> FilterFunction:
    return _wrap(func, FilterFunction, _FilterCallable, "filter")


def wrap_reduce(func: Union[ReduceFunction, Callable]) -> ReduceFunction:
    return _wrap(func, ReduceFunction, _ReduceCallable, "reduce")


def opens(function: Function) -> bool:
    """Whether ``function`` has an ``open`` of its own: only then can it hold the runtime
    context, and so keyed state, that ``open`` receives."""
    return type(function).open is not Function.open


def clears_windows(function: Function) -> bool:
    """Whether a (keyed or non-keyed) ProcessWindowFunction has a ``clear`` of its own:
    only then is there per-window state to delete when a window is cleaned up."""
    return type(function).clear not in (ProcessWindowFunction.clear,
                                        ProcessAllWindowFunction.clear)


def wrap_key_selector(func: Union[KeySelector, Callable]) -> KeySelector:
    return _wrap(func, KeySelector, _KeySelectorCallable, "key_by")


def wrap_partitioner(func: Union[Partitioner, Callable]) -> Partitioner:
    return _wrap(func, Partitioner, _PartitionerCallable, "partition_custom")


def wrap_process(func: Union[ProcessFunction, Callable]) -> ProcessFunction:
    return _wrap(func, ProcessFunction, _ProcessCallable, "process")


def wrap_keyed_process(func) -> Function:
    """KeyedStream.process takes a KeyedProcessFunction (or, as in PyFlink, a ProcessFunction)."""
    if isinstance(func, (KeyedProcessFunction, ProcessFunction)):
        return func
    raise TypeError(
        f"process() on a KeyedStream expects a KeyedProcessFunction, got {type(func).__name__}")


class _CoFunctionAdapter(CoProcessFunction):
    """Runs a CoMapFunction or CoFlatMapFunction as a CoProcessFunction (as PyFlink does),
    forwarding its lifecycle."""

    def __init__(self, function: Function):
        self.function = function

    def open(self, runtime_context) -> None:
        self.function.open(runtime_context)

    def close(self) -> None:
        self.function.close()


class _CoMapAdapter(_CoFunctionAdapter):
    def process_element1(self, value, ctx):
        return (self.function.map1(value),)

    def process_element2(self, value, ctx):
        return (self.function.map2(value),)


class _CoFlatMapAdapter(_CoFunctionAdapter):
    def process_element1(self, value, ctx):
        return self.function.flat_map1(value)

    def process_element2(self, value, ctx):
        return self.function.flat_map2(value)


def wrap_co_map(func: CoMapFunction) -> CoProcessFunction:
    if not isinstance(func, CoMapFunction):
        raise TypeError(f"map() on ConnectedStreams expects a CoMapFunction, got "
                        f"{type(func).__name__}")
    return _CoMapAdapter(func)


def wrap_co_flat_map(func: CoFlatMapFunction) -> CoProcessFunction:
    if not isinstance(func, CoFlatMapFunction):
        raise TypeError(f"flat_map() on ConnectedStreams expects a CoFlatMapFunction, got "
                        f"{type(func).__name__}")
    return _CoFlatMapAdapter(func)


def wrap_co_process(func, keyed: bool) -> Function:
    """ConnectedStreams.process takes a CoProcessFunction, or on keyed streams also a
    KeyedCoProcessFunction."""
    if isinstance(func, CoProcessFunction) or (keyed and isinstance(func, KeyedCoProcessFunction)):
        return func
    if isinstance(func, KeyedCoProcessFunction):
        raise TypeError("a KeyedCoProcessFunction needs keyed streams: connect two KeyedStreams, "
                        "or call key_by(key_selector1, key_selector2) on the ConnectedStreams")
    raise TypeError(f"process() on ConnectedStreams expects a CoProcessFunction or "
                    f"KeyedCoProcessFunction, got {type(func).__name__}")


def wrap_broadcast_process(func, keyed: bool) -> Function:
    """BroadcastConnectedStream.process takes a BroadcastProcessFunction on a non-keyed
    stream, a KeyedBroadcastProcessFunction on a KeyedStream."""
    if keyed and not isinstance(func, KeyedBroadcastProcessFunction):
        raise TypeError(f"process() of a KeyedStream connected with a BroadcastStream expects a "
                        f"KeyedBroadcastProcessFunction, got {type(func).__name__}")
    if not keyed and not isinstance(func, BroadcastProcessFunction):
        raise TypeError(f"process() of a DataStream connected with a BroadcastStream expects a "
                        f"BroadcastProcessFunction, got {type(func).__name__}"
                        + (" (a KeyedBroadcastProcessFunction needs key_by(...) first)"
                           if isinstance(func, KeyedBroadcastProcessFunction) else ""))
    return func


def wrap_sink(func) -> SinkFunction:
    if isinstance(func, SinkFunction):
        return func
    raise TypeError(f"add_sink() expects a SinkFunction, got {type(func).__name__}")



# --- Async I/O (AsyncDataStream) ------------------------------------------------------
from enum import Enum  # noqa: E402  (kept with the async classes they serve)
from typing import List, Optional  # noqa: E402

IN = TypeVar("IN")


class AsyncRetryPredicate(ABC, Generic[OUT]):
    """When an async call is tried again: a predicate on its result and one on its error."""

    @abstractmethod
    def result_predicate(self) -> Optional[Callable[[List[OUT]], bool]]:
        """A predicate on an attempt's result list that asks for another attempt, or None."""

    @abstractmethod
    def exception_predicate(self) -> Optional[Callable[[Exception], bool]]:
        """A predicate on an attempt's exception that asks for another attempt, or None."""


class AsyncRetryStrategy(ABC, Generic[OUT]):
    """How often and after which delay a failed async call is tried again, e.g.
    ``AsyncRetryStrategy.fixed_delay(3, 100, None, has_exception_predicate)`` (from
    ``async_retry_predicates``).
    """

    @abstractmethod
    def can_retry(self, current_attempts: int) -> bool:
        """Whether another attempt may follow attempt number ``current_attempts`` (from 1)."""

    @abstractmethod
    def get_backoff_time_millis(self, current_attempts: int) -> int:
        """The delay in milliseconds before the attempt after ``current_attempts``."""

    @abstractmethod
    def get_retry_predicate(self) -> AsyncRetryPredicate[OUT]:
        """The predicates deciding whether an attempt's outcome calls for a retry."""

    @staticmethod
    def no_restart():
        """The strategy that never retries."""
        from .async_retry_strategies import NO_RETRY_STRATEGY
        return NO_RETRY_STRATEGY

    @staticmethod
    def fixed_delay(max_attempts: int, backoff_time_millis: int,
                    result_predicate: Optional[Callable[[List[OUT]], bool]],
                    exception_predicate: Optional[Callable[[Exception], bool]]):
        """Retries up to ``max_attempts`` times, ``backoff_time_millis`` apart."""
        from .async_retry_strategies import FixedDelayRetryStrategy
        return FixedDelayRetryStrategy(max_attempts, backoff_time_millis, result_predicate,
                                       exception_predicate)

    @staticmethod
    def exponential_backoff(max_attempts: int, initial_delay: int, max_retry_delay: int,
                            multiplier: float,
                            result_predicate: Optional[Callable[[List[OUT]], bool]],
                            exception_predicate: Optional[Callable[[Exception], bool]]):
        """Retries up to ``max_attempts`` times with a delay growing by ``multiplier`` from
        ``initial_delay`` up to ``max_retry_delay`` milliseconds."""
        from .async_retry_strategies import ExponentialBackoffDelayRetryStrategy
        return ExponentialBackoffDelayRetryStrategy(max_attempts, initial_delay, max_retry_delay,
                                                    multiplier, result_predicate,
                                                    exception_predicate)


class AsyncFunction(Function, Generic[IN, OUT]):
    """Calls a slow service for each element without blocking on it: ``async_invoke`` is
    an ``async def`` returning the list of outputs for one element; many calls are in
    flight at once (see AsyncDataStream).

    Example::

        class Lookup(AsyncFunction[int, str]):
            async def async_invoke(self, value: int) -> List[str]:
                return [await client.get(value)]
    """

    @abstractmethod
    async def async_invoke(self, value: IN) -> List[OUT]:
        """Returns the outputs for ``value`` (a list, possibly empty); an exception fails the
        job unless the retry strategy retries it."""

    def timeout(self, value: IN) -> List[OUT]:
        """The outputs for ``value`` when its call did not finish in time; by default it
        raises TimeoutError, which fails the job."""
        raise TimeoutError(f"Async function call has timed out for input: {value}")


class AsyncFunctionDescriptor(object):
    """What ``AsyncDataStream`` records for one async operator."""

    class OutputMode(Enum):
        ORDERED = 0
        UNORDERED = 1

    def __init__(self, async_function, timeout, capacity, async_retry_strategy, output_mode):
        self.async_function = async_function
        self.timeout = timeout
        self.capacity = capacity
        self.async_retry_strategy = async_retry_strategy
        self.output_mode = output_mode
