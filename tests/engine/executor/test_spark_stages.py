"""Stage graphs on Spark: what each stage leaves for the driver reaches it, whichever
stages a stage feeds (one, several, or none)."""
import glob
import os

from api.datastream import MapFunction
from engine.executor import task_host
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


def exchange_batches() -> list:
    """The batch directories of chunk files on this machine, of any run."""
    return glob.glob(os.path.join(task_host.run_directory("*"), "exchange", "*"))


class SeesExchangeFiles(MapFunction):
    """Counts the chunk files' batch directories, and their files, of its job."""

    def __init__(self, other_jobs: list):
        self.other_jobs = set(other_jobs)

    def map(self, value):
        batches = set(exchange_batches()) - self.other_jobs
        return value, len(batches), sum(len(os.listdir(b)) for b in batches)


def test_on_a_local_master_chunks_cross_stages_in_files_kept_for_their_batch_only(spark):
    env = make_env("spark", parallelism=2, micro_batch_size=5)  # 3 batches
    before = exchange_batches()
    out = list(env.from_collection(list(range(30))).key_by(lambda x: x % 3)
               .map(SeesExchangeFiles(before)).execute_and_collect())
    assert sorted(value for value, _, _ in out) == list(range(30))
    assert {batches for _, batches, _ in out} == {1}  # the running batch's, no other
    assert all(files > 0 for _, _, files in out)
    assert exchange_batches() == before
