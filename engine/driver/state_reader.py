"""Reading keyed state offline, from a checkpoint or savepoint (beyond PyFlink, in the
spirit of Flink's State Processor API).

    rows = read_keyed_state("/savepoints/savepoint-1a2b3c-...", "counter", "count")
    df = read_keyed_state("/checkpoints/My Job", "counter", "count", spark=session)

``path`` may be a checkpoint (``chk-<n>``), a savepoint, or a job's checkpoint
directory (``<state.checkpoints.dir>/<job name>``), which reads its newest
committed batch. Nothing is written.
"""
from __future__ import annotations

import os
from typing import Any, Hashable, List, NamedTuple

from checkpoint.job_directory import METADATA_FILE, JobDirectory, RestorePoint, \
    read_restore_point
from core.state_spec import STORED_KINDS, StateSpec
from statebackends.base import PickledStateError
from statebackends.ttl import without_timestamps

from engine.runtime.state_backends import restore_backend

__all__ = ["KeyedStateRow", "read_keyed_state", "open_restore_point"]


class KeyedStateRow(NamedTuple):
    """One entry of a keyed state: its key, namespace (a window, or None) and value."""

    key: Hashable
    namespace: Any
    value: Any


def open_restore_point(path: str) -> RestorePoint:
    """The checkpoint or savepoint at ``path``, or the newest restore point of a job
    directory."""
    if os.path.exists(os.path.join(path, METADATA_FILE)) or path.endswith(METADATA_FILE):
        return read_restore_point(path)
    point = JobDirectory(path).find_restore_point()
    if point is None:
        raise FileNotFoundError(f"{path} holds no checkpoint, savepoint or committed batch")
    return point


def read_keyed_state(path: str, operator_uid: str, state_name: str, spark=None,
                     allow_pickled: bool = False):
    """The entries of keyed state ``state_name`` of the operator with uid
    ``operator_uid``, as a list of KeyedStateRow; as a Spark DataFrame with columns
    key, namespace, value when a SparkSession is given as ``spark``. Values of a state
    with time-to-live come without their timestamps, expired or not. Pickled keys and
    values (of untyped state) are unpickled only if ``allow_pickled`` (only for state
    you trust: unpickling runs code that its writer chose); else they raise
    ``statebackends.base.PickledStateError``, and nothing runs."""
    try:
        return _read_keyed_state(path, operator_uid, state_name, spark, allow_pickled)
    except PickledStateError as e:
        if allow_pickled:
            raise
        raise PickledStateError(f"{e}. read_keyed_state() unpickles only when called with "
                                "allow_pickled=True") from None


def _read_keyed_state(path: str, operator_uid: str, state_name: str, spark,
                      allow_pickled: bool):
    point = open_restore_point(path)
    record = point.record
    info = record.operators.get(operator_uid)
    if info is None:
        raise KeyError(f"{point.path} has no keyed state of operator {operator_uid!r}; "
                       f"operators with keyed state: {sorted(record.operators)}")
    backend = restore_backend(record.state_backend, point.store, operator_uid,
                              (0, info.max_parallelism - 1), info.max_parallelism,
                              record.batch_id, allow_pickled=allow_pickled)
    try:
        kinds = backend.state_kinds()
        if state_name not in kinds:
            raise KeyError(f"operator {operator_uid!r} in {point.path} has no state "
                           f"{state_name!r}; its states: {sorted(kinds)}")
        kind, with_ttl = STORED_KINDS[kinds[state_name]]
        # Registered as pickled, so that its pickled values are read (if allowed).
        backend.state(StateSpec(state_name, kind, with_ttl=with_ttl, pickled=True))
        rows = [KeyedStateRow(key, namespace, value)
                for name, key, namespace, value in backend.entries() if name == state_name]
        if with_ttl:
            rows = [row._replace(value=without_timestamps(kind, row.value)) for row in rows]
    finally:
        backend.close()
    return rows if spark is None else _data_frame(spark, rows)


_SPARK_TYPES = ((bool, "boolean"), (int, "bigint"), (float, "double"), (str, "string"))


def _spark_type(values) -> str:
    """The Spark SQL type of a column's values, or None if they need converting to text
    (e.g. windows, lists)."""
    present = [v for v in values if v is not None]
    if not present:
        return "string"
    for python_type, spark_type in _SPARK_TYPES:
        if all(type(v) is python_type for v in present):
            return spark_type
    return None


def _data_frame(spark, rows: List[KeyedStateRow]):
    """Rows as a DataFrame; columns of other than bool, int, float or str become text."""
    columns = list(zip(*rows)) if rows else [()] * len(KeyedStateRow._fields)
    types = [_spark_type(values) for values in columns]
    columns = [values if spark_type else [None if v is None else str(v) for v in values]
               for values, spark_type in zip(columns, types)]
    schema = ", ".join(f"{name} {spark_type or 'string'}"
                       for name, spark_type in zip(KeyedStateRow._fields, types))
    return spark.createDataFrame(list(zip(*columns)), schema)
