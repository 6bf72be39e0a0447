"""Stage graphs on Spark: what each stage leaves for the driver reaches it, whichever
stages a stage feeds (one, several, or none); on a local master a batch is one Spark
stage where it can be."""
import glob
import os
import threading
from types import SimpleNamespace

import pytest

from api.datastream import MapFunction
from engine.errors import JobExecutionException
from engine.executor import task_host
from engine.executor.spark import one_task_per_partition, task_attempts
from engine.runtime import task
from tests.conftest import make_env


def fan_out_and_in(executor, **conf):
    """One stage feeding two keyed stages, whose union feeds a third."""
    env = make_env(executor, parallelism=2, micro_batch_size=3, **conf)
    base = env.from_collection(list(range(20))).map(lambda x: (x % 3, x % 2, x))
    by_three = base.key_by(lambda r: r[0]).reduce(lambda p, q: (p[0], p[1], p[2] + q[2]))
    by_two = base.key_by(lambda r: r[1]).reduce(lambda p, q: (p[0], p[1], p[2] + q[2]))
    return sorted(by_three.union(by_two).key_by(lambda r: r[2] % 2)
                  .map(lambda r: ("out", r)).execute_and_collect())


def test_a_stage_feeding_several_stages_gives_the_local_executors_results(spark):
    assert fan_out_and_in("spark") == fan_out_and_in("local")
    assert len(fan_out_and_in("local")) == 40


def test_with_object_reuse_a_stage_feeding_several_gives_the_local_executors_results(spark):
    """Chunks for a subtask's own index stay in the host its index's stages share."""
    assert fan_out_and_in("spark", **{"pipeline.object-reuse": "true"}) == \
        fan_out_and_in("local")


@pytest.mark.parametrize("object_reuse", [True, False])
def test_only_with_object_reuse_a_record_for_the_own_index_is_not_pickled(spark,
                                                                          object_reuse):
    env = make_env("spark", parallelism=1, micro_batch_size=2,  # in a host, then the last
                   **{"pipeline.object-reuse": str(object_reuse).lower()})
    locked = env.from_collection(["a", "b", "a"]).map(lambda x: (x, threading.Lock())) \
        .key_by(lambda r: r[0]).map(lambda r: (r[0], type(r[1]).__name__))
    if object_reuse:
        assert sorted(locked.execute_and_collect()) == [("a", "lock"), ("a", "lock"),
                                                        ("b", "lock")]
    else:
        with pytest.raises(JobExecutionException, match="cannot be pickled"):
            list(locked.execute_and_collect())


def exchange_batches(run_id: str = "*") -> list:
    """The batch directories of chunk files on this machine, of a run (or of any)."""
    return glob.glob(os.path.join(task_host.run_directory(run_id), "exchange", "*"))


class SeesExchangeFiles(MapFunction):
    """Counts the chunk files' batch directories, and their files, of its job."""

    def map(self, value):
        (run_id,) = task._jobs  # (it runs in a subtask host, which serves one run)
        batches = exchange_batches(run_id)
        return value, len(batches), sum(len(os.listdir(b)) for b in batches), run_id


def test_on_a_local_master_chunks_cross_stages_in_files_kept_for_their_batch_only(spark):
    env = make_env("spark", parallelism=2, micro_batch_size=5)  # 3 batches
    out = list(env.from_collection(list(range(30))).key_by(lambda x: x % 3)
               .map(SeesExchangeFiles()).execute_and_collect())
    assert sorted(value for value, _, _, _ in out) == list(range(30))
    assert {batches for _, batches, _, _ in out} == {1}  # the running batch's, no other
    assert all(files > 0 for _, _, files, _ in out)
    (run_id,) = {run_id for _, _, _, run_id in out}
    assert exchange_batches(run_id) == []


class SparkStage(MapFunction):
    """Adds to a tuple the Spark stage its task runs in."""

    def map(self, value):
        from pyspark import TaskContext
        return value + (TaskContext.get().stageId(),)


def test_on_a_local_master_a_batch_of_several_stages_is_one_spark_stage(spark):
    env = make_env("spark", parallelism=2)  # one batch
    tagged = env.from_collection([(x,) for x in range(40)]).map(SparkStage()) \
        .key_by(lambda r: r[0] % 5).map(SparkStage())
    out = sorted(tagged.execute_and_collect())
    assert [value for value, _, _ in out] == list(range(40))
    assert len({stage for _, before, after in out for stage in (before, after)}) == 1


def plan_of(*parallelisms):
    return SimpleNamespace(stages=[SimpleNamespace(parallelism=p) for p in parallelisms])


@pytest.mark.parametrize("plan,master,conf,attempts,expected", [
    (plan_of(2, 2), "local[2]", {}, 1, True),
    (plan_of(1, 2), "local[2]", {}, 1, True),
    (plan_of(2), "local[2]", {}, 1, True),              # one stage: the driver runs it too
    (plan_of(2, 3), "local[2]", {}, 1, False),          # not every subtask at once
    (plan_of(2, 2), "local[2]", {"spark.task.cpus": "2"}, 1, False),
    (plan_of(1, 1), "local", {}, 1, True),
    (plan_of(3, 3), "local[*]", {}, 1, True),           # the JVM sees 3 processors
    (plan_of(4, 4), "local[*]", {}, 1, False),
    (plan_of(2, 2), "local[4, 3]", {}, 3, False),       # Spark retries failed tasks
    (plan_of(2, 2), "local-cluster[2,1,1024]", {}, 1, False),
    (plan_of(2, 2), "spark://127.0.0.1:7077", {}, 1, False),
])
def test_a_batch_is_one_task_per_partition_where_every_subtask_runs_at_once_untried_again(
        plan, master, conf, attempts, expected):
    assert one_task_per_partition(plan, master, conf, attempts, lambda: 3) is expected


@pytest.mark.parametrize("master,conf,attempts", [
    ("local[2, 3]", {}, 3), ("local[*,2]", {}, 2), ("local[2]", {}, 1), ("local", {}, 1),
    ("spark://127.0.0.1:7077", {"spark.task.maxFailures": "5"}, 5),
    ("spark://127.0.0.1:7077", {}, 4)])
def test_spark_runs_a_failing_task_as_often_as_its_master_says(master, conf, attempts):
    assert task_attempts(master, conf) == attempts
