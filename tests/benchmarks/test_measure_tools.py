"""The measurement tools of benchmarks/ (state_ops, latency, scaling) run end to end at
tiny sizes on the local executor and measure what they say: every requested state
operation happens, every offered record reaches the sink with a latency that adds up,
and the keyed rolling count's results are right."""
from collections import Counter

from benchmarks import latency, scaling, state_ops


def test_state_ops_counts_every_requested_operation_on_every_backend():
    measured = state_ops.main(["--keys", "50,400", "--ops", "3000", "--batch-size", "1000"])
    assert sorted(measured) == [50, 400]
    for results in measured.values():
        assert [r.name for r in results] == ["dict", "hashmap", "rocksdb"]
        for r in results:
            assert r.ops == 3000
            assert r.total == 3000  # the counts the ops added to the state
            assert r.op_seconds > 0 and r.ops_per_second > 0
        assert results[0].write_seconds == 0
        assert all(r.write_seconds > 0 for r in results[1:])


def test_state_ops_key_sequence_is_fixed_and_uses_the_requested_keys():
    sequence = state_ops.key_sequence(100, 5000)
    assert sequence == state_ops.key_sequence(100, 5000)
    assert len(sequence) == 5000
    assert set(sequence) == {f"key-{i}" for i in range(100)}
    assert sequence[:100] != sorted(sequence[:100])  # not in key order


def test_latency_of_every_offered_record_is_measured_and_adds_up():
    measured = latency.main(["--rates", "2000", "--seconds", "1", "--warmup", "0.3",
                             "--executor", "local", "--interval-ms", "50", "--keys", "7"])
    [(executor, rate, m)] = measured
    assert (executor, rate) == ("local", 2000)
    assert m.offered >= 2000 * 1.3 * 0.9
    assert m.received == m.offered
    # the keyed ValueState counted each key's records
    assert m.counts == {f"k{key}": n for key, n in Counter(i % 7 for i in range(m.offered)).items()}
    assert 0.9 * 2000 <= len(m.latency) <= m.offered
    assert len(m.latency) == len(m.committed) == len(m.waiting) == len(m.in_batch)
    for values in (m.latency, m.committed, m.waiting, m.in_batch):
        assert values == sorted(values) and values[0] >= 0
    assert m.latency[-1] < 5000
    assert m.committed[-1] >= m.latency[-1]  # a batch commits after its sink writes
    assert m.batches and sum(b.records for b in m.batches) <= m.offered
    for batch in m.batches:
        assert batch.seconds["run"] > 0 and batch.committed >= batch.run_ended


def test_scaling_parallelism_measures_both_parallelisms():
    [row] = scaling.main(["parallelism", "--workloads", "W2", "--n", "4000",
                          "--executor", "local"])
    assert row["workload"] == "W2"
    assert row["results"] == 4000  # a rolling count: one result per record
    assert row["p1"] > 0 and row["p2"] > 0


def test_scaling_growth_runs_the_keyed_count_right_and_samples_memory():
    rows = scaling.main(["growth", "--n", "2000,3000", "--keys", "10,5000",
                         "--executor", "local", "--micro-batch-size", "1000"])
    assert [(r["run"], r["n"]) for r in rows] == [
        ("W2", 2000), ("W2", 3000), ("KeyedCount 10", 3000), ("KeyedCount 5,000", 5000)]
    assert [r["result"] for r in rows[:2]] == [2000, 3000]
    assert rows[2]["result"] == (3000, scaling.expected_count_sum(3000, 10), 10)
    assert rows[3]["result"] == (5000, 5000, 5000)
    for r in rows:
        assert r["rate"] > 0 and r["driver_mb"] > 0
        assert r["lifetime_mb"] >= r["driver_mb"] * 0.9


def test_expected_count_sum_is_the_sum_of_rolling_counts():
    for n, keys in ((0, 3), (7, 3), (9, 3), (5, 10), (1000, 7)):
        counts = Counter(i * 7919 % keys for i in range(n))
        assert scaling.expected_count_sum(n, keys) == sum(c * (c + 1) // 2
                                                          for c in counts.values())
