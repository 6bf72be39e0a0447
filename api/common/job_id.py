"""JobID, as in ``pyflink.common.job_id``."""

__all__ = ['JobID']


class JobID:
    """Unique identifier of a job: 32 hex characters."""

    def __init__(self, hex_string: str):
        self._hex = hex_string

    def to_hex_string(self) -> str:
        return self._hex

    def __str__(self):
        return self._hex

    def __repr__(self):
        return self._hex

    def __eq__(self, other):
        return isinstance(other, JobID) and other._hex == self._hex

    def __hash__(self):
        return hash(self._hex)
