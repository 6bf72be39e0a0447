"""How records cross from one stage to the next: the payload of a ``DataChunk``.

A router pickles the records it routes to a target in pieces, as they come
(``pickled``); the payload is the pieces' bytes, or on Spark with a local master
the file that holds them (``ExchangeFile``), whose name alone then travels through
Spark's shuffle. The next stage reads the payload back a piece at a time
(``records_of``). So neither the sending nor the receiving task holds a batch's
routed records all at once: their memory is used again, piece after piece, where a
batch in one piece put every record in fresh memory (W4: ~40,000 page faults per task
at ~3 us each here, and caches missed on records written long before they were read).
"""
import io
import os
import pickle
from typing import Iterator, List, Optional

from .batch import ExchangeFile
from .errors import OperatorError


def pickled(operator: str, records) -> bytes:
    """Pickles a piece of a chunk once, here: Spark's filter and shuffle then move bytes
    only."""
    try:
        try:
            return _pickled_without_memo(records)
        except ValueError:  # a record refers to itself: it needs the memo
            return pickle.dumps(records, pickle.HIGHEST_PROTOCOL)
    except Exception as e:
        bad = next((r for r in records if not _picklable(r)), next(iter(records)))
        cause = TypeError(f"the record cannot be pickled to reach the next stage: {e}")
        raise OperatorError.wrap(operator, bad, cause) from None


def payload_of(pieces: List[bytes], exchange_dir: Optional[str], name: str):
    """The payload of the ``pickled`` pieces of a chunk: their bytes, or the file
    ``exchange_dir/name`` holding them (written whole or not at all: a task run twice
    writes the same bytes again)."""
    if exchange_dir is None:
        return b"".join(pieces)
    path = os.path.join(exchange_dir, name)
    partial = f"{path}.{os.getpid()}"
    with open(partial, "wb") as f:
        f.writelines(pieces)
    os.replace(partial, path)
    return ExchangeFile(path)


def records_of(payload) -> Iterator:
    """The records of a payload, a piece at a time (a list, or a ``KeyedChunk``)."""
    if isinstance(payload, ExchangeFile):
        with open(payload.path, "rb") as f:
            payload = f.read()
    stream = io.BytesIO(payload)
    load = pickle.Unpickler(stream).load
    while stream.tell() < len(payload):
        yield load()


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
