"""The Nexmark generator and queries (benchmarks/nexmark): the events are a pure function
of (seed, event number), and every query's job gives its brute-force reference's
results at any parallelism and micro-batch size."""
from collections import Counter

import pytest

from benchmarks.nexmark.generator import (Auction, Bid, GeneratorConfig, Person, event,
                                          events, nexmark_source)
from benchmarks.nexmark.queries import QUERIES, SIDE_ROWS
from tests.conftest import make_env

N = 4000
# 100 events per second of event time: 40 s, so that windows, slides and sessions vary.
CONFIG = GeneratorConfig(seed=7, event_rate=100)


@pytest.fixture(scope="module")
def all_events():
    return list(events(N, CONFIG))


def test_events_are_a_function_of_seed_and_number(all_events):
    assert list(events(N, CONFIG)) == all_events
    assert [event(i, CONFIG) for i in (3999, 17, 0, 2500)] == \
        [all_events[i] for i in (3999, 17, 0, 2500)]
    other_seed = list(events(N, CONFIG._replace(seed=8)))
    assert sum(a != b for a, b in zip(all_events, other_seed)) > N // 2


def test_every_50_events_are_1_person_3_auctions_46_bids(all_events):
    for block in range(0, N, 50):
        kinds = Counter(type(e) for e in all_events[block:block + 50])
        assert kinds == {Person: 1, Auction: 3, Bid: 46}


def test_events_refer_to_earlier_people_and_auctions_at_the_event_rate(all_events):
    people, auctions = [], []
    hot_auction_bids = hot_bidder_bids = bids = 0
    for i, e in enumerate(all_events):
        assert e.date_time == all_events[0].date_time + i * 1000 // CONFIG.event_rate
        if isinstance(e, Person):
            people.append(e.id)
        elif isinstance(e, Auction):
            assert e.seller in people and e.expires > e.date_time
            auctions.append(e.id)
        else:
            assert e.bidder in people and e.auction in auctions
            bids += 1
            hot_auction_bids += e.auction in auctions[-4:]
            hot_bidder_bids += e.bidder in people[-4:]
    # bids go mostly to "hot" auctions and bidders: the newest (1/2 and 3/4 of the bids)
    assert 0.45 < hot_auction_bids / bids < 0.6 and 0.7 < hot_bidder_bids / bids < 0.85


# With SIDE_ROWS // 2, q13's side table arrives in two batches: early bids must wait.
@pytest.mark.parametrize("parallelism,micro_batch_size", [
    (1, N), (1, SIDE_ROWS // 2), (2, N), (2, SIDE_ROWS // 2)])
@pytest.mark.parametrize("name", list(QUERIES))
def test_query_gives_its_reference_results(all_events, name, parallelism, micro_batch_size):
    query = QUERIES[name]
    expected = query.reference(all_events)
    assert expected  # the comparison is not between two empty results
    env = make_env("local", parallelism=parallelism, micro_batch_size=micro_batch_size)
    with query.build(nexmark_source(env, N, CONFIG)).execute_and_collect() as results:
        assert query.canonical(list(results)) == expected

