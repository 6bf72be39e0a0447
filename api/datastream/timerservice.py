"""TimerService, as in ``pyflink.datastream.timerservice``."""
from abc import ABC, abstractmethod

__all__ = ["TimerService"]


class TimerService(ABC):
    """Interface for querying time and registering timers."""

    @abstractmethod
    def current_processing_time(self) -> int:
        """Returns the current processing time in epoch milliseconds."""

    @abstractmethod
    def current_watermark(self) -> int:
        """Returns the current event-time watermark."""

    @abstractmethod
    def register_processing_time_timer(self, timestamp: int):
        """Registers a timer to fire when processing time passes ``timestamp``."""

    @abstractmethod
    def register_event_time_timer(self, timestamp: int):
        """Registers a timer to fire when the watermark passes ``timestamp``."""

    @abstractmethod
    def delete_processing_time_timer(self, timestamp: int):
        """Deletes a processing-time timer registered for the current key."""

    @abstractmethod
    def delete_event_time_timer(self, timestamp: int):
        """Deletes an event-time timer registered for the current key."""
