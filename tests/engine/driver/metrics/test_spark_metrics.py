"""Metrics on Spark: the same counts as in-process, and each batch's Spark job named
after the job, batch and operators."""
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
    for batch_id in range(last + 1):
        assert tracker.getJobIdsForGroup(f"named on spark [{run}] batch {batch_id}")
    description = spark.sparkContext.getLocalProperty("spark.job.description")
    assert description == (f"named on spark: batch {last}: "
                           "Source: Collection Source | Filter | Map -> Sink")
