"""State grouped otherwise is regrouped on restore: savepoints that releases before
PyFlink's key placement wrote (crc32 key groups, no placement in their files) restore with
every key's state, at their parallelism and at another.

``data/savepoint-*`` were made by ``keyed_counts_job.py`` with the code of main before the
change (see its docstring): parallelism 2, stopped with a savepoint after a few batches.
"""
import re
import shutil
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from checkpoint.state_store import StateStore
from core.keygroups import KeyType
from statebackends.base import PLACEMENT_META
from statebackends.hashmap import HashMapKeyedStateBackend
from tests.conftest import make_env
from tests.statebackends.keyed_counts_job import EVENTS, build

DATA = Path(__file__).parent / "data"
BACKENDS = {"hashmap": {"state.backend.type": "hashmap"},
            "rocksdb-incremental": {"state.backend.type": "rocksdb",
                                    "state.backend.incremental": "true"}}
LINE = re.compile(r"^(?:\d+> )?(typed|untyped) (.+) (\d+)$")


@pytest.mark.parametrize("backend, executor, parallelism", [
    ("hashmap", "local", 2), ("hashmap", "local", 3), ("hashmap", "spark", 3),
    ("rocksdb-incremental", "local", 2), ("rocksdb-incremental", "local", 3)])
def test_counts_go_on_from_a_savepoint_of_the_earlier_key_groups(
        tmp_path, capsys, request, backend, executor, parallelism):
    if executor == "spark":
        request.getfixturevalue("spark")
    savepoint = tmp_path / "savepoint"
    shutil.copytree(DATA / f"savepoint-{backend}", savepoint)
    env = make_env(executor, parallelism=parallelism, micro_batch_size=10,
                   **{"execution.savepoint.path": str(savepoint)}, **BACKENDS[backend])
    build(env)
    env.execute("keyed counts")
    counts = defaultdict(list)
    for line in capsys.readouterr().out.splitlines():
        name, key, count = LINE.match(line).groups()
        counts[name, key].append(int(count))
    totals = {**{("typed", repr(k)): n for k, n in Counter(e[0] for e in EVENTS).items()},
              **{("untyped", repr(k)): n
                 for k, n in Counter((e[0], e[1] % 2) for e in EVENTS).items()}}
    assert sum(map(len, counts.values())) < 2 * len(EVENTS)  # it went on from the savepoint
    for key, total in totals.items():  # each key's count went on from its restored count
        seen = sorted(counts[key])
        assert seen == list(range(total - len(seen) + 1, total + 1)), key


def test_a_regrouped_backend_writes_a_snapshot_in_the_new_placement(tmp_path):
    """After regrouping, the next version is a snapshot recording its placement, so that no
    later restore mixes files grouped two ways."""
    savepoint = tmp_path / "savepoint"
    shutil.copytree(DATA / "savepoint-hashmap", savepoint)
    store = StateStore(str(savepoint))
    version = max(f.version for f in store.list_files("typed"))
    assert {store.read_meta(f).get(PLACEMENT_META) for f in store.list_files("typed")} == {None}
    backend = HashMapKeyedStateBackend.restore(store, "typed", (0, 42), 128, version,
                                               key_type=KeyType("STRING"))
    backend.write_version(store, version + 1)
    written = [f for f in store.list_files("typed") if f.version == version + 1]
    assert [(f.kind, store.read_meta(f)[PLACEMENT_META]) for f in written] == \
        [("snapshot", "pyflink:STRING")]
