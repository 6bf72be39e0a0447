"""Time, Duration and Instant, as in ``pyflink.common.time``."""

from core import codec

__all__ = ['Duration', 'Instant', 'Time']

_NANOS_PER_MILLI = 1_000_000


class Duration(object):
    """A time-based amount of time, such as '34.5 seconds'; ``Duration.of_seconds(5)``."""

    def __init__(self, nanos: int):
        self._nanos = nanos

    @staticmethod
    def of_days(days: int) -> 'Duration':
        return Duration(days * 86_400_000_000_000)

    @staticmethod
    def of_hours(hours: int) -> 'Duration':
        return Duration(hours * 3_600_000_000_000)

    @staticmethod
    def of_minutes(minutes: int) -> 'Duration':
        return Duration(minutes * 60_000_000_000)

    @staticmethod
    def of_seconds(seconds: int) -> 'Duration':
        return Duration(seconds * 1_000_000_000)

    @staticmethod
    def of_millis(millis: int) -> 'Duration':
        return Duration(millis * _NANOS_PER_MILLI)

    @staticmethod
    def of_nanos(nanos: int) -> 'Duration':
        return Duration(nanos)

    def to_milliseconds(self) -> int:
        """Returns the length in milliseconds, rounded down like Java's ``Duration.toMillis``."""
        return self._nanos // _NANOS_PER_MILLI

    def to_nanos(self) -> int:
        """Returns the length in nanoseconds."""
        return self._nanos

    def __eq__(self, other):
        return isinstance(other, Duration) and self._nanos == other._nanos

    def __hash__(self):
        return hash(self._nanos)

    def __repr__(self):
        return 'Duration.of_nanos(%d)' % self._nanos


class Instant(object):
    """An instantaneous point on the time-line: seconds and nanoseconds since the epoch."""

    def __init__(self, seconds: int, nanos: int):
        self.seconds = seconds
        self.nanos = nanos

    def to_epoch_milli(self) -> int:
        return self.seconds * 1000 + self.nanos // _NANOS_PER_MILLI

    @staticmethod
    def of_epoch_milli(epoch_milli: int) -> 'Instant':
        seconds, millis = divmod(epoch_milli, 1000)
        return Instant(seconds, millis * _NANOS_PER_MILLI)

    def __eq__(self, other):
        return (isinstance(other, Instant) and self.seconds == other.seconds
                and self.nanos == other.nanos)

    def __hash__(self):
        return hash((self.seconds, self.nanos))

    def __repr__(self):
        return 'Instant<{}, {}>'.format(self.seconds, self.nanos)


class Time(object):
    """A time interval, e.g. a window size: ``Time.seconds(5)``."""

    def __init__(self, milliseconds: int):
        self._milliseconds = milliseconds

    def to_milliseconds(self) -> int:
        return self._milliseconds

    @staticmethod
    def milliseconds(milliseconds: int) -> 'Time':
        return Time(milliseconds)

    @staticmethod
    def seconds(seconds: int) -> 'Time':
        return Time(seconds * 1000)

    @staticmethod
    def minutes(minutes: int) -> 'Time':
        return Time(minutes * 60_000)

    @staticmethod
    def hours(hours: int) -> 'Time':
        return Time(hours * 3_600_000)

    @staticmethod
    def days(days: int) -> 'Time':
        return Time(days * 86_400_000)

    def __eq__(self, other):
        return isinstance(other, Time) and self._milliseconds == other._milliseconds

    def __hash__(self):
        return hash(self._milliseconds)

    def __str__(self):
        return '{} ms'.format(self._milliseconds)

    def __repr__(self):
        return 'Time.milliseconds(%d)' % self._milliseconds


codec.register_data_class(Instant, codec.INSTANT, lambda i: [i.seconds, i.nanos],
                          lambda fields: Instant(*fields))
