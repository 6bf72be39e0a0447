"""Walking an operator's input chunk.

In a job that uses time, each element is ``(timestamp, value)`` (Flink's StreamRecord;
the timestamp may be None); otherwise elements are the values themselves. A keyed
operator receives ``(key, element)`` pairs. A ``Cursor`` hides these shapes: it yields
the values, keeps the current element's ``timestamp`` and sets the backend's current key,
and its ``collector`` wraps outputs with the current timestamp again.
"""


class Cursor:
    """Iterates an operator's input chunks; one per operator instance."""

    def __init__(self, timed: bool, backend=None):
        self.timestamp = None
        self._timed = timed
        if backend is None:
            self.records = self._timed_records if timed else _plain_records
        else:
            self._set_key = backend.set_current_key
            self.records = self._timed_keyed_records if timed else self._keyed_records

    def collector(self, out: list):
        """The function that adds an output value to ``out``, stamped with the current
        element's timestamp in a timed job."""
        if not self._timed:
            return out.append
        append = out.append
        return lambda value: append((self.timestamp, value))

    def _timed_records(self, chunk):
        for self.timestamp, value in chunk:
            yield value

    def _keyed_records(self, pairs):
        set_key = self._set_key
        for key, value in pairs:
            set_key(key)
            yield value

    def _timed_keyed_records(self, pairs):
        set_key = self._set_key
        for key, (self.timestamp, value) in pairs:
            set_key(key)
            yield value


def _plain_records(chunk):
    return chunk
