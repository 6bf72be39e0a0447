"""Keyed state operations per second on one core: ValueState ``value()`` + ``update()``
on the hashmap and the RocksDB backend, beside a plain dict doing the same.

    python -m benchmarks.state_ops --keys 10000,1000000 --ops 2000000

For each key count K: ``--ops`` read-modify-writes (``count.update((count.value() or 0)
+ 1)``) of str keys drawn uniformly from K with a fixed seed, in micro-batches of
``--batch-size`` ops. The backends are used as the engine's keyed operators use them
(``engine.runtime.operators.chunks.Cursor``: ``backend.set_current_key(key)`` per record, then
the ValueState from ``backend.state(spec)``); after each batch ``write_version`` writes
the batch's changelog, as ``engine.runtime.task.StageInstance._write_state`` does. Every key is
set once before timing (the state of a job that has run a while) and version 0, a full
snapshot, is written untimed. The dict does ``d[key] = d.get(key, 0) + 1``.

Printed per backend: ops/s of the state calls alone, the seconds of the batches'
``write_version`` calls, ops/s with them, and the ratio to the dict's ops/s.
"""
import argparse
import os
import random
import tempfile
import time
from typing import List, Sequence

from checkpoint.state_store import StateStore
from statebackends.hashmap import HashMapKeyedStateBackend
from statebackends.rocksdb import RocksDBKeyedStateBackend
from core.state_spec import StateKind, StateSpec

MAX_PARALLELISM = 128
COUNT = StateSpec("count", StateKind.VALUE)
BACKENDS = {"hashmap": HashMapKeyedStateBackend, "rocksdb": RocksDBKeyedStateBackend}
GOALS = {"hashmap": 1_000_000, "rocksdb": 300_000}  # ops/s per core (issue 11)


class Result:
    """One measurement: ``ops`` state read-modify-writes in ``op_seconds``, plus
    ``write_seconds`` of ``write_version`` after the batches; ``total`` is the sum of the
    counts the ops left in the state (equal to ``ops`` on top of the prefill)."""

    def __init__(self, name: str, ops: int, op_seconds: float, write_seconds: float,
                 total: int):
        self.name = name
        self.ops = ops
        self.op_seconds = op_seconds
        self.write_seconds = write_seconds
        self.total = total

    @property
    def ops_per_second(self) -> float:
        return self.ops / self.op_seconds

    @property
    def ops_per_second_with_writes(self) -> float:
        return self.ops / (self.op_seconds + self.write_seconds)


def key_sequence(keys: int, ops: int, seed: int = 7) -> List[str]:
    """``ops`` keys drawn uniformly from ``keys`` distinct str keys (fixed seed)."""
    names = [f"key-{i}" for i in range(keys)]
    rng = random.Random(seed)
    return [names[i] for i in (rng.randrange(keys) for _ in range(ops))]


def _batches(sequence: Sequence, size: int):
    for start in range(0, len(sequence), size):
        yield sequence[start:start + size]


def measure_dict(keys: int, sequence: Sequence[str], batch_size: int) -> Result:
    state = {f"key-{i}": 1 for i in range(keys)}
    seconds = 0.0
    for batch in _batches(sequence, batch_size):
        get = state.get
        started = time.perf_counter()
        for key in batch:
            state[key] = get(key, 0) + 1
        seconds += time.perf_counter() - started
    return Result("dict", len(sequence), seconds, 0.0, sum(state.values()) - keys)


def measure_backend(name: str, keys: int, sequence: Sequence[str], batch_size: int) -> Result:
    """``name``'s backend over every key group (one operator instance at parallelism 1)."""
    with tempfile.TemporaryDirectory(prefix="state-ops-") as root:
        store = StateStore(os.path.join(root, "store"))
        options = {"local_dir": root} if name == "rocksdb" else {}
        backend = BACKENDS[name]("op", (0, MAX_PARALLELISM - 1), MAX_PARALLELISM, **options)
        try:
            count = backend.state(COUNT)
            set_key = backend.set_current_key
            for i in range(keys):
                set_key(f"key-{i}")
                count.update(1)
            backend.write_version(store, 0)
            op_seconds = write_seconds = 0.0
            for version, batch in enumerate(_batches(sequence, batch_size), start=1):
                value, update = count.value, count.update
                started = time.perf_counter()
                for key in batch:
                    set_key(key)
                    update((value() or 0) + 1)
                written = time.perf_counter()
                backend.write_version(store, version)
                op_seconds += written - started
                write_seconds += time.perf_counter() - written
            total = sum(v for _, _, _, v in backend.entries()) - keys
        finally:
            backend.close()
    return Result(name, len(sequence), op_seconds, write_seconds, total)


def measure(keys: int, ops: int, batch_size: int, backends=tuple(BACKENDS)) -> List[Result]:
    """The dict, then each backend, over the same key sequence."""
    sequence = key_sequence(keys, ops)
    results = [measure_dict(keys, sequence, batch_size)]
    results += [measure_backend(name, keys, sequence, batch_size) for name in backends]
    return results


def main(argv=None):
    """Prints the table; returns {keys: [Result of the dict, then each backend]}."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--keys", default="10000,1000000", help="distinct keys, comma-separated")
    p.add_argument("--ops", type=int, default=2_000_000, help="read-modify-writes per run")
    p.add_argument("--batch-size", type=int, default=500_000,
                   help="ops per micro-batch (write_version after each)")
    p.add_argument("--backends", default=",".join(BACKENDS))
    opts = p.parse_args(argv)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.1f}, "
          f"{opts.ops:,} ops in batches of {opts.batch_size:,}, one core")
    header = (f"{'keys':>9} {'state':8} {'ops/s':>11} {'write s':>8} {'ops/s+write':>11} "
              f"{'vs dict':>7} {'goal':>9}")
    print(header)
    print("-" * len(header))
    measured = {}
    for keys in (int(k) for k in opts.keys.split(",")):
        results = measured[keys] = measure(keys, opts.ops, opts.batch_size,
                                           opts.backends.split(","))
        base = results[0].ops_per_second
        for r in results:
            assert r.total == r.ops, (r.name, r.total, r.ops)
            goal = GOALS.get(r.name)
            verdict = "" if goal is None else (
                f"{'met' if r.ops_per_second >= goal else 'missed'} {goal // 1000}K")
            print(f"{keys:>9} {r.name:8} {r.ops_per_second:>11,.0f} {r.write_seconds:>8.2f} "
                  f"{r.ops_per_second_with_writes:>11,.0f} {r.ops_per_second / base:>7.3f} "
                  f"{verdict:>9}", flush=True)
    return measured


if __name__ == "__main__":
    main()
