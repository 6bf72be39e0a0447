"""The sustainable-throughput search of benchmarks/kafka.py on made-up latency series:
the verdicts, the rates it tries, and its charts."""
import pytest

from benchmarks.kafka import (LatencyRun, chart_against_rate, chart_over_time,
                              find_sustainable, highest_sustainable, missing_and_duplicated)


def run(rate, latency_at, seconds=30, guarantee="exactly-once"):
    """A run with 100 results/s whose latency at time t is ``latency_at(t)``."""
    return LatencyRun(guarantee, rate, seconds, rate * seconds,
                      [(i / 100, latency_at(i / 100)) for i in range(seconds * 100)])


def test_verdicts():
    assert run(1000, lambda t: 200).verdict(1000) == "sustainable"
    assert run(1000, lambda t: 200 + (900 if t > 29 else 0)).verdict(1000) == "p99 over bound"
    # p99 under the bound, but the last third's p50 over twice the first's and half the bound
    assert run(1000, lambda t: 100 + 20 * t).verdict(1000) == "falling behind"
    assert run(1000, lambda t: 100 + 5 * t).verdict(1000) == "sustainable"
    assert LatencyRun("exactly-once", 1000, 30, 30_000, []).verdict(1000) == "no results"


def test_search_doubles_then_bisects_to_within_15_percent():
    runs = find_sustainable(lambda rate: run(rate, lambda t: rate / 10), 1000, 64_000, 1000)
    assert [r.rate for r in runs] == [1000, 2000, 4000, 8000, 16000, 12000, 10000, 9000]
    assert highest_sustainable(runs, 1000).rate == 9000


def test_search_stops_at_the_max_rate_and_halves_below_the_start():
    assert [r.rate for r in find_sustainable(lambda rate: run(rate, lambda t: 1), 1000, 3000,
                                             1000)] == [1000, 2000, 3000]
    runs = find_sustainable(lambda rate: run(rate, lambda t: rate), 1000, 64_000, 300)
    assert [r.rate for r in runs] == [1000, 500, 250, 375, 312, 281]
    assert highest_sustainable(runs, 300).rate == 281
    assert highest_sustainable(find_sustainable(lambda rate: run(rate, lambda t: 5000), 1000,
                                                64_000, 1000), 1000) is None


def test_charts_are_written(tmp_path):
    pytest.importorskip("matplotlib")
    runs = [run(rate, lambda t: rate / 10, guarantee=g)
            for g in ("at-least-once", "exactly-once") for rate in (1000, 4000, 16000)]
    chart_over_time(runs[:2], str(tmp_path / "time.png"), 1000)
    chart_against_rate(runs, ["at-least-once", "exactly-once"], str(tmp_path / "rate.png"), 1000)
    for name in ("time.png", "rate.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_run_that_loses_or_repeats_records_is_not_sustainable():
    # of 5 records of keys a (3) and b (2): every one counted once
    assert missing_and_duplicated([("a", 1), ("b", 1), ("a", 2), ("a", 3), ("b", 2)], 5) \
        == (0, 0)
    assert missing_and_duplicated([("a", 1), ("a", 3), ("b", 1), ("b", 2)], 5) == (1, 0)
    assert missing_and_duplicated([("a", 1), ("a", 2), ("b", 1)], 5) == (2, 0)
    assert missing_and_duplicated([("a", 1), ("a", 1), ("a", 2), ("b", 1)], 3) == (0, 1)
    # a record counted twice in state: no result repeats, yet the counts run past it
    assert missing_and_duplicated([("a", 1), ("a", 2), ("a", 3)], 2) == (0, 1)
    lost = run(1000, lambda t: 200)._replace(missing=3)
    assert lost.verdict(1000) == "3 missing, 0 duplicated"
    repeated = run(1000, lambda t: 200)._replace(duplicated=2)
    assert repeated.verdict(1000) == "0 missing, 2 duplicated"
    assert repeated._replace(guarantee="at-least-once").verdict(1000) == "sustainable"
