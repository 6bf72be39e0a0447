"""Metrics on Spark: the same counts as in-process, and the Spark job of a batch named
after the job, batch and operators (on a local master, the first batch's: the driver sends
the later batches straight to the subtask hosts it started)."""
from tests.conftest import GatheringSink, make_env

N = 60


def test_metrics_on_spark_and_the_batches_spark_jobs_are_named(spark):
    env = make_env("spark", parallelism=2, micro_batch_size=10)
    env.from_collection(list(range(N))).filter(lambda x: x % 3 != 0) \
        .key_by(lambda x: x % 4).map(lambda x: x).add_sink(GatheringSink())
    result = env.execute("named on spark")
    operators = result.get_metrics()["operators"]
    assert (operators["Filter"]["numRecordsIn"], operators["Filter"]["numRecordsOut"]) == \
        (N, N * 2 // 3)
    assert operators["Map"]["numRecordsIn"] == operators["Sink"]["numRecordsIn"] == N * 2 // 3
    last = result.get_metrics()["batch"]
    run = result.get_job_id().to_hex_string()[:8]
    tracker = spark.sparkContext.statusTracker()
    assert last > 0 and tracker.getJobIdsForGroup(f"named on spark [{run}] batch 0")
    assert not any(tracker.getJobIdsForGroup(f"named on spark [{run}] batch {batch_id}")
                   for batch_id in range(1, last + 1))
    description = spark.sparkContext.getLocalProperty("spark.job.description")
    assert description == ("named on spark: batch 0: "
                           "Source: Collection Source | Filter | Map -> Sink")
