"""The cost of a RocksDB state snapshot: seconds and bytes written, full vs incremental.

    python -m benchmarks.checkpoint_cost --keys 100000,1000000

For each key count: one RocksDBKeyedStateBackend (one key-group range, as one operator
instance) fills a ValueState of ``(word, count)`` per key, then writes snapshot
version 0; then 1% of the keys change and it writes snapshot version 1 (snapshot
interval 1, so both versions are snapshots). Printed per mode and version: seconds of
``write_version`` and the bytes it added to the state directory (new files; a hard
link of an already shared file adds nothing). "full" is the hashmap-compatible
snapshot file, "incremental" the RocksDB checkpoint with shared SST files. The state
directory and the working directory are on the same file system (hard links).
"""
import argparse
import os
import tempfile
import time

from checkpoint.state_store import StateStore
from statebackends.rocksdb import RocksDBKeyedStateBackend
from core.state_spec import StateKind, StateSpec

MAX_PARALLELISM = 128


def _files(directory: str) -> dict:
    """{inode: size} of the files under ``directory``."""
    found = {}
    for parent, _, names in os.walk(directory):
        for name in names:
            stat = os.stat(os.path.join(parent, name))
            found[stat.st_ino] = stat.st_size
    return found


def measure(n: int, incremental: bool):
    with tempfile.TemporaryDirectory() as root:
        store = StateStore(os.path.join(root, "store"))
        backend = RocksDBKeyedStateBackend("op", (0, MAX_PARALLELISM - 1), MAX_PARALLELISM,
                                           snapshot_interval=1, local_dir=root,
                                           incremental=incremental)
        state = backend.state(StateSpec("count", StateKind.VALUE))
        rows = []
        for version, keys in ((0, range(n)), (1, range(0, n, 100))):
            for key in keys:
                backend.set_current_key(f"key-{key}")
                state.update((f"word-{key}", version + key))
            before = _files(root + "/store")
            start = time.perf_counter()
            backend.write_version(store, version)
            seconds = time.perf_counter() - start
            after = _files(root + "/store")
            written = sum(size for inode, size in after.items() if inode not in before)
            rows.append((version, seconds, written))
        backend.close()
        return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--keys", default="100000,1000000")
    opts = p.parse_args(argv)
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, load average {os.getloadavg()[0]:.1f}")
    print(f"{'keys':>9} {'mode':12} {'version':>7} {'changed':>9} {'s':>7} {'bytes':>13}")
    for n in (int(k) for k in opts.keys.split(",")):
        for incremental in (False, True):
            for version, seconds, written in measure(n, incremental):
                changed = n if version == 0 else len(range(0, n, 100))
                mode = "incremental" if incremental else "full"
                print(f"{n:>9} {mode:12} {version:>7} {changed:>9} {seconds:>7.2f} "
                      f"{written:>13,}", flush=True)


if __name__ == "__main__":
    main()
