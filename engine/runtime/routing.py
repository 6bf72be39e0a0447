"""Routers: put each record leaving a stage into the chunk of its target partition.

A router owns one list per target partition (a chunk), pickled into a piece
(``engine.runtime.exchange``) whenever it holds ``PIECE_RECORDS`` records; the task ships
each target's pieces after the batch, so records cross a shuffle in batches. The
pieces of its ``local_target`` (object reuse: the subtask's own partition index, read
in the same process) stay unpickled.
"""
import random
from operator import itemgetter
from typing import Callable, List, Optional

from core.keygroups import KeyGrouping, compute_operator_index_for_key_group

from engine.errors import OperatorError
from engine.runtime.exchange import PieceCodec, pickled
from engine.runtime.operators.chunks import KeyedChunk, RecordShape
from engine.graph import BROADCAST, CUSTOM, FORWARD, HASH, REBALANCE, RESCALE, SHUFFLE, Partitioning

PIECE_RECORDS = 512  # records per pickled piece of a chunk (see operators.io.SOURCE_CHUNK)


class Router:
    """Routes records over one edge from subtask ``subtask`` of the upstream stage;
    ``route`` takes a chunk (list) of records."""

    def __init__(self, name: str, partitioning: Partitioning, subtask: int,
                 up_parallelism: int, down_parallelism: int, down_max_parallelism: int,
                 seed: int, shape: RecordShape, keyed_target: bool = True,
                 codec: Optional[PieceCodec] = None):
        self.name = name
        self.shape = shape
        self.codec = codec  # of the records' declared type (None: pickled)
        self.chunks: List[list] = [[] for _ in range(down_parallelism)]
        # HASH ships KeyedChunks to keyed operators: the records' keys, per target.
        self.keys: Optional[List[list]] = (
            [[] for _ in range(down_parallelism)]
            if keyed_target and partitioning.strategy == HASH else None)
        self.pieces: List[list] = [[] for _ in range(down_parallelism)]
        self.local_target: Optional[int] = None
        route = self._make_route(
            partitioning, subtask, up_parallelism, down_parallelism, down_max_parallelism, seed)
        chunks = self.chunks

        def route_and_pickle(records):
            route(records)
            for target, chunk in enumerate(chunks):
                if len(chunk) >= PIECE_RECORDS:
                    self._pickle_chunk(target)
        self.route: Callable = route_and_pickle

    def _pickle_chunk(self, target: int) -> None:
        """Moves the target's chunk into a pickled piece (or, for the local target, into a
        piece as it is)."""
        chunk = self.chunks[target]
        piece = chunk if self.keys is None else KeyedChunk(self.keys[target], chunk)
        if target == self.local_target:
            self.pieces[target].append(piece)
            self.chunks[target] = []
            if self.keys is not None:
                self.keys[target] = []
            return
        self.pieces[target].append(pickled(self.name, piece, self.codec))
        chunk.clear()
        if self.keys is not None:
            self.keys[target].clear()

    def take_chunks(self, every_target: bool = False):
        """Returns [(target, pieces)] for non-empty targets (for every target if
        ``every_target``) and starts anew."""
        out = []
        for target, chunk in enumerate(self.chunks):
            if chunk:
                self._pickle_chunk(target)
            if self.pieces[target] or every_target:
                out.append((target, self.pieces[target]))
                self.pieces[target] = []
        return out

    def _make_route(self, partitioning, subtask, up_p, down_p, max_p, seed):
        strategy = partitioning.strategy
        chunks = self.chunks
        if strategy == FORWARD:
            return lambda records: chunks[subtask].extend(records)
        if strategy == BROADCAST:
            def broadcast(records):
                for chunk in chunks:
                    chunk.extend(records)
            return broadcast
        if strategy in (REBALANCE, RESCALE):
            targets = _rescale_targets(subtask, up_p, down_p) if strategy == RESCALE \
                else list(range(down_p))
            position = [subtask % len(targets) if strategy == REBALANCE else 0]

            def round_robin(records):
                i, n = position[0], len(targets)
                for record in records:
                    chunks[targets[i]].append(record)
                    i = (i + 1) % n
                position[0] = i
            return round_robin
        if strategy == SHUFFLE:
            rng = random.Random(seed)

            def shuffle(records):
                for record in records:
                    chunks[rng.randrange(down_p)].append(record)
            return shuffle
        if strategy == HASH:  # the key selector gets values, not timed elements
            return self._hash_route(partitioning, down_p, max_p)
        if strategy == CUSTOM:
            return self._custom_route(partitioning, down_p)
        raise ValueError(f"unknown ship strategy {strategy}")

    def _hash_route(self, partitioning, down_p, max_p):
        """Ships records to the partition owning the key's key group (``KeyGrouping`` of
        the edge's key type): with their keys to a keyed operator (pickled as
        ``KeyedChunk``s), as they are to any other (e.g. a print sink)."""
        get_key = partitioning.key_selector.get_key
        grouping = KeyGrouping(partitioning.key_type, max_p)
        owner = [compute_operator_index_for_key_group(max_p, down_p, group)
                 for group in range(max_p)]
        name = self.name
        chunks, chunk_keys = self.chunks, self.keys
        values = _values if self.shape.timed else None

        def hash_route(records):
            try:  # the key selector over the whole chunk at once
                keys = list(map(get_key, records if values is None else values(records)))
            except Exception as e:
                raise OperatorError.wrap(f"{name} (key selector)",
                                         _failing(get_key, records, values), e) from None
            try:
                groups = grouping.key_groups(keys)
            except Exception as e:  # a key the declared key type cannot hold
                record = _failing(grouping.key_group, records, values, keys)
                raise OperatorError.wrap(f"{name} (key selector)",
                                         record if values is None else record[1], e) from None
            if chunk_keys is None:
                for record, group in zip(records, groups):
                    chunks[owner[group]].append(record)
                return
            for record, key, group in zip(records, keys, groups):
                target = owner[group]
                chunk_keys[target].append(key)
                chunks[target].append(record)
        return hash_route

    def _key_of(self, partitioning) -> Callable:
        return self.shape.key_getter(partitioning.key_selector.get_key)

    def _custom_route(self, partitioning, down_p):
        get_key = self._key_of(partitioning)
        partition = partitioning.partitioner.partition
        name = self.name
        chunks = self.chunks

        def custom_route(records):
            for record in records:
                try:
                    target = partition(get_key(record), down_p)
                except Exception as e:
                    raise OperatorError.wrap(f"{name} (partitioner)", record, e) from None
                if not isinstance(target, int) or not 0 <= target < down_p:
                    raise OperatorError(name, f"record {record!r}",
                                        f"partitioner returned {target!r}, not in [0, {down_p})",
                                        "")
                chunks[target].append(record)
        return custom_route


def _values(elements: list):
    """The values of timed elements ``(timestamp, value)``."""
    return map(itemgetter(1), elements)


def _failing(function, records: list, values, inputs=None) -> object:
    """The first record for which ``function`` fails (called on its value, or on its item
    of ``inputs``): key selectors and key groups are deterministic."""
    if inputs is None:
        inputs = records if values is None else values(records)
    for record, item in zip(records, inputs):
        try:
            function(item)
        except Exception:
            return record
    return None


def _rescale_targets(subtask: int, up_p: int, down_p: int) -> List[int]:
    """Flink's rescale: each upstream subtask feeds a contiguous subset of the downstream."""
    if down_p >= up_p:
        return list(range(subtask * down_p // up_p, (subtask + 1) * down_p // up_p)) or \
            [subtask * down_p // up_p]
    return [subtask * down_p // up_p]
