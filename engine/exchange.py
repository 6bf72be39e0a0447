"""How records cross from one stage to the next: the payload of a ``DataChunk``.

A router pickles a target's records as they come, a piece each time ``PIECE_RECORDS`` or
more are waiting (while they are still in the processor's cache), and a payload is the
pieces one after the other, each preceded by its length. The receiving task unpickles and
processes one piece at a time. On Spark with a local master the payload is left in a
file (``ExchangeFile``) and only the file's name travels through Spark's shuffle.
"""
import io
import os
import pickle
import struct
from typing import Iterator, List, Union

from .batch import ExchangeFile
from .errors import OperatorError

PIECE_RECORDS = 4096  # records waiting for a target before they are pickled
_LENGTH = struct.Struct("<I")


def pickled_piece(operator: str, records: list) -> bytes:
    """One piece of a payload: ``records`` pickled, after their length."""
    try:
        try:
            body = _pickled_without_memo(records)
        except ValueError:  # a record refers to itself: it needs the memo
            body = pickle.dumps(records, pickle.HIGHEST_PROTOCOL)
    except Exception as e:
        bad = next((r for r in records if not _picklable(r)), records[0])
        cause = TypeError(f"the record cannot be pickled to reach the next stage: {e}")
        raise OperatorError.wrap(operator, bad, cause) from None
    return _LENGTH.pack(len(body)) + body


def payload_of(pieces: List[bytes], exchange_dir: Union[str, None], name: str):
    """The payload of ``pieces``: their bytes, or the file ``exchange_dir/name`` holding
    them (written whole or not at all: a task run twice writes the same bytes again)."""
    if exchange_dir is None:
        return b"".join(pieces)
    path = os.path.join(exchange_dir, name)
    partial = f"{path}.{os.getpid()}"
    with open(partial, "wb") as f:
        f.writelines(pieces)
    os.replace(partial, path)
    return ExchangeFile(path)


def records_of(payload) -> Iterator[list]:
    """The pieces of a payload, unpickled one at a time."""
    if isinstance(payload, ExchangeFile):
        with open(payload.path, "rb") as f:
            payload = f.read()
    view = memoryview(payload)
    at, end = 0, len(view)
    while at < end:
        (size,) = _LENGTH.unpack_from(view, at)
        at += _LENGTH.size
        yield pickle.loads(view[at:at + size])
        at += size


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
