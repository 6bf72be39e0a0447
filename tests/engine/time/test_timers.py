"""InternalTimerService: dedup, firing order, firing-time changes, persistence and rescaling
through the hashmap backend, and a property test against a plain-set model."""
import math
import os
import tempfile

import pytest
from hypothesis import given, settings, strategies as st

from checkpoint.state_store import StateStore
from engine.time.timers import (
    EVENT_TIME, PROCESSING_TIME, InternalTimerService, Timer, order_token,
)
from statebackends.base import VOID_NAMESPACE
from statebackends.hashmap import HashMapKeyedStateBackend
from statebackends.rocksdb import RocksDBKeyedStateBackend
from core.keygroups import assign_key_group, key_group_range_for_operator

FAST_TMP = "/dev/shm" if os.path.isdir("/dev/shm") else None
MAX_PARALLELISM = 16
FULL_RANGE = (0, MAX_PARALLELISM - 1)


def new_service(key_group_range=FULL_RANGE, snapshot_interval=10):
    backend = HashMapKeyedStateBackend("op", key_group_range, MAX_PARALLELISM, snapshot_interval)
    return backend, InternalTimerService(backend)


def restored(store, key_group_range, version, snapshot_interval=10):
    backend = HashMapKeyedStateBackend.restore(store, "op", key_group_range, MAX_PARALLELISM,
                                               version, snapshot_interval)
    return backend, InternalTimerService(backend)


# -- registration and queries ----------------------------------------------------------

def test_register_deduplicates_and_delete_removes():
    _, timers = new_service()
    timers.register(EVENT_TIME, "a", VOID_NAMESPACE, 10)
    timers.register(EVENT_TIME, "a", VOID_NAMESPACE, 10)
    timers.register(EVENT_TIME, "a", "w", 10)
    timers.register(EVENT_TIME, "b", VOID_NAMESPACE, 5)
    timers.register(PROCESSING_TIME, "a", VOID_NAMESPACE, 10)
    assert timers.count(EVENT_TIME) == 3
    assert timers.count(PROCESSING_TIME) == 1
    assert len(timers) == 4
    assert timers.next_time(EVENT_TIME) == 5
    assert timers.contains(EVENT_TIME, "a", "w", 10)
    assert timers.pending(EVENT_TIME) == [(5, "b", None), (10, "a", None), (10, "a", "w")]

    timers.delete(EVENT_TIME, "a", VOID_NAMESPACE, 10)
    timers.delete(EVENT_TIME, "a", VOID_NAMESPACE, 10)  # absent: nothing happens
    timers.delete(EVENT_TIME, "zzz", VOID_NAMESPACE, 1)
    assert timers.pending(EVENT_TIME) == [(5, "b", None), (10, "a", "w")]
    assert timers.pending(PROCESSING_TIME) == [(10, "a", None)]


def test_empty_service():
    _, timers = new_service()
    assert timers.next_time(EVENT_TIME) is None
    assert timers.pop_due(EVENT_TIME, float("inf")) is None
    assert list(timers.fire(PROCESSING_TIME, 10 ** 18)) == []
    assert timers.pending(EVENT_TIME) == [] and len(timers) == 0


def test_unknown_domain_and_bad_timestamp_are_rejected():
    _, timers = new_service()
    with pytest.raises(ValueError, match="unknown time domain"):
        timers.register("wall", "a", None, 1)
    with pytest.raises(ValueError, match="unknown time domain"):
        timers.next_time("wall")
    with pytest.raises(ValueError, match="must be a number"):
        timers.register(EVENT_TIME, "a", None, float("nan"))


def test_changes_are_marked_dirty_in_the_backend_table():
    backend, timers = new_service()
    timers.register(EVENT_TIME, "a", None, 3)
    assert ("_timers_event", "a", (None, 3), True) in set(backend.entries())
    assert backend.state_kinds()["_timers_event"] == "value"
    assert backend._dirty["_timers_event"] == {("a", (None, 3))}


# -- firing ----------------------------------------------------------------------------

def test_fire_in_timestamp_then_key_then_namespace_order():
    _, timers = new_service()
    for key, namespace, timestamp in [("b", None, 2), ("a", "w2", 2), ("a", "w1", 2),
                                      (3, None, 2), ("c", None, 1), ("a", None, 9)]:
        timers.register(EVENT_TIME, key, namespace, timestamp)
    fired = list(timers.fire(EVENT_TIME, 5))
    assert fired == [Timer("c", None, 1), Timer(3, None, 2), Timer("a", "w1", 2),
                     Timer("a", "w2", 2), Timer("b", None, 2)]
    assert fired[0].key == "c" and fired[0].timestamp == 1
    assert timers.pending(EVENT_TIME) == [(9, "a", None)]
    assert timers.pending(PROCESSING_TIME) == []


def test_register_all_and_pop_all_due_agree_with_register_and_fire():
    """The batch forms give the one-at-a-time forms' timers, dedup and firing order."""
    timers_list = [("b", None, 2), ("a", "w2", 2), ("a", "w1", 2), (3, None, 2),
                   ("c", None, 1), ("a", None, 9), ("b", None, 2)]
    _, one_by_one = new_service()
    for timer in timers_list:
        one_by_one.register(EVENT_TIME, *timer)
    _, batched = new_service()
    batched.register_all(EVENT_TIME, timers_list)
    assert batched.count(EVENT_TIME) == one_by_one.count(EVENT_TIME) == 6
    due = batched.pop_all_due(EVENT_TIME, 2)
    assert [(e[4], e[5], e[0]) for e in due] == list(one_by_one.fire(EVENT_TIME, 2))
    assert batched.pending(EVENT_TIME) == one_by_one.pending(EVENT_TIME) == [(9, "a", None)]
    assert batched.pop_all_due(EVENT_TIME, 8) == []
    with pytest.raises(ValueError, match="timer timestamp must be a number"):
        batched.register_all(EVENT_TIME, [("a", None, float("nan"))])


def test_domains_fire_separately():
    _, timers = new_service()
    timers.register(EVENT_TIME, "a", None, 1)
    timers.register(PROCESSING_TIME, "a", None, 1)
    assert list(timers.fire(PROCESSING_TIME, 100)) == [Timer("a", None, 1)]
    assert timers.pending(EVENT_TIME) == [(1, "a", None)]


def test_timer_is_removed_before_it_is_handed_out():
    _, timers = new_service()
    timers.register(EVENT_TIME, "a", None, 1)
    fired = []
    for timer in timers.fire(EVENT_TIME, 1):
        assert not timers.contains(EVENT_TIME, *timer)
        fired.append(timer.key)
        if len(fired) == 1:  # the same timer again (twice: deduplicated) is a new timer
            timers.register(EVENT_TIME, "a", None, 1)
            timers.register(EVENT_TIME, "a", None, 1)
    assert fired == ["a", "a"]
    assert timers.count() == 0


def test_timers_registered_while_firing_fire_in_the_same_pass_when_due():
    _, timers = new_service()
    timers.register(EVENT_TIME, "a", None, 5)
    timers.register(EVENT_TIME, "b", None, 8)
    fired = []
    for timer in timers.fire(EVENT_TIME, 10):
        fired.append(timer)
        if timer.key == "a":
            timers.register(EVENT_TIME, "c", None, 3)   # earlier than the one firing
            timers.register(EVENT_TIME, "d", None, 10)  # due, after b
            timers.register(EVENT_TIME, "e", None, 11)  # not due
    assert [t.key for t in fired] == ["a", "c", "b", "d"]
    assert timers.pending(EVENT_TIME) == [(11, "e", None)]


def test_deleting_a_due_timer_while_firing_prevents_it():
    _, timers = new_service()
    for key in "abc":
        timers.register(EVENT_TIME, key, None, 1)
    fired = []
    for timer in timers.fire(EVENT_TIME, 1):
        fired.append(timer.key)
        timers.delete(EVENT_TIME, "b", None, 1)
    assert fired == ["a", "c"]


def test_pop_due_one_at_a_time():
    _, timers = new_service()
    timers.register(PROCESSING_TIME, "a", None, 4)
    timers.register(PROCESSING_TIME, "a", None, 2)
    assert timers.pop_due(PROCESSING_TIME, 1) is None
    assert timers.pop_due(PROCESSING_TIME, 4) == ("a", None, 2)
    assert timers.pop_due(PROCESSING_TIME, 4) == ("a", None, 4)
    assert timers.pop_due(PROCESSING_TIME, 4) is None


def test_stopping_a_pass_early_keeps_the_rest():
    _, timers = new_service()
    for timestamp in (1, 2, 3):
        timers.register(EVENT_TIME, "a", None, timestamp)
    passing = timers.fire(EVENT_TIME, 3)
    assert next(passing).timestamp == 1
    passing.close()
    assert timers.pending(EVENT_TIME) == [(2, "a", None), (3, "a", None)]


def test_order_token_is_total_and_consistent_with_equality():
    class Window:
        def __init__(self, start, end):
            self.start, self.end = start, end

        def __lt__(self, other):
            return (self.start, self.end) < (other.start, other.end)

    class Opaque:
        def __repr__(self):
            return "Opaque()"

    values = [None, 1, 2.5, True, "a", b"x", (1, "a"), ("a", 1), frozenset({1, 2}),
              Window(10, 20), Window(5, 15), Opaque(), float("nan"), (None, Window(0, 1))]
    tokens = [order_token(v) for v in values]
    sorted(tokens)  # no TypeError between any kinds
    assert order_token(1) == order_token(1.0) == order_token(True)
    assert order_token((1, 2)) == order_token(type("P", (tuple,), {})((1, 2)))
    assert order_token(Window(5, 15)) < order_token(Window(10, 20))
    assert order_token(None) < order_token(2) < order_token(10) < order_token("a")


def test_ties_between_window_namespaces_follow_the_window_order():
    class Window(tuple):  # a namedtuple-like window: ordered as a tuple
        pass

    _, timers = new_service()
    for start in (20, 0, 10):
        timers.register(EVENT_TIME, "k", Window((start, start + 10)), 100)
    assert [t.namespace for t in timers.fire(EVENT_TIME, 100)] == [(0, 10), (10, 20), (20, 30)]


# -- persistence and rescaling ---------------------------------------------------------

@pytest.fixture
def store(tmp_path):
    return StateStore(str(tmp_path))


@pytest.mark.parametrize("backend_class", [HashMapKeyedStateBackend, RocksDBKeyedStateBackend])
def test_timers_of_equal_keys_of_other_types_are_other_timers(store, backend_class):
    """Keys are their bytes (core.codec.key_identity): 1, 1.0 and True have a timer each,
    every NaN shares one; they fire, after a restore, with the keys as registered."""
    options = {"local_dir": FAST_TMP} if backend_class is RocksDBKeyedStateBackend else {}
    backend = backend_class("op", FULL_RANGE, MAX_PARALLELISM, **options)
    timers = InternalTimerService(backend)
    for key in (1, True, 1.0, float("nan"), float("nan"), None, (1, 2), (1.0, 2)):
        timers.register(EVENT_TIME, key, None, 5)
    assert timers.count() == 7
    assert timers.contains(EVENT_TIME, float("nan"), None, 5)
    assert not timers.contains(EVENT_TIME, 2.0, None, 5)
    backend.write_version(store, 0)
    backend.close()
    backend = backend_class.restore(store, "op", FULL_RANGE, MAX_PARALLELISM, 0, **options)
    fired = list(InternalTimerService(backend).fire(EVENT_TIME, 10))
    assert sorted(repr(timer.key) for timer in fired) == \
        ["(1, 2)", "(1.0, 2)", "1", "1.0", "None", "True", "nan"]
    assert any(timer.key is True for timer in fired)
    assert any(type(timer.key) is float and math.isnan(timer.key) for timer in fired)
    backend.close()


def test_timers_survive_write_and_restore_with_the_keyed_state(store):
    backend, timers = new_service(snapshot_interval=3)
    timers.register(EVENT_TIME, "a", None, 10)
    timers.register(EVENT_TIME, "b", "w", 20)
    timers.register(PROCESSING_TIME, "c", None, 30)
    backend.write_version(store, 1)  # changelog

    backend, timers = restored(store, FULL_RANGE, 1, 3)
    assert timers.pending(EVENT_TIME) == [(10, "a", None), (20, "b", "w")]
    assert timers.pending(PROCESSING_TIME) == [(30, "c", None)]

    assert list(timers.fire(EVENT_TIME, 15)) == [("a", None, 10)]
    timers.register(EVENT_TIME, "d", None, 40)
    timers.delete(PROCESSING_TIME, "c", None, 30)
    backend.write_version(store, 2)  # changelog with puts and deletes
    timers.register(EVENT_TIME, "e", None, 50)
    backend.write_version(store, 3)  # snapshot

    for version, event, processing in [
        (1, [(10, "a", None), (20, "b", "w")], [(30, "c", None)]),
        (2, [(20, "b", "w"), (40, "d", None)], []),
        (3, [(20, "b", "w"), (40, "d", None), (50, "e", None)], []),
    ]:
        _, again = restored(store, FULL_RANGE, version, 3)
        assert again.pending(EVENT_TIME) == event
        assert again.pending(PROCESSING_TIME) == processing


def test_register_then_delete_within_a_batch_leaves_nothing(store):
    backend, timers = new_service()
    timers.register(EVENT_TIME, "a", None, 1)
    backend.write_version(store, 0)
    timers.register(EVENT_TIME, "b", None, 2)
    timers.delete(EVENT_TIME, "b", None, 2)
    timers.delete(EVENT_TIME, "a", None, 1)
    backend.write_version(store, 1)
    _, again = restored(store, FULL_RANGE, 1)
    assert len(again) == 0


def test_tie_order_does_not_depend_on_history(store):
    backend, timers = new_service()
    for key in [7, "x", 3, (1, 2), "b", None, 11]:
        timers.register(EVENT_TIME, key, None, 5)
    before = timers.pending(EVENT_TIME)
    backend.write_version(store, 0)
    _, again = restored(store, FULL_RANGE, 0)
    assert again.pending(EVENT_TIME) == before
    assert [t.key for t in again.fire(EVENT_TIME, 5)] == [None, 3, 7, 11, "b", "x", (1, 2)]


def test_rescaling_gives_each_instance_exactly_its_keys_timers(store):
    backend, timers = new_service()
    keys = [f"key-{i}" for i in range(60)] + list(range(40))
    expected = set()
    for i, key in enumerate(keys):
        timers.register(EVENT_TIME, key, None, i)
        timers.register(PROCESSING_TIME, key, "w", 1000 + i)
        expected.add((EVENT_TIME, i, key, None))
        expected.add((PROCESSING_TIME, 1000 + i, key, "w"))
    backend.write_version(store, 0)

    # scale out to 2 instances
    halves = []
    for index in range(2):
        key_group_range = key_group_range_for_operator(MAX_PARALLELISM, 2, index)
        half_backend, half = restored(store, key_group_range, 0)
        start, end = key_group_range
        got = {(domain, *timer) for domain in (EVENT_TIME, PROCESSING_TIME)
               for timer in half.pending(domain)}
        assert got == {t for t in expected
                       if start <= assign_key_group(t[2], MAX_PARALLELISM) <= end}
        halves.append((half_backend, half))
    assert all(len(h) for _, h in halves)

    # each instance fires some and writes; scale back in to one
    for half_backend, half in halves:
        for timer in half.fire(EVENT_TIME, 29):
            expected.discard((EVENT_TIME, timer.timestamp, timer.key, timer.namespace))
        half_backend.write_version(store, 1)
    _, merged = restored(store, FULL_RANGE, 1)
    got = {(domain, *timer) for domain in (EVENT_TIME, PROCESSING_TIME)
           for timer in merged.pending(domain)}
    assert got == expected and len(got) == 2 * len(keys) - 30


# -- property test against a plain-set model -------------------------------------------

KEYS = st.integers(0, 6)
NAMESPACES = st.sampled_from(["", "w1", "w2"])
TIMES = st.integers(0, 20)
DOMAIN = st.sampled_from([EVENT_TIME, PROCESSING_TIME])
TIMER = st.tuples(DOMAIN, KEYS, NAMESPACES, TIMES)
# What the caller does after the i-th timer fired in a pass: register or delete a timer.
REACTION = st.one_of(st.none(), st.tuples(st.sampled_from(["register", "delete"]), TIMER))
OPERATION = st.one_of(
    st.tuples(st.just("register"), TIMER),
    st.tuples(st.just("delete"), TIMER),
    st.tuples(st.just("fire"), st.tuples(DOMAIN, TIMES, st.lists(REACTION, max_size=6))),
    st.tuples(st.just("checkpoint"), st.none()),
)


def model_fire(model, domain, time, reactions):
    """Brute force: repeatedly take the smallest due timer of the domain."""
    fired = []
    while True:
        due = [(ts, key, ns) for d, key, ns, ts in model if d == domain and ts <= time]
        if not due:
            return fired
        ts, key, ns = min(due)
        model.discard((domain, key, ns, ts))
        reaction = reactions[len(fired)] if len(fired) < len(reactions) else None
        fired.append((key, ns, ts))
        apply_to_model(model, reaction)


def apply_to_model(model, reaction):
    if reaction is not None:
        action, timer = reaction
        (model.add if action == "register" else model.discard)(timer)


def apply_to_service(timers, reaction):
    if reaction is not None:
        action, (domain, key, ns, ts) = reaction
        (timers.register if action == "register" else timers.delete)(domain, key, ns, ts)


@settings(max_examples=150, deadline=None)
@given(st.lists(OPERATION, max_size=40), st.integers(1, 4))
def test_matches_a_plain_set_model(operations, snapshot_interval):
    with tempfile.TemporaryDirectory(dir=FAST_TMP) as root:
        store = StateStore(root)
        backend, timers = new_service(snapshot_interval=snapshot_interval)
        model = set()
        version = -1
        for op, arg in operations:
            if op in ("register", "delete"):
                apply_to_service(timers, (op, arg))
                apply_to_model(model, (op, arg))
            elif op == "fire":
                domain, time, reactions = arg
                expected = model_fire(model, domain, time, reactions)
                fired = []
                for timer in timers.fire(domain, time):
                    reaction = reactions[len(fired)] if len(fired) < len(reactions) else None
                    fired.append(tuple(timer))
                    apply_to_service(timers, reaction)
                assert fired == expected
            else:
                version += 1
                backend.write_version(store, version)
                backend, timers = restored(store, FULL_RANGE, version, snapshot_interval)
            for domain in (EVENT_TIME, PROCESSING_TIME):
                want = sorted((ts, key, ns) for d, key, ns, ts in model if d == domain)
                assert timers.pending(domain) == want
                assert timers.next_time(domain) == (want[0][0] if want else None)
                assert timers.count(domain) == len(want)
