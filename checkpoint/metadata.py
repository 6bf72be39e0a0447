"""What a committed micro-batch, a checkpoint or a savepoint records about a job.

The driver writes one ``CommitRecord`` per committed batch (the metadata log) and
the same record as the ``_metadata`` of every checkpoint and savepoint. It holds
everything besides keyed state that a restart needs: where each source split
stands, the watermark, and the job's stateful operators, which a restore checks
against the new program before any task runs.

On disk a record is data (``to_data``: a dict of plain values with the schema
version ``format_version``), never a pickle: ``from_data`` checks its shape and
version and names the file when it does not fit.
"""
from __future__ import annotations

import reprlib
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Dict, Optional

__all__ = ["FORMAT_VERSION", "OperatorInfo", "CommitRecord", "IncompatibleCheckpointError"]

FORMAT_VERSION = 3  # 2: source positions per split id; 3: stored as data, not pickled
MAX_PARALLELISM_LIMIT = 1 << 15  # Flink's upper bound of an operator's max parallelism
LONG_MIN, LONG_MAX = -(1 << 63), (1 << 63) - 1  # watermarks and positions are Java longs


class IncompatibleCheckpointError(Exception):
    """A checkpoint or savepoint does not fit the job that tries to restore it."""


@dataclass(frozen=True)
class OperatorInfo:
    """A stateful operator as stored: name, parallelism and max parallelism."""

    name: str
    parallelism: int
    max_parallelism: int


@dataclass
class CommitRecord:
    """One committed batch: source offsets, watermark and keyed operators (by uid).

    ``batch_id`` is also the version of every operator's keyed state.
    """

    job_name: str
    batch_id: int
    state_backend: str
    operators: Dict[str, OperatorInfo]
    source_offsets: Dict[str, Dict[str, Any]]  # source uid -> split -> position
    watermark: int
    watermark_tracker: Optional[Dict[str, Any]] = None
    format_version: int = FORMAT_VERSION
    extra: Dict[str, Any] = field(default_factory=dict)  # e.g. restored_from: a savepoint

    def to_data(self) -> Dict[str, Any]:
        """The record as data (``checkpoint.files.write_checked`` stores it)."""
        data = asdict(self)
        data["operators"] = {uid: [o.name, o.parallelism, o.max_parallelism]
                             for uid, o in self.operators.items()}
        return data

    @classmethod
    def from_data(cls, path: str, data: Any) -> "CommitRecord":
        """The record ``to_data`` gave, read from ``path``; IncompatibleCheckpointError if
        it is not one or has another format version."""
        names = [f.name for f in fields(cls)]
        if not isinstance(data, dict) or not set(data) <= set(names) or "batch_id" not in data:
            raise IncompatibleCheckpointError(f"{path} is not checkpoint metadata of this "
                                              "engine")
        version = data.get("format_version")
        if version != FORMAT_VERSION:
            raise IncompatibleCheckpointError(
                f"{path} was written in state format {version}; this version of "
                f"spark-datastream reads format {FORMAT_VERSION}")
        try:
            operators = {uid: OperatorInfo(*info) for uid, info in data["operators"].items()}
            record = cls(**dict(data, operators=operators))
        except (KeyError, TypeError, AttributeError) as e:
            raise IncompatibleCheckpointError(
                f"{path} is not checkpoint metadata of this engine: {e}") from e
        record._check(path)
        return record

    def _check(self, path: str) -> None:
        """Every field read from a file is what this engine writes, before anything uses
        it (a max parallelism of 2**40 would have the driver loop over it): an
        IncompatibleCheckpointError names the file and the field otherwise."""
        def bad(name: str, value: Any, wanted: str) -> None:
            raise IncompatibleCheckpointError(
                f"{path} is not checkpoint metadata of this engine: {name} is "
                f"{reprlib.repr(value)}, not {wanted}")

        def integer(name: str, value: Any, low: int, high: int) -> None:
            if type(value) is not int or not low <= value <= high:
                bad(name, value, f"a whole number from {low} to {high}")

        def mapping(name: str, value: Any, optional: bool = False) -> None:
            if not (isinstance(value, dict) and all(type(k) is str for k in value)) and \
                    not (optional and value is None):
                bad(name, value, "a map with string keys")
        for name in ("job_name", "state_backend"):
            if type(getattr(self, name)) is not str:
                bad(name, getattr(self, name), "a string")
        integer("batch_id", self.batch_id, 0, LONG_MAX)
        integer("watermark", self.watermark, LONG_MIN, LONG_MAX)
        mapping("operators", self.operators)
        for uid, info in self.operators.items():
            if type(info.name) is not str:
                bad(f"operators[{uid!r}].name", info.name, "a string")
            integer(f"operators[{uid!r}].max_parallelism", info.max_parallelism, 1,
                    MAX_PARALLELISM_LIMIT)
            integer(f"operators[{uid!r}].parallelism", info.parallelism, 1,
                    MAX_PARALLELISM_LIMIT)
        mapping("source_offsets", self.source_offsets)
        for uid, positions in self.source_offsets.items():
            mapping(f"source_offsets[{uid!r}]", positions)
            for split, position in positions.items():
                if type(position) is int:
                    integer(f"source_offsets[{uid!r}][{split!r}]", position, LONG_MIN,
                            LONG_MAX)
                elif position is not None and type(position) not in (str, list):
                    bad(f"source_offsets[{uid!r}][{split!r}]", position,
                        "a position (a whole number, a string, a list or none)")
        mapping("watermark_tracker", self.watermark_tracker, optional=True)
        mapping("extra", self.extra)

    def check_restorable_by(self, path: str, operators: Dict[str, OperatorInfo],
                            sources: Dict[str, int], allow_non_restored_state: bool) -> None:
        """Fails with a precise message if a job with these keyed ``operators`` and
        ``sources`` (uid -> split ids, or None for a source whose splits
        are names that do not depend on the parallelism) cannot continue from this record."""
        for uid, stored in self.operators.items():
            current = operators.get(uid)
            if current is None:
                if allow_non_restored_state:
                    continue
                raise IncompatibleCheckpointError(
                    f"Cannot restore {path}: it holds state of operator {uid!r} "
                    f"({stored.name}), which the job does not have. Give the operator the "
                    "same uid() as before, or set 'execution.savepoint.ignore-unclaimed-state' "
                    "to true to drop that state.")
            if current.max_parallelism != stored.max_parallelism:
                raise IncompatibleCheckpointError(
                    f"Cannot restore {path}: operator {uid!r} ({current.name}) was checkpointed "
                    f"with max parallelism {stored.max_parallelism} and now has "
                    f"{current.max_parallelism}; the max parallelism of a stateful operator "
                    "cannot change.")
        for uid, positions in self.source_offsets.items():
            if uid not in sources:
                raise IncompatibleCheckpointError(
                    f"Cannot restore {path}: it holds the position of source {uid!r}, which "
                    "the job does not have (give the source the same uid() as before).")
            splits = sources[uid]
            if splits is not None and sorted(splits) != sorted(positions):
                raise IncompatibleCheckpointError(
                    f"Cannot restore {path}: source {uid!r} had {len(positions)} splits "
                    f"(parallelism) and now has {len(splits)}; keep the source's parallelism "
                    "(keyed operators may change theirs).")
