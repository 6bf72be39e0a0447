"""A deterministic generator of Nexmark events: people, auctions and bids of an online
auction house, written for this benchmark after Nexmark's model.

Event ``i`` is a pure function of ``(seed, i)``, so a job that maps a
``NumberSequenceSource`` of event numbers to events reads the same events at any
parallelism, in the tasks. Per 50 events: 1 person, 3 auctions, 46 bids (2 % / 6 % /
92 %). Event ``i`` happens at ``BASE_TIME_MS + i * 1000 / event_rate`` (event time, in
order: every split of the number sequence is in timestamp order). Bids go to recent
auctions and recent people, more often to a few "hot" ones (the newest), as in
Nexmark; auctions are sold by recent people and expire 10-60 s after they open.
"""
from typing import Iterator, NamedTuple, Union

from api.common import TimestampAssigner, WatermarkStrategy
from api.datastream.connectors import NumberSequenceSource

BASE_TIME_MS = 1_700_000_000_000  # 2023-11-14 22:13:20 UTC
FIRST_PERSON_ID = 1000
FIRST_AUCTION_ID = 1000
FIRST_CATEGORY_ID = 10
CATEGORIES = 5
PROPORTION = 50  # per 50 events: 1 person, 3 auctions (events 1-3), 46 bids
AUCTIONS_PER_PERIOD = 3
HOT_AUCTIONS, LIVE_AUCTIONS = 4, 100       # bids: half on the 4 newest auctions
HOT_BIDDERS, ACTIVE_PEOPLE = 4, 1000       # bids: 3/4 by the 4 newest people
RECENT_SELLERS = 100                       # auctions: half sold by the newest person
STATES = ("AZ", "CA", "ID", "OR", "WA", "WY")
CITIES = ("Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend",
          "Redmond", "Seattle", "Kent", "Cheyenne")
FIRST_NAMES = ("Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah",
               "Deiter", "Walter")
LAST_NAMES = ("Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith",
              "Jones", "Noris")
CHANNELS = ("Google", "Facebook", "Baidu", "Apple")

_MASK = (1 << 64) - 1


class Person(NamedTuple):
    id: int
    name: str
    email_address: str
    credit_card: str
    city: str
    state: str
    date_time: int
    extra: str


class Auction(NamedTuple):
    id: int
    item_name: str
    description: str
    initial_bid: int
    reserve: int
    date_time: int
    expires: int
    seller: int
    category: int
    extra: str


class Bid(NamedTuple):
    auction: int
    bidder: int
    price: int
    channel: str
    url: str
    date_time: int
    extra: str


Event = Union[Person, Auction, Bid]


class GeneratorConfig(NamedTuple):
    """What the events depend on: the seed and the event rate (events per second of
    event time, over all splits)."""
    seed: int = 0
    event_rate: int = 10_000_000  # nexmark-flink's default


def _mix(x: int) -> int:
    """SplitMix64's finalizer: 64 well-mixed bits from any int."""
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def _price(bits: int) -> int:
    """A price in cents from 1 $ to ~100,000 $, log-uniform (12 bits of ``bits``)."""
    return int(100 * 10 ** ((bits & 0xFFF) * 5 / 4096))


def _newest(count: int, window: int, bits: int) -> int:
    """One of the ``window`` newest of ``count`` ids (0-based), uniformly."""
    return count - 1 - bits % min(window, count)


def people_before(i: int) -> int:
    """How many people events ``0 .. i-1`` created."""
    return (i + PROPORTION - 1) // PROPORTION


def auctions_before(i: int) -> int:
    """How many auctions events ``0 .. i-1`` created."""
    period, offset = divmod(i, PROPORTION)
    return period * AUCTIONS_PER_PERIOD + min(max(offset - 1, 0), AUCTIONS_PER_PERIOD)


def event_time(i: int, config: GeneratorConfig) -> int:
    """Event ``i``'s timestamp (ms): the events arrive at ``event_rate`` per second."""
    return BASE_TIME_MS + i * 1000 // config.event_rate


def event(i: int, config: GeneratorConfig = GeneratorConfig()) -> Event:
    """Event number ``i`` (from 0) of the stream of ``config``."""
    bits = _mix(_mix(config.seed) ^ i)
    ts = event_time(i, config)
    offset = i % PROPORTION
    if offset == 0:
        return Person(
            FIRST_PERSON_ID + i // PROPORTION,
            f"{FIRST_NAMES[bits % 11]} {LAST_NAMES[(bits >> 4) % 9]}",
            f"{LAST_NAMES[(bits >> 8) % 9].lower()}{(bits >> 12) % 1000}@example.com",
            f"{(bits >> 20) % 10000:04d} {(bits >> 34) % 10000:04d}",
            CITIES[(bits >> 48) % 10], STATES[(bits >> 52) % 6], ts, "")
    if offset <= AUCTIONS_PER_PERIOD:
        id_ = FIRST_AUCTION_ID + auctions_before(i)
        initial = _price(bits)
        people = people_before(i)
        seller = people - 1 if (bits >> 12) & 1 else _newest(people, RECENT_SELLERS, bits >> 13)
        return Auction(id_, f"item-{id_}", f"description of item {id_}", initial,
                       initial + _price(bits >> 24) // 10, ts,
                       ts + 10_000 + (bits >> 36) % 50_000, FIRST_PERSON_ID + seller,
                       FIRST_CATEGORY_ID + (bits >> 56) % CATEGORIES, "")
    auctions, people = auctions_before(i), people_before(i)
    if bits & 1:
        auction = _newest(auctions, HOT_AUCTIONS, bits >> 1)
    else:
        auction = _newest(auctions, LIVE_AUCTIONS, bits >> 1)
    if (bits >> 12) & 3:
        bidder = _newest(people, HOT_BIDDERS, bits >> 14)
    else:
        bidder = _newest(people, ACTIVE_PEOPLE, bits >> 14)
    auction += FIRST_AUCTION_ID
    return Bid(auction, FIRST_PERSON_ID + bidder, _price(bits >> 26), CHANNELS[(bits >> 40) % 4],
               f"https://www.nexmark.example/item/{auction}", ts, "")


def events(n: int, config: GeneratorConfig = GeneratorConfig()) -> Iterator[Event]:
    """Events ``0 .. n-1`` in order (what the brute-force references read)."""
    return (event(i, config) for i in range(n))


class _EventTime(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value.date_time


class _ToEvent:
    """``i -> event(i, config)`` as a picklable callable for ``map``."""

    def __init__(self, config: GeneratorConfig):
        self.config = config

    def __call__(self, i: int) -> Event:
        return event(i, self.config)


def nexmark_source(env, n: int, config: GeneratorConfig = GeneratorConfig()):
    """The DataStream of events ``0 .. n-1``, generated in the tasks from a
    ``NumberSequenceSource``, with event-time timestamps (``date_time``) and watermarks
    (timestamps are in order within every split)."""
    return (env.from_source(NumberSequenceSource(0, n - 1),
                            WatermarkStrategy.no_watermarks(), "nexmark")
            .map(_ToEvent(config))
            .assign_timestamps_and_watermarks(
                WatermarkStrategy.for_monotonous_timestamps()
                .with_timestamp_assigner(_EventTime())))
