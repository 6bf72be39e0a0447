"""How records cross from one stage to the next: the payload of a ``DataChunk``.

A router pickles the records it routes to a target in pieces, as they come
(``pickled``); the payload is the pieces' bytes, or on Spark with a local master
the file that holds them (``ExchangeFile``), whose name alone then travels through
Spark's shuffle. The next stage reads the payload back a piece at a time
(``records_of``). So neither the sending nor the receiving task holds a batch's
routed records all at once: their memory is used again, piece after piece, where a
batch in one piece put every record in fresh memory (W4: ~40,000 page faults per task
at ~3 us each here, and caches missed on records written long before they were read).

With object reuse, where both subtasks run in one process, the pieces of a subtask's
chunk for its own partition index are never pickled: they stay in the process
(``kept``) until that subtask reads them.

Records converted to a declared type with a wire form (``TypeInformation.wire_form``:
basic types, tuples and rows of them) travel as msgpack of its schema instead
(``PieceCodec``: a third of pickle's time to write, as fast to read), each piece as a
pickled ``bytes``.
"""
import io
import os
import pickle
from typing import (Annotated, Any, Dict, Iterator, List, Optional, Tuple, Union, get_args,
                    get_origin)

import msgspec

from engine.batch import ExchangeFile, KeptChunk
from engine.errors import OperatorError
from engine.graph import HASH, JobPlan
from engine.runtime.operators.chunks import KeyedChunk

_kept: Dict[tuple, list] = {}  # KeptChunk key -> its pieces, until read


class PieceCodec:
    """The msgpack encoding of an edge's pieces of typed records: a list of elements, or
    a ``KeyedChunk`` with keys of a declared basic type, in their type's ``WireForm``
    (``api.common.typeinfo``)."""

    def __init__(self, wire, keyed: bool):
        elements = _unconstrained(wire.schema)  # (the sender converted every value: no
        self._keyed = keyed                     # range checks again, ~10 % faster)
        self._to_wire, self._from_wire = wire.to_wire, wire.from_wire
        self._encode = msgspec.msgpack.Encoder().encode
        self._decode = msgspec.msgpack.Decoder(
            Tuple[List[Any], elements] if keyed else elements).decode

    def encoded(self, piece) -> Optional[bytes]:
        """The piece's msgpack, or None if msgpack cannot hold it (an int beyond 64 bits,
        a lone surrogate) or its keys are not all scalars (a key that is not of its
        declared type: msgpack would give a tuple back as a list)."""
        if self._keyed and not set(map(type, piece.keys)) <= _SCALARS:
            return None
        elements = piece.elements if self._keyed else piece
        try:
            if self._to_wire is not None:
                elements = self._to_wire(elements)
            return self._encode((piece.keys, elements) if self._keyed else elements)
        except (TypeError, ValueError, OverflowError):
            return None

    def decoded(self, data: bytes):
        """The piece ``encoded`` gave ``data`` for."""
        keys, elements = self._decode(data) if self._keyed else (None, self._decode(data))
        if self._from_wire is not None:
            elements = self._from_wire(elements)
        return KeyedChunk(keys, elements) if self._keyed else elements


_SCALARS = {str, int, float, bool, type(None), bytes}


def _unconstrained(schema):
    """``schema`` without its ``Annotated`` constraints."""
    origin = get_origin(schema)
    if origin is Annotated:
        return get_args(schema)[0]
    if origin is tuple:
        return Tuple[tuple(map(_unconstrained, get_args(schema)))]
    if origin is list:
        return List[_unconstrained(get_args(schema)[0])]
    if origin is Union:
        return Union[tuple(map(_unconstrained, get_args(schema)))]
    return schema


def edge_codec(plan: JobPlan, edge_id: int) -> Optional[PieceCodec]:
    """The codec of the edge's typed records (None: they are pickled): its records are of
    the upstream node's declared type, and its keys, if it ships them, of a basic type."""
    edge = plan.edges[edge_id]
    wire = plan.nodes[edge.src].output_type.wire_form(plan.timed)
    keyed = plan.nodes[edge.dst].keyed and edge.partitioning.strategy == HASH
    key_type = edge.partitioning.key_type
    if wire is None or edge.side_tag is not None or keyed and (
            key_type is None or key_type.fields):
        return None
    return PieceCodec(wire, keyed)


def pickled(operator: str, records, codec: Optional[PieceCodec] = None) -> bytes:
    """Pickles a piece of a chunk once, here: Spark's filter and shuffle then move bytes
    only (records of a declared type as the ``codec``'s msgpack, if it has one)."""
    encoded = None if codec is None else codec.encoded(records)
    if encoded is not None:
        return pickle.dumps(encoded, pickle.HIGHEST_PROTOCOL)
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


def kept(run_id: str, batch_id: int, name: str, pieces: list) -> KeptChunk:
    """Keeps a chunk's unpickled pieces in this process, for a later stage of the batch."""
    key = (run_id, batch_id, name)
    _kept[key] = pieces
    return KeptChunk(key)


def drop_kept_chunks_but(run_id: str, batch_id: int) -> None:
    """Drops what is kept for other batches (one that failed before its next stage)."""
    for key in [k for k in _kept if k[:2] != (run_id, batch_id)]:
        del _kept[key]


def holds_kept_chunks() -> bool:
    """Whether this process keeps chunks that a later stage of its batch reads."""
    return bool(_kept)


def records_of(payload, codec: Optional[PieceCodec] = None) -> Iterator:
    """The records of a payload, a piece at a time (a list, or a ``KeyedChunk``); the
    ``codec`` of its edge decodes pieces of typed records."""
    if isinstance(payload, KeptChunk):
        pieces = _kept.pop(payload.key, None)
        if pieces is None:
            raise RuntimeError(f"chunk {payload.key[2]} of batch {payload.key[1]} was kept "
                               f"in a process that is gone (object reuse)")
        yield from pieces
        return
    if isinstance(payload, ExchangeFile):
        with open(payload.path, "rb") as f:
            payload = f.read()
    stream = io.BytesIO(payload)
    load = pickle.Unpickler(stream).load
    while stream.tell() < len(payload):
        piece = load()
        yield codec.decoded(piece) if type(piece) is bytes else piece


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
