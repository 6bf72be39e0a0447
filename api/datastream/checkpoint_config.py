"""CheckpointConfig, as in ``pyflink.datastream.checkpoint_config``: a view over the
environment's configuration, so a setting made here and the same key given in the
``Configuration`` of ``get_execution_environment`` are one and the same.

The engine reads the settings through this module: ``CheckpointConfig(conf)`` getters and
``checkpoint_directory``, ``savepoint_directory`` and ``num_retained``."""
import re
from enum import Enum
from typing import Dict, Optional, Union

from api.common.time import Duration
from .checkpoint_storage import CheckpointStorage, FileSystemCheckpointStorage, local_path
from .checkpointing_mode import CheckpointingMode
from .externalized_checkpoint_retention import ExternalizedCheckpointRetention

__all__ = ['CheckpointConfig', 'ExternalizedCheckpointCleanup', 'checkpoint_directory',
           'savepoint_directory', 'num_retained']

INTERVAL = "execution.checkpointing.interval"
MODE = "execution.checkpointing.mode"
TIMEOUT = "execution.checkpointing.timeout"
MIN_PAUSE = "execution.checkpointing.min-pause"
MAX_CONCURRENT = "execution.checkpointing.max-concurrent-checkpoints"
TOLERABLE_FAILURES = "execution.checkpointing.tolerable-failed-checkpoints"
EXTERNALIZED_RETENTION = "execution.checkpointing.externalized-checkpoint-retention"
UNALIGNED = "execution.checkpointing.unaligned.enabled"
FORCE_UNALIGNED = "execution.checkpointing.unaligned.forced"
ALIGNED_TIMEOUT = "execution.checkpointing.aligned-checkpoint-timeout"
# (key the setters write, Flink 2.x key also read; the 2.x key wins, as in Flink 2.x)
CHECKPOINTS_DIR = ("state.checkpoints.dir", "execution.checkpointing.dir")
SAVEPOINTS_DIR = ("state.savepoints.dir", "execution.checkpointing.savepoint-dir")
NUM_RETAINED = ("state.checkpoints.num-retained", "execution.checkpointing.num-retained")

_MAX_INT = 2147483647


class ExternalizedCheckpointCleanup(Enum):
    """What happens to a job's checkpoints when the job is cancelled (PyFlink 1.x name of
    ``ExternalizedCheckpointRetention``).

    DELETE_ON_CANCELLATION: deleted on cancellation (kept if the job fails).
    RETAIN_ON_CANCELLATION: kept; delete them yourself.
    NO_EXTERNALIZED_CHECKPOINTS: externalized checkpoints are disabled.
    """

    DELETE_ON_CANCELLATION = 0
    RETAIN_ON_CANCELLATION = 1
    NO_EXTERNALIZED_CHECKPOINTS = 2


class CheckpointConfig:
    """All checkpointing settings of a job, e.g.
    ``env.get_checkpoint_config().set_checkpoint_storage_dir("file:///tmp/checkpoints")``.

    Checkpointing is off until an interval is set: ``get_checkpoint_interval()`` is -1 and
    ``get_checkpointing_mode()`` AT_LEAST_ONCE, as in PyFlink 2.x. Once enabled, the mode
    defaults to EXACTLY_ONCE.
    """

    DEFAULT_MODE = CheckpointingMode.EXACTLY_ONCE
    DEFAULT_TIMEOUT = 10 * 60 * 1000
    DEFAULT_MIN_PAUSE_BETWEEN_CHECKPOINTS = 0
    DEFAULT_MAX_CONCURRENT_CHECKPOINTS = 1

    def __init__(self, conf: Dict[str, str]):
        self._conf = conf
        self._storage: Optional[CheckpointStorage] = None

    # --- interval and mode --------------------------------------------------------
    def is_checkpointing_enabled(self) -> bool:
        return self.get_checkpoint_interval() > 0

    def get_checkpoint_interval(self) -> int:
        """The checkpoint interval in milliseconds, -1 if checkpointing is disabled."""
        interval = _millis(self._conf, INTERVAL, -1)
        return interval if interval > 0 else -1

    def set_checkpoint_interval(self, checkpoint_interval: int) -> 'CheckpointConfig':
        """Sets the interval (ms, at least 10) between checkpoints; a checkpoint is taken
        at the end of the first micro-batch past each interval."""
        self._conf[INTERVAL] = _check_int(
            "checkpoint_interval", checkpoint_interval, 10,
            "Checkpoint interval must be larger than or equal to 10 ms")
        return self

    def get_checkpointing_mode(self) -> CheckpointingMode:
        """EXACTLY_ONCE or AT_LEAST_ONCE; AT_LEAST_ONCE while checkpointing is disabled."""
        if not self.is_checkpointing_enabled():
            return CheckpointingMode.AT_LEAST_ONCE
        return _enum(self._conf, MODE, CheckpointingMode, self.DEFAULT_MODE)

    def set_checkpointing_mode(self, checkpointing_mode: CheckpointingMode) -> 'CheckpointConfig':
        """Sets the mode:
        ``config.set_checkpointing_mode(CheckpointingMode.AT_LEAST_ONCE)``."""
        _check_type("checkpointing_mode", checkpointing_mode, CheckpointingMode)
        self._conf[MODE] = checkpointing_mode.name
        return self

    # --- timing and failures (recorded: a micro-batch checkpoint cannot overlap another)
    def get_checkpoint_timeout(self) -> int:
        return _millis(self._conf, TIMEOUT, self.DEFAULT_TIMEOUT)

    def set_checkpoint_timeout(self, checkpoint_timeout: int) -> 'CheckpointConfig':
        """Sets the time (ms, at least 10) a checkpoint may take before it is discarded."""
        self._conf[TIMEOUT] = _check_int(
            "checkpoint_timeout", checkpoint_timeout, 10,
            "Checkpoint timeout must be larger than or equal to 10 ms")
        return self

    def get_min_pause_between_checkpoints(self) -> int:
        return _millis(self._conf, MIN_PAUSE, self.DEFAULT_MIN_PAUSE_BETWEEN_CHECKPOINTS)

    def set_min_pause_between_checkpoints(self,
                                          min_pause_between_checkpoints: int) -> 'CheckpointConfig':
        """Sets the minimal pause (ms) between the end of one checkpoint and the next."""
        self._conf[MIN_PAUSE] = _check_int(
            "min_pause_between_checkpoints", min_pause_between_checkpoints, 0,
            "Pause value must be zero or positive")
        return self

    def get_max_concurrent_checkpoints(self) -> int:
        return _int(self._conf, MAX_CONCURRENT, self.DEFAULT_MAX_CONCURRENT_CHECKPOINTS)

    def set_max_concurrent_checkpoints(self, max_concurrent_checkpoints: int) -> 'CheckpointConfig':
        """Sets how many checkpoints may be in progress at once (at least 1)."""
        self._conf[MAX_CONCURRENT] = _check_int(
            "max_concurrent_checkpoints", max_concurrent_checkpoints, 1,
            "The maximum number of concurrent attempts must be at least one.")
        return self

    def get_tolerable_checkpoint_failure_number(self) -> int:
        return _int(self._conf, TOLERABLE_FAILURES, 0)

    def set_tolerable_checkpoint_failure_number(
            self, tolerable_checkpoint_failure_number: int) -> 'CheckpointConfig':
        """Sets how many consecutive checkpoint failures are tolerated before the job fails
        (default 0)."""
        self._conf[TOLERABLE_FAILURES] = _check_int(
            "tolerable_checkpoint_failure_number", tolerable_checkpoint_failure_number, 0,
            "The tolerable failure checkpoint number must be non-negative.")
        return self

    def is_fail_on_checkpointing_errors(self) -> bool:
        """True if no checkpoint failure is tolerated (deprecated: use
        ``get_tolerable_checkpoint_failure_number``)."""
        return self.get_tolerable_checkpoint_failure_number() == 0

    def set_fail_on_checkpointing_errors(self,
                                         fail_on_checkpointing_errors: bool) -> 'CheckpointConfig':
        """True tolerates no checkpoint failure, False tolerates any number (deprecated: use
        ``set_tolerable_checkpoint_failure_number``)."""
        return self.set_tolerable_checkpoint_failure_number(
            0 if fail_on_checkpointing_errors else _MAX_INT)

    # --- externalized checkpoints -------------------------------------------------------
    def set_externalized_checkpoint_retention(
            self, retention_mode: ExternalizedCheckpointRetention) -> 'CheckpointConfig':
        """Sets whether checkpoints are kept when the job is cancelled, e.g.
        ``ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION``."""
        _check_type("retention_mode", retention_mode,
                    (ExternalizedCheckpointRetention, ExternalizedCheckpointCleanup))
        self._conf[EXTERNALIZED_RETENTION] = retention_mode.name
        return self

    def get_externalized_checkpoint_retention(self) -> ExternalizedCheckpointRetention:
        return _enum(self._conf, EXTERNALIZED_RETENTION, ExternalizedCheckpointRetention,
                     ExternalizedCheckpointRetention.NO_EXTERNALIZED_CHECKPOINTS)

    def set_externalized_checkpoint_cleanup(
            self, cleanup_mode: ExternalizedCheckpointCleanup) -> 'CheckpointConfig':
        """PyFlink 1.x name of ``set_externalized_checkpoint_retention``."""
        _check_type("cleanup_mode", cleanup_mode,
                    (ExternalizedCheckpointCleanup, ExternalizedCheckpointRetention))
        return self.set_externalized_checkpoint_retention(cleanup_mode)

    def enable_externalized_checkpoints(
            self, cleanup_mode: ExternalizedCheckpointCleanup) -> 'CheckpointConfig':
        """Deprecated since 1.15: use ``set_externalized_checkpoint_cleanup``."""
        return self.set_externalized_checkpoint_cleanup(cleanup_mode)

    def get_externalized_checkpoint_cleanup(self) -> Optional[ExternalizedCheckpointCleanup]:
        """The cleanup mode, or None if none is configured."""
        if EXTERNALIZED_RETENTION not in self._conf:
            return None
        return _enum(self._conf, EXTERNALIZED_RETENTION, ExternalizedCheckpointCleanup, None)

    def is_externalized_checkpoints_enabled(self) -> bool:
        return self.get_externalized_checkpoint_retention() is not \
            ExternalizedCheckpointRetention.NO_EXTERNALIZED_CHECKPOINTS

    # --- unaligned checkpoints: recorded only ---------------------------------------
    def enable_unaligned_checkpoints(self, enabled: bool = True) -> 'CheckpointConfig':
        """Recorded only: a checkpoint here is taken between micro-batches, when no record
        is in flight, so there are no barriers to align and nothing to gain from unaligned
        checkpoints."""
        self._conf[UNALIGNED] = _bool_string(enabled)
        return self

    def disable_unaligned_checkpoints(self) -> 'CheckpointConfig':
        """Recorded only (see ``enable_unaligned_checkpoints``)."""
        return self.enable_unaligned_checkpoints(False)

    def is_unaligned_checkpoints_enabled(self) -> bool:
        """True if enabled and the mode is EXACTLY_ONCE (the only mode they apply to)."""
        return self._conf.get(UNALIGNED, "false").lower() == "true" and \
            self.get_checkpointing_mode() is CheckpointingMode.EXACTLY_ONCE

    def set_force_unaligned_checkpoints(self,
                                        force_unaligned_checkpoints: bool = True
                                        ) -> 'CheckpointConfig':
        """Recorded only: micro-batches have no barriers to align."""
        self._conf[FORCE_UNALIGNED] = _bool_string(force_unaligned_checkpoints)
        return self

    def is_force_unaligned_checkpoints(self) -> bool:
        return self._conf.get(FORCE_UNALIGNED, "false").lower() == "true"

    def set_aligned_checkpoint_timeout(self, alignment_timeout: Duration) -> 'CheckpointConfig':
        """Recorded only: micro-batches have no barriers to align."""
        _check_type("alignment_timeout", alignment_timeout, Duration)
        self._conf[ALIGNED_TIMEOUT] = str(alignment_timeout.to_milliseconds())
        return self

    def get_aligned_checkpoint_timeout(self) -> Duration:
        return Duration.of_millis(_millis(self._conf, ALIGNED_TIMEOUT, 0))

    def set_alignment_timeout(self, alignment_timeout: Duration) -> 'CheckpointConfig':
        """Deprecated in 2.0: use ``set_aligned_checkpoint_timeout``."""
        return self.set_aligned_checkpoint_timeout(alignment_timeout)

    def get_alignment_timeout(self) -> Duration:
        """Deprecated in 2.0: use ``get_aligned_checkpoint_timeout``."""
        return self.get_aligned_checkpoint_timeout()

    # --- storage ----------------------------------------------------------------------
    def set_checkpoint_storage(self, storage: Union[CheckpointStorage, str]) -> 'CheckpointConfig':
        """Sets where checkpoints are written, e.g.
        ``config.set_checkpoint_storage(FileSystemCheckpointStorage("file:///checkpoints"))``;
        a string is taken as a ``FileSystemCheckpointStorage`` path."""
        if isinstance(storage, str):
            storage = FileSystemCheckpointStorage(storage)
        _check_type("storage", storage, CheckpointStorage)
        if storage.get_checkpoint_path() is not None:
            configure(self._conf, CHECKPOINTS_DIR, storage.get_checkpoint_path())
        self._storage = storage
        return self

    def set_checkpoint_storage_dir(self, checkpoint_path: str) -> 'CheckpointConfig':
        """Writes checkpoints to this directory (a ``FileSystemCheckpointStorage``)."""
        return self.set_checkpoint_storage(FileSystemCheckpointStorage(checkpoint_path))

    def get_checkpoint_storage(self) -> Optional[CheckpointStorage]:
        """The storage set for the job, a ``FileSystemCheckpointStorage`` if only a
        checkpoint directory is configured, or None."""
        if self._storage is not None:
            return self._storage
        directory = configured(self._conf, CHECKPOINTS_DIR)
        return FileSystemCheckpointStorage(directory) if directory is not None else None


def checkpoint_directory(conf: Dict[str, str]) -> Optional[str]:
    """The local path of the configured checkpoint directory (``file://`` stripped), or
    None."""
    directory = configured(conf, CHECKPOINTS_DIR)
    return local_path(directory) if directory is not None else None


def savepoint_directory(conf: Dict[str, str]) -> Optional[str]:
    """The local path of the configured default savepoint directory, or None."""
    directory = configured(conf, SAVEPOINTS_DIR)
    return local_path(directory) if directory is not None else None


def num_retained(conf: Dict[str, str]) -> int:
    """How many completed checkpoints to keep (default 1)."""
    key = NUM_RETAINED[1] if NUM_RETAINED[1] in conf else NUM_RETAINED[0]
    value = _int(conf, key, 1)
    if value < 1:
        raise ValueError(f"'{key}' must be at least 1, got {value}")
    return value


def configured(conf: Dict[str, str], keys) -> Optional[str]:
    """The value of a (key, Flink 2.x key) setting as configured; the 2.x key wins."""
    key, alias = keys
    return conf.get(alias, conf.get(key))


def configure(conf: Dict[str, str], keys, value: str) -> None:
    """Sets a (key, Flink 2.x key) setting."""
    key, alias = keys
    conf[key] = value
    conf.pop(alias, None)   # else the Flink 2.x key would still win on reading


def _check_int(name: str, value, minimum: int, message: str) -> str:
    """``value`` as a configuration string if it is an int of at least ``minimum``."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if value < minimum:
        raise ValueError(message)
    return str(value)


def _check_type(name: str, value, types) -> None:
    if not isinstance(value, types):
        expected = " or ".join(t.__name__ for t in types) if isinstance(types, tuple) \
            else types.__name__
        raise TypeError(f"{name} must be a {expected}, got {value!r}")


def _bool_string(value: bool) -> str:
    return "true" if value else "false"


def _int(conf: Dict[str, str], key: str, default: int) -> int:
    value = conf.get(key)
    if value is None:
        return default
    try:
        return int(str(value).strip())
    except ValueError:
        raise ValueError(f"Invalid value {value!r} for '{key}': expected an integer") from None


def _enum(conf: Dict[str, str], key: str, enum_type, default):
    value = conf.get(key)
    if value is None:
        return default
    try:
        return enum_type[str(value).strip().upper()]
    except KeyError:
        raise ValueError(f"Invalid value {value!r} for '{key}': expected one of "
                         f"{', '.join(enum_type.__members__)}") from None


_DURATION = re.compile(r"^\s*(\d+)\s*([a-zµ]*)\s*$")
_UNIT_MILLIS = {
    **dict.fromkeys(("", "ms", "milli", "millis", "millisecond", "milliseconds"), 1),
    **dict.fromkeys(("s", "sec", "secs", "second", "seconds"), 1000),
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), 60_000),
    **dict.fromkeys(("h", "hour", "hours"), 3_600_000),
    **dict.fromkeys(("d", "day", "days"), 86_400_000),
}


def _millis(conf: Dict[str, str], key: str, default: int) -> int:
    """A duration setting in ms: a number of ms or Flink's duration syntax ("5 s", "1min")."""
    value = conf.get(key)
    if value is None:
        return default
    match = _DURATION.match(str(value).lower())
    if match is None or match.group(2) not in _UNIT_MILLIS:
        raise ValueError(f"Invalid duration {value!r} for '{key}': expected e.g. '5000', "
                         f"'500 ms', '10 s' or '1 min'")
    return int(match.group(1)) * _UNIT_MILLIS[match.group(2)]
