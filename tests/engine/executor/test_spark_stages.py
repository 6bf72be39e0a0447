"""Stage graphs on Spark: what each stage leaves for the driver reaches it, whichever
stages a stage feeds (one, several, or none)."""
from tests.conftest import make_env


def fan_out_and_in(executor):
    """One stage feeding two keyed stages, whose union feeds a third."""
    env = make_env(executor, parallelism=2, micro_batch_size=3)
    base = env.from_collection(list(range(20))).map(lambda x: (x % 3, x % 2, x))
    by_three = base.key_by(lambda r: r[0]).reduce(lambda p, q: (p[0], p[1], p[2] + q[2]))
    by_two = base.key_by(lambda r: r[1]).reduce(lambda p, q: (p[0], p[1], p[2] + q[2]))
    return sorted(by_three.union(by_two).key_by(lambda r: r[2] % 2)
                  .map(lambda r: ("out", r)).execute_and_collect())


def test_a_stage_feeding_several_stages_gives_the_local_executors_results(spark):
    assert fan_out_and_in("spark") == fan_out_and_in("local")
    assert len(fan_out_and_in("local")) == 40
