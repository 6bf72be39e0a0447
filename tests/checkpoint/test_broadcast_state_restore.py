"""Broadcast state in savepoints: stopped at parallelism 2, restored at 1 and 3, every
instance gets the stored broadcast state back (the broadcast source is finished by then)."""
import os
import time
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from api.common import Encoder, Types
from api.datastream import KeyedBroadcastProcessFunction, MapFunction
from api.datastream.connectors.file_system import BucketAssigner, FileSink
from api.datastream.state import MapStateDescriptor, ValueStateDescriptor
from tests.conftest import make_env

EVENTS = [(f"k{i % 5}", i) for i in range(300)]
RULES = [(f"k{i}", 10 ** i) for i in range(5)]
DEFAULT_RULES = RULES
FACTORS = MapStateDescriptor("factors", Types.STRING(), Types.LONG())


class Slow(MapFunction):
    def map(self, value):
        time.sleep(0.001)
        return value


class Scale(KeyedBroadcastProcessFunction):
    """Keyed running sum, scaled by the key's factor from the broadcast state."""

    def open(self, runtime_context):
        self.sum = runtime_context.get_state(ValueStateDescriptor("sum", Types.LONG()))

    def process_element(self, value, ctx):
        self.sum.update((self.sum.value() or 0) + value[1])
        yield f"{value[0]},{self.sum.value() * ctx.get_broadcast_state(FACTORS).get(value[0])}"

    def process_broadcast_element(self, value, ctx):
        ctx.get_broadcast_state(FACTORS).put(value[0], value[1])


def _expected(rules=DEFAULT_RULES):
    sums, lines = Counter(), []
    for key, value in EVENTS:
        sums[key] += value
        lines.append(f"{key},{sums[key] * dict(rules)[key]}")
    return Counter(lines)


def _run(tmp_path, parallelism, stop_early=False, rules=DEFAULT_RULES, batch=20, **conf):
    env = make_env("local", parallelism=parallelism, micro_batch_size=batch,
                   **{"state.savepoints.dir": str(tmp_path / "savepoints")}, **conf)
    rules = env.from_collection(rules).uid("rules").broadcast(FACTORS)
    (env.from_collection(EVENTS).uid("events").map(Slow()).set_parallelism(1).uid("slow")
        .key_by(lambda e: e[0]).connect(rules).process(Scale(), Types.STRING()).uid("scale")
        .sink_to(FileSink.for_row_format(str(tmp_path / "out"), Encoder.simple_string_encoder())
                 .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner()).build()))
    if not stop_early:
        env.execute("scaling")
        return None
    client = env.execute_async("scaling")
    path = client.stop_with_savepoint(False).result(timeout=60)
    client.get_job_execution_result().result(timeout=60)
    return path


def _lines(out):
    lines = []
    for name in os.listdir(out):
        if not name.startswith("."):
            with open(os.path.join(out, name)) as f:
                lines.extend(f.read().splitlines())
    return lines


@pytest.mark.parametrize("restore_parallelism", [1, 3])
def test_broadcast_state_is_restored_on_every_instance_at_another_parallelism(
        tmp_path, restore_parallelism):
    path = _run(tmp_path, parallelism=2, stop_early=True)
    before = _lines(tmp_path / "out")
    assert 0 < len(before) < len(EVENTS)
    stored = sorted(os.listdir(os.path.join(path, "state")))
    assert stored == ["scale", "scale%2Fbroadcast"]  # keyed and broadcast state
    _run(tmp_path, parallelism=restore_parallelism, **{"execution.savepoint.path": path})
    assert Counter(_lines(tmp_path / "out")) == _expected()


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(factors=st.lists(st.integers(-5, 5), min_size=5, max_size=5),
       stop_parallelism=st.integers(1, 3), restore_parallelism=st.integers(1, 4),
       batch=st.sampled_from([10, 20, 50]))
def test_any_rules_survive_a_savepoint_and_a_restore_at_any_parallelism(
        tmp_path_factory, factors, stop_parallelism, restore_parallelism, batch):
    tmp_path = tmp_path_factory.mktemp("run")
    # A later update of a rule wins: the broadcast state holds the last factor per key.
    rules = [(f"k{i}", 0) for i in range(5)] + [(f"k{i}", f) for i, f in enumerate(factors)]
    path = _run(tmp_path, stop_parallelism, stop_early=True, rules=rules, batch=batch)
    _run(tmp_path, restore_parallelism, rules=rules, batch=batch,
         **{"execution.savepoint.path": path})
    assert Counter(_lines(tmp_path / "out")) == _expected(rules)
