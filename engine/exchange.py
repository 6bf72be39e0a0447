"""How records cross from one stage to the next: the payload of a ``DataChunk``.

A task pickles the records it routed to each target after the batch, once; the
payload is those bytes, or on Spark with a local master the file that holds them
(``ExchangeFile``), whose name alone then travels through Spark's shuffle.
"""
import io
import os
import pickle
from typing import Optional

from .batch import ExchangeFile
from .errors import OperatorError


def pickled(operator: str, records: list) -> bytes:
    """Pickles a chunk once, here: Spark's filter and shuffle then move bytes only."""
    try:
        try:
            return _pickled_without_memo(records)
        except ValueError:  # a record refers to itself: it needs the memo
            return pickle.dumps(records, pickle.HIGHEST_PROTOCOL)
    except Exception as e:
        bad = next((r for r in records if not _picklable(r)), records[0])
        cause = TypeError(f"the record cannot be pickled to reach the next stage: {e}")
        raise OperatorError.wrap(operator, bad, cause) from None


def payload_of(data: bytes, exchange_dir: Optional[str], name: str):
    """The payload of pickled ``data``: the bytes, or the file ``exchange_dir/name``
    holding them (written whole or not at all: a task run twice writes the same bytes
    again)."""
    if exchange_dir is None:
        return data
    path = os.path.join(exchange_dir, name)
    partial = f"{path}.{os.getpid()}"
    with open(partial, "wb") as f:
        f.write(data)
    os.replace(partial, path)
    return ExchangeFile(path)


def records_of(payload) -> list:
    """The records of a payload."""
    if isinstance(payload, ExchangeFile):
        with open(payload.path, "rb") as f:
            payload = f.read()
    return pickle.loads(payload)


def _pickled_without_memo(records: list) -> bytes:
    """The pickler's "fast" mode: no memo of the objects written. Records are trees of
    small objects, whose memo entries made up most of the pickling time (~6x faster
    without); a shared object is written once per reference (a shuffle does not keep
    identity: Flink's serializers do not either). A cycle raises ValueError."""
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, pickle.HIGHEST_PROTOCOL)
    pickler.fast = True
    pickler.dump(records)
    return buffer.getvalue()


def _picklable(record) -> bool:
    try:
        pickle.dumps(record, pickle.HIGHEST_PROTOCOL)
        return True
    except Exception:
        return False
