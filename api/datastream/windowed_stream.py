"""WindowedStream and AllWindowedStream, as in ``pyflink.datastream``: a keyed (or
non-keyed) stream cut into windows by a WindowAssigner, evaluated by a window function
when the trigger fires."""
from functools import partial
from typing import Callable, Optional, Union

from engine.runtime.operators.window import WindowFunctionCall
from engine.runtime.operators.window_batch import window_operator
from engine.runtime.state_descriptors import declares_pickled
from engine.time.windows import assigns_data_windows

from api.common.typeinfo import TypeInformation
from . import functions as fn
from .output_tag import OutputTag


class _Windowed:
    """What both windowed streams share: the assigner, trigger, lateness and late tag."""

    _keyed_kinds = {fn.WindowFunction: "apply", fn.ProcessWindowFunction: "process"}

    def __init__(self, keyed_stream, window_assigner):
        self._keyed_stream = keyed_stream
        self._assigner = window_assigner
        self._trigger = None
        self._allowed_lateness = 0
        self._late_tag: Optional[OutputTag] = None

    def get_execution_environment(self):
        return self._keyed_stream.get_execution_environment()

    def get_input_type(self) -> TypeInformation:
        return self._keyed_stream.get_type()

    def _pickled_input(self) -> bool:
        """Whether stored elements of the input may be pickled (its type allows it)."""
        return declares_pickled(self.get_input_type())

    def trigger(self, trigger):
        """Sets the Trigger that decides when windows fire (default: the assigner's)."""
        self._trigger = trigger
        return self

    def allowed_lateness(self, time_ms: int):
        """Keeps windows for ``time_ms`` after the watermark passed their end: late elements
        within it re-fire the window. Only for event-time windows."""
        if time_ms < 0:
            raise ValueError("The allowed lateness cannot be negative.")
        if time_ms and not self._assigner.is_event_time():
            raise ValueError("Setting an allowed lateness is only valid for event-time "
                             "windows.")
        self._allowed_lateness = int(time_ms)
        return self

    def side_output_late_data(self, output_tag: OutputTag):
        """Sends elements that arrive after their windows' cleanup to ``output_tag``
        (``get_side_output(output_tag)`` on the result) instead of dropping them."""
        if not isinstance(output_tag, OutputTag):
            raise TypeError("side_output_late_data() expects an OutputTag")
        self._late_tag = output_tag
        return self

    def _call(self, window_function, single: bool) -> WindowFunctionCall:
        """How the operator calls ``window_function``; a TypeError if it is of none of
        the kinds this stream takes."""
        for interface, kind in self._keyed_kinds.items():
            if isinstance(window_function, interface):
                clears = kind.startswith("process") and fn.clears_windows(window_function)
                return WindowFunctionCall(window_function, kind, single, clears)
        names = " or ".join(i.__name__ for i in self._keyed_kinds)
        raise TypeError(f"the window function must be a {names}, got "
                        f"{type(window_function).__name__}")

    def _window(self, name: str, contents, call: WindowFunctionCall, output_type):
        env = self.get_execution_environment()
        trigger = self._trigger or self._assigner.get_default_trigger(env)
        factory = partial(window_operator, self._assigner, trigger, contents, call,
                          self._allowed_lateness, self._late_tag)
        stream = self._keyed_stream._keyed(name, factory, output_type)
        stream._transformation.uses_time = True
        if not assigns_data_windows(self._assigner):  # windows of the user's own classes
            stream._transformation.pickled_keys = True
        return stream

    def _reduce_or_aggregate(self, name, contents, window_function, output_type):
        if window_function is None:
            call = WindowFunctionCall(None, "none", single=True)
        else:
            call = self._call(window_function, single=True)
        return self._window(name, contents, call, output_type)

    def reduce(self, reduce_function: Union[fn.ReduceFunction, Callable],
               window_function=None, output_type: TypeInformation = None):
        """Reduces each window incrementally (one value per key and window); the result,
        or ``window_function`` applied to it, is emitted when the window fires."""
        if window_function is None and output_type is None:
            output_type = self.get_input_type()
        return self._reduce_or_aggregate(
            "Window(Reduce)", ("reducing", fn.wrap_reduce(reduce_function), self._pickled_input()),
            window_function,
            output_type)

    def aggregate(self, aggregate_function: fn.AggregateFunction, window_function=None,
                  accumulator_type: TypeInformation = None,
                  output_type: TypeInformation = None):
        """Aggregates each window incrementally with one accumulator per key and window."""
        if not isinstance(aggregate_function, fn.AggregateFunction):
            raise TypeError("aggregate() expects an AggregateFunction, got "
                            f"{type(aggregate_function).__name__}")
        return self._reduce_or_aggregate(
            "Window(Aggregate)",
            ("aggregating", aggregate_function, declares_pickled(accumulator_type)),
            window_function,
            output_type)

    def apply(self, window_function, output_type: TypeInformation = None, *,
              result_type: TypeInformation = None):
        """Evaluates each window's buffered elements with a WindowFunction
        (``result_type`` is PyFlink 1.x's name of ``output_type``)."""
        return self._window("Window(Apply)", ("list", None, self._pickled_input()),
                            self._call(window_function, single=False),
                            _output_type(output_type, result_type))

    def process(self, process_window_function, output_type: TypeInformation = None, *,
                result_type: TypeInformation = None):
        """Evaluates each window's buffered elements with a ProcessWindowFunction
        (``result_type`` is PyFlink 1.x's name of ``output_type``)."""
        return self._window("Window(Process)", ("list", None, self._pickled_input()),
                            self._call(process_window_function, single=False),
                            _output_type(output_type, result_type))


def _output_type(output_type, result_type):
    if output_type is not None and result_type is not None:
        raise TypeError("give output_type or its old name result_type, not both")
    return output_type if output_type is not None else result_type


class WindowedStream(_Windowed):
    """A KeyedStream cut into windows: ``ks.window(TumblingEventTimeWindows.of(...))``."""


def _null_byte_key(value) -> int:
    """The key of every element of a window_all: PyFlink's ``NullByteKeySelector`` keys by
    an untyped 0, so its windows are evaluated on the subtask that 0's pickle goes to."""
    return 0


class AllWindowedStream(_Windowed):
    """A non-keyed stream cut into windows (``ds.window_all(...)``). As in PyFlink, its
    window operator has the environment's parallelism, and one subtask evaluates all
    windows."""

    _keyed_kinds = {fn.AllWindowFunction: "apply_all",
                    fn.ProcessAllWindowFunction: "process_all"}

    def __init__(self, data_stream, window_assigner):
        super().__init__(data_stream.key_by(_null_byte_key), window_assigner)

    def _window(self, name, contents, call, output_type):
        stream = super()._window(name.replace("Window(", "AllWindow("), contents, call,
                                 output_type)
        # The key is the int 0, never pickled (only windows of the user's own may be).
        stream._transformation.pickled_keys = not assigns_data_windows(self._assigner)
        return stream
