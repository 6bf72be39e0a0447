"""What the SIGKILL tests share: a job script run in a process of its own, killed at
random points after given batches committed, then run to its end; and the keyed count
their jobs compute."""
import os
import random
import signal
import subprocess
import tempfile
import time
from collections import Counter

from api.common import Types
from api.datastream import KeyedProcessFunction
from api.datastream.state import ValueStateDescriptor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Count(KeyedProcessFunction):
    """Emits ``(key, n, value)`` for the key's n-th record ``(key, value)``; slow enough
    (``pause`` s a record) that a kill lands mid-job."""

    def __init__(self, pause: float = 0.001):
        self.pause = pause

    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("n", Types.INT()))

    def process_element(self, value, ctx):
        time.sleep(self.pause)
        n = (self.count.value() or 0) + 1
        self.count.update(n)
        yield value[0], n, value[1]


def run_with_kills(command: list, metadata, kill_after: list, seed: int) -> str:
    """Runs ``command`` once per batch id of ``kill_after``, killing it and every process
    it started (a Spark JVM and its workers) with SIGKILL a random moment after that
    batch committed (``metadata``: the job's metadata log), then once more to its end.
    Returns what the runs wrote to stderr."""
    rng = random.Random(seed)
    log = tempfile.TemporaryFile()  # (a pipe could fill up and stop the job)

    def start():
        return subprocess.Popen(command, cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
                                stdout=subprocess.DEVNULL, stderr=log,
                                start_new_session=True)

    def stderr() -> str:
        log.seek(0)
        return log.read().decode(errors="replace")

    def committed():
        return max((int(n) for n in os.listdir(metadata) if n.isdigit()), default=-1) \
            if os.path.exists(metadata) else -1

    with log:
        for batch_id in sorted(kill_after):
            process = start()
            while committed() < batch_id:
                assert process.poll() is None, stderr()
                time.sleep(0.005)
            time.sleep(rng.uniform(0, 0.2))
            assert process.poll() is None, "the job ended before it was killed"
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        process = start()
        process.wait(timeout=300)
        assert process.returncode == 0, stderr()
        return stderr()


def check_counted_once(rows, records) -> None:
    """``rows`` ``(key, n, value)`` hold every record ``(key, value)`` once, and each
    key's counts 1..n once."""
    found, wanted = Counter((k, v) for k, _, v in rows), Counter(records)
    assert found == wanted, (f"{len(rows)} rows for {len(records)} records: missing "
                             f"{sorted((wanted - found).elements())[:10]}, more than once "
                             f"{sorted((found - wanted).elements())[:10]}")
    per_key = Counter(k for k, _ in records)
    assert sorted((k, n) for k, n, _ in rows) == sorted(
        (k, n) for k, count in per_key.items() for n in range(1, count + 1))
