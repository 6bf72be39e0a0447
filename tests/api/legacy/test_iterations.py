"""Iterations (the streaming programming guide, FLIP-130): ``iterate()`` and
``close_with(feedback)``: records fed back reach the head one micro-batch later, the
job ends when its sources are finished and nothing is in flight, and the records seen
do not depend on the parallelism or the micro-batch size."""
import pytest
from hypothesis import given, settings, strategies as st

from api.common import Types
from api.common.restart_strategy import RestartStrategies
from tests.conftest import make_env


def _rounds(values, parallelism=1, micro_batch_size=100, executor="local"):
    """The guide's example: values minus one, fed back while positive; returns what the
    head saw and what left the loop."""
    env = make_env(executor, parallelism=parallelism, micro_batch_size=micro_batch_size)
    head = env.from_collection(values, Types.INT()).iterate()
    seen = head.map(lambda x: ("seen", x), Types.TUPLE([Types.STRING(), Types.INT()]))
    minus_one = head.map(lambda x: x - 1, Types.INT())
    head.close_with(minus_one.filter(lambda x: x > 0))
    left = minus_one.filter(lambda x: x <= 0).map(
        lambda x: ("left", x), Types.TUPLE([Types.STRING(), Types.INT()]))
    out = list(seen.union(left).execute_and_collect())
    return (sorted(x for tag, x in out if tag == "seen"),
            sorted(x for tag, x in out if tag == "left"))


def _model(values):
    """Brute force: every value v > 0 goes around v times (v, v-1, ..., 1)."""
    seen, left = [], []
    for v in values:
        while True:
            seen.append(v)
            v -= 1
            if v <= 0:
                left.append(v)
                break
    return sorted(seen), sorted(left)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(-2, 6), max_size=8), st.integers(1, 3), st.integers(1, 4))
def test_feedback_rounds_equal_the_model_at_any_parallelism_and_batch_size(
        values, parallelism, micro_batch_size):
    assert _rounds(values, parallelism, micro_batch_size) == _model(values)


def test_an_iteration_on_spark(spark):
    assert _rounds([3, 0, 2], parallelism=2, micro_batch_size=1, executor="spark") == \
        _model([3, 0, 2])


def test_an_iteration_never_closed_fails_at_build_time():
    env = make_env("local")
    env.from_collection([1], Types.INT()).iterate().print()
    with pytest.raises(ValueError, match="never closed: call close_with"):
        env.execute()


def test_checkpointing_or_restarting_an_iteration_is_refused_at_build_time(tmp_path):
    for conf in ({"state.checkpoints.dir": str(tmp_path)}, {}):
        env = make_env("local", **conf)
        if not conf:
            env.set_restart_strategy(RestartStrategies.fixed_delay_restart(3, 0))
        head = env.from_collection([1], Types.INT()).iterate()
        head.close_with(head.filter(lambda x: x > 5))
        with pytest.raises(ValueError, match="iteration cannot be"):
            env.execute()
