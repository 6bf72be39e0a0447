"""A rolling reduce keeps its running values per key across micro-batches, and a reduce
function that opens keyed state reads it at the key of the record it reduces."""
from collections import defaultdict

from api.common import Types
from api.datastream.functions import ReduceFunction
from api.datastream.state import ValueStateDescriptor


class SumCountingCalls(ReduceFunction):
    """Sums a key's values; its own keyed state counts the key's reduce calls."""

    def open(self, runtime_context):
        self.calls = runtime_context.get_state(ValueStateDescriptor("calls", Types.LONG()))

    def reduce(self, a, b):
        calls = (self.calls.value() or 0) + 1
        self.calls.update(calls)
        return a[0], a[1] + b[1], calls


def _running(records):
    """Per key, the values a rolling reduce emits for ``records`` (the reference)."""
    per_key, sums, calls = defaultdict(list), {}, defaultdict(int)
    for key, value, _ in records:
        if key in sums:
            calls[key] += 1
            sums[key] += value
            per_key[key].append((key, sums[key], calls[key]))
        else:
            sums[key] = value
            per_key[key].append((key, value, 0))
    return dict(per_key)


def _per_key(results):
    per_key = defaultdict(list)
    for result in results:
        per_key[result[0]].append(result)
    return dict(per_key)


def test_a_reduce_function_with_keyed_state_reads_the_state_of_its_key(env_factory):
    records = [(f"k{i * 7 % 5}", i, 0) for i in range(40)]
    # Batches of 8 records: a key's second record of a batch follows other keys'.
    env = env_factory(parallelism=2, micro_batch_size=8)
    reduced = env.from_collection(records).key_by(lambda r: r[0]).reduce(SumCountingCalls())
    with reduced.execute_and_collect() as results:
        assert _per_key(results) == _running(records)


def test_a_rolling_sum_goes_on_across_micro_batches(env_factory):
    records = [(f"k{i * 7 % 5}", i, 0) for i in range(40)]
    env = env_factory(parallelism=2, micro_batch_size=3)
    summed = env.from_collection(records).key_by(lambda r: r[0]) \
        .reduce(lambda a, b: (a[0], a[1] + b[1], 0))
    with summed.execute_and_collect() as results:
        assert _per_key(results) == {
            key: [(k, total, 0) for k, total, _ in values]
            for key, values in _running(records).items()}
