"""Routers: which downstream partition each record goes to."""
import os
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.errors import OperatorError
from engine.runtime.exchange import drop_kept_chunks_but, kept, payload_of, pickled, records_of
from engine.runtime.operators.chunks import RecordShape
from engine.graph import (BROADCAST, CUSTOM, FORWARD, HASH, REBALANCE, RESCALE, SHUFFLE,
                          Partitioning)
from engine.runtime.routing import PIECE_RECORDS, Router
from core.keygroups import assign_key_group, key_group_range_for_operator


class Selector:
    def __init__(self, f):
        self.get_key = f


class Modulo:
    def partition(self, key, num_partitions):
        return key % num_partitions


def route_all(partitioning, records, subtask=0, up=1, down=3, max_p=128):
    router = Router("op", partitioning, subtask, up, down, max_p, seed=7,
                    shape=RecordShape(timed=False))
    for r in records:
        router.route([r])
    return {target: received(pieces) for target, pieces in router.take_chunks()}


def received(pieces) -> list:
    """The records of a target's pieces, as the next stage reads them."""
    return [r for piece in records_of(payload_of(pieces, None, "")) for r in piece]


def test_forward_keeps_the_subtask():
    assert route_all(Partitioning(FORWARD), [1, 2], subtask=1, up=3) == {1: [1, 2]}


def test_rebalance_is_round_robin_from_the_subtask_index():
    assert route_all(Partitioning(REBALANCE), list(range(5)), subtask=1, up=2) == {
        1: [0, 3], 2: [1, 4], 0: [2]}


def test_rescale_feeds_a_local_subset():
    assert route_all(Partitioning(RESCALE), list(range(4)), subtask=1, up=2, down=4) == {
        2: [0, 2], 3: [1, 3]}
    assert route_all(Partitioning(RESCALE), list(range(3)), subtask=3, up=4, down=2) == {
        1: [0, 1, 2]}


def test_broadcast_reaches_every_partition():
    assert route_all(Partitioning(BROADCAST), ["x"]) == {0: ["x"], 1: ["x"], 2: ["x"]}


def test_shuffle_spreads_over_all_partitions():
    chunks = route_all(Partitioning(SHUFFLE), list(range(300)))
    assert sorted(x for chunk in chunks.values() for x in chunk) == list(range(300))
    assert set(chunks) == {0, 1, 2}


@given(keys=st.lists(st.one_of(st.text(max_size=5), st.integers()), max_size=30),
       down=st.integers(1, 8))
def test_hash_sends_each_key_to_the_partition_owning_its_key_group(keys, down):
    chunks = route_all(Partitioning(HASH, key_selector=Selector(lambda r: r)), keys, down=down)
    for target, pairs in chunks.items():
        start, end = key_group_range_for_operator(128, down, target)
        for key, record in pairs:
            assert key == record
            assert start <= assign_key_group(key, 128) <= end


@pytest.mark.parametrize("keyed_target", [True, False])
def test_a_hash_edge_ships_keys_only_to_a_keyed_operator(keyed_target):
    router = Router("op", Partitioning(HASH, key_selector=Selector(lambda value: value[0])),
                    0, 1, 1, 128, seed=7, shape=RecordShape(timed=True),
                    keyed_target=keyed_target)
    elements = [(i, (word, i)) for i, word in enumerate(["a", "b", "a"] * 2000)]
    router.route(elements)
    [(_, pieces)] = router.take_chunks()
    assert received(pieces) == ([(value[0], (ts, value)) for ts, value in elements]
                                if keyed_target else elements)


def test_custom_partitioner_and_its_bad_answers():
    by_mod = Partitioning(CUSTOM, key_selector=Selector(lambda r: r), partitioner=Modulo())
    assert route_all(by_mod, [0, 1, 2, 4]) == {0: [0], 1: [1, 4], 2: [2]}
    out_of_range = Partitioning(CUSTOM, key_selector=Selector(lambda r: r),
                                partitioner=Selector(None))
    out_of_range.partitioner.partition = lambda key, n: n
    with pytest.raises(OperatorError, match="not in \\[0, 3\\)"):
        route_all(out_of_range, [5])


def test_a_payload_left_in_a_file_reads_back_as_its_records(tmp_path):
    pieces = [pickled("op", [1, ("a", 3)]), pickled("op", [4])]
    payload = payload_of(pieces, str(tmp_path), "0-1-2")
    assert payload.path == str(tmp_path / "0-1-2") and os.listdir(tmp_path) == ["0-1-2"]
    assert list(records_of(payload)) == [[1, ("a", 3)], [4]]
    assert list(records_of(payload_of(pieces, None, "0-1-2"))) == [[1, ("a", 3)], [4]]


def test_a_chunk_crosses_in_pieces_of_bounded_size_read_back_in_order(tmp_path):
    router = Router("op", Partitioning(FORWARD), 0, 1, 1, 128, seed=7,
                    shape=RecordShape(timed=False))
    for start in range(0, 20_000, 1000):
        router.route(list(range(start, start + 1000)))
    [(_, pieces)] = router.take_chunks()
    read = list(records_of(payload_of(pieces, str(tmp_path), "0-0-0")))
    assert len(read) > 1 and all(len(piece) < PIECE_RECORDS + 1000 for piece in read)
    assert [r for piece in read for r in piece] == list(range(20_000))
    assert router.take_chunks() == []


def test_a_record_that_cannot_be_pickled_is_named_with_its_operator():
    with pytest.raises(OperatorError) as e:
        pickled("op", [1, lambda: 2])
    assert "op" in str(e.value) and "cannot be pickled" in str(e.value)


def test_the_local_targets_records_stay_unpickled_in_pieces_of_their_own():
    """Object reuse: the pieces for the subtask's own index are the records themselves,
    in lists the router no longer fills; every other target's are pickled."""
    router = Router("op", Partitioning(REBALANCE), 0, 1, 2, 128, seed=7,
                    shape=RecordShape(timed=False))
    router.local_target = 0
    records = [[i] for i in range(2 * PIECE_RECORDS + 3)]  # mutable, to see identity
    router.route(records[:PIECE_RECORDS * 2])
    router.route(records[PIECE_RECORDS * 2:])
    pieces = dict(router.take_chunks())
    assert all(type(piece) is bytes for piece in pieces[1])
    unpickled = [r for piece in pieces[0] for r in piece]
    assert len(unpickled) == PIECE_RECORDS + 2
    assert all(a is b for a, b in zip(unpickled, records[0::2]))
    router.route([["to 1"], ["to 0"]])  # the kept pieces are not the router's lists
    assert [r for piece in pieces[0] for r in piece] == unpickled
    assert dict(router.take_chunks())[0] == [[["to 0"]]]


def test_kept_records_are_read_once_in_their_process_and_dropped_with_their_batch():
    payload = kept("run", 1, "e-0-0", [[1, 2], [3]])
    assert [r for piece in records_of(payload) for r in piece] == [1, 2, 3]
    with pytest.raises(RuntimeError, match="chunk e-0-0 of batch 1 was kept in a process "
                                           "that is gone"):
        list(records_of(payload))
    stale, current = kept("run", 2, "e-0-0", [[4]]), kept("run", 3, "e-0-0", [[5]])
    drop_kept_chunks_but("run", 3)  # (a task of batch 3 starts: batch 2 failed)
    with pytest.raises(RuntimeError):
        list(records_of(stale))
    assert list(records_of(current)) == [[5]]


def test_typed_pieces_travel_as_msgpack_and_what_it_cannot_hold_as_pickle():
    from api.common import Types
    from engine.runtime.exchange import PieceCodec
    codec = PieceCodec(Types.TUPLE([Types.STRING(), Types.BIG_INT()]).wire_form(False),
                       keyed=False)
    router = Router("op", Partitioning(FORWARD), 0, 1, 1, 128, seed=7,
                    shape=RecordShape(timed=False), codec=codec)
    fits = [("a", 1), ("b", -2 ** 63)]
    beyond = [("\ud800", 1), ("c", 2 ** 64)]  # a lone surrogate, an int beyond 64 bits
    pieces = []
    for records in (fits, beyond):
        router.route(records)
        [(_, more)] = router.take_chunks()
        pieces += more
    assert [type(pickle.loads(piece)) for piece in pieces] == [bytes, list]
    assert [r for piece in records_of(payload_of(pieces, None, ""), codec) for r in piece] \
        == fits + beyond


def test_keys_that_are_not_scalars_are_pickled_with_their_piece():
    # A key selector may return what its declared basic key type does not say (a tuple
    # for STRING): msgpack would give it back as a list, so its piece is pickled.
    from api.common import Types
    from engine.runtime.exchange import PieceCodec
    from engine.runtime.operators.chunks import KeyedChunk
    codec = PieceCodec(Types.INT().wire_form(False), keyed=True)
    scalars, mixed = KeyedChunk(["a", 2, None], [1, 2, 3]), KeyedChunk(["a", ("b", 1)], [1, 2])
    assert type(pickle.loads(pickled("op", scalars, codec))) is bytes
    assert pickled("op", mixed, codec) == pickled("op", mixed)
    [piece] = records_of(pickled("op", mixed, codec), codec)
    assert list(piece) == [("a", 1), (("b", 1), 2)]
