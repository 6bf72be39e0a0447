"""Group windows of the Table API, as ``pyflink.table.window``: ``Tumble``, ``Slide`` and
``Session`` windows on a table's rowtime attribute, for
``table.window(Tumble.over(lit(10).seconds).on(col('ts')).alias('w'))``, and ``Over``
windows, which ``Table.over_window`` does not take here."""
from typing import Tuple

from .expressions import Expression, interval_of

__all__ = ['Tumble', 'Session', 'Slide', 'Over', 'GroupWindow', 'OverWindow']

_NAMES = {'TUMBLE': 'Tumble', 'HOP': 'Slide', 'SESSION': 'Session'}  # the builders' names


class GroupWindow:
    """A group window: its kind as Flink SQL's window function names it (TUMBLE, HOP,
    SESSION), its intervals in milliseconds in that function's order, the time field and
    the alias that ``group_by`` and the window properties (``col('w').start``) refer to."""

    def __init__(self, kind: str, intervals: Tuple[int, ...], time_field: Expression,
                 alias: str):
        if not isinstance(time_field, Expression) or time_field._name != 'field':
            raise ValueError(f"{_NAMES[kind]} window: on() takes the time attribute column, "
                             f"col('ts'), got {time_field!r}")
        if not isinstance(alias, str) or not alias:
            raise ValueError(f"{_NAMES[kind]} window: alias() takes a name, got {alias!r}")
        self._kind = kind
        self._intervals = intervals
        self._time_field = time_field._args[0]
        self._alias = alias


class _WithIntervals:
    """A group window of its intervals, before the time field (``on``)."""

    def __init__(self, kind: str, *intervals: Expression):
        self._kind = kind
        self._intervals = tuple(interval_of(i, f"{_NAMES[kind]} window") for i in intervals)

    def on(self, time_field: Expression) -> '_OnTime':
        """The time attribute the rows are windowed by: ``.on(col('rowtime'))``."""
        return _OnTime(self, time_field)


class _OnTime:
    """A group window of its intervals and time field, before its ``alias``."""

    def __init__(self, window: _WithIntervals, time_field: Expression):
        self._window = window
        self._time_field = time_field

    def alias(self, alias: str) -> GroupWindow:
        """The name ``group_by`` and window properties refer to the window by."""
        return GroupWindow(self._window._kind, self._window._intervals, self._time_field,
                           alias)


class Tumble:
    """Tumbling windows: of a fixed size, not overlapping.
    ``Tumble.over(lit(10).minutes).on(col('rowtime')).alias('w')``."""

    @classmethod
    def over(cls, size: Expression) -> _WithIntervals:
        """The windows' size, a time interval (``lit(10).minutes``)."""
        return _WithIntervals('TUMBLE', size)


class Slide:
    """Sliding windows: of a fixed size, starting every ``slide``, so they may overlap.
    ``Slide.over(lit(10).minutes).every(lit(5).minutes).on(col('rowtime')).alias('w')``."""

    @classmethod
    def over(cls, size: Expression) -> 'SlideWithSize':
        """The windows' size, a time interval (``lit(10).minutes``)."""
        return SlideWithSize(size)


class SlideWithSize:
    """A sliding window of its size, before the slide (``every``)."""

    def __init__(self, size: Expression):
        self._size = size

    def every(self, slide: Expression) -> _WithIntervals:
        """How often a window starts, a time interval (``lit(5).minutes``)."""
        return _WithIntervals('HOP', slide, self._size)


class Session:
    """Session windows: the rows of a key closer in time than the gap, one window.
    ``Session.with_gap(lit(10).minutes).on(col('rowtime')).alias('w')``."""

    @classmethod
    def with_gap(cls, gap: Expression) -> _WithIntervals:
        """The time of inactivity that closes a session (``lit(10).minutes``)."""
        return _WithIntervals('SESSION', gap)


class OverWindow:
    """An over window (``Over.partition_by(...).order_by(...).preceding(...).alias(...)``):
    ``Table.over_window`` is not available here; SQL's OVER windows neither."""

    def __init__(self, alias: str):
        self._alias = alias


class Over:
    """Over windows of the Table API, for ``Table.over_window`` (not available here)."""

    @classmethod
    def order_by(cls, order_by: Expression) -> '_OverBuilder':
        return _OverBuilder()

    @classmethod
    def partition_by(cls, *partition_by: Expression) -> '_OverBuilder':
        return _OverBuilder()


class _OverBuilder:
    """An over window being defined."""

    def order_by(self, order_by: Expression) -> '_OverBuilder':
        return self

    def preceding(self, preceding: Expression) -> '_OverBuilder':
        return self

    def following(self, following: Expression) -> '_OverBuilder':
        return self

    def alias(self, alias: str) -> OverWindow:
        return OverWindow(alias)
