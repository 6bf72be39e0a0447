"""Checkpoints and savepoints on an object store (``s3://``), against a local
S3-compatible server: moto's ThreadedMotoServer, a real S3 HTTP endpoint started in
the test process (MinIO, the usual choice, has no PyPI package). The bucket keeps
every version of every object, so the tests see each write, not only what is left."""
import os
import uuid
from collections import Counter

import pytest

from api.common import Types
from api.datastream.connectors.file_system import BucketAssigner, Encoder, FileSink
from engine.graph import PlanError
from tests.checkpoint.test_savepoints import Count, _count_lines
from tests.conftest import finished_lines, make_env

moto_server = pytest.importorskip("moto.server")
boto3 = pytest.importorskip("boto3")
pytest.importorskip("s3fs")

RECORDS = 300
KEYS = 5
RECORD_TYPE = Types.TUPLE([Types.STRING(), Types.LONG()])
BACKENDS = {"hashmap": {}, "rocksdb-incremental": {"state.backend.type": "rocksdb",
                                                   "state.backend.incremental": "true"}}


@pytest.fixture(scope="module")
def s3_endpoint():
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


@pytest.fixture
def bucket(s3_endpoint):
    """A fresh versioned bucket; its name and a client to inspect it."""
    client = boto3.client("s3", endpoint_url=s3_endpoint, aws_access_key_id="test-key",
                          aws_secret_access_key="test-secret", region_name="us-east-1")
    name = f"bucket-{uuid.uuid4().hex[:12]}"
    client.create_bucket(Bucket=name)
    client.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
    return name, client


def _s3_conf(s3_endpoint, bucket_name):
    return {"state.checkpoints.dir": f"s3://{bucket_name}/jobs",
            "state.savepoints.dir": f"s3://{bucket_name}/savepoints",
            "s3.endpoint": s3_endpoint, "s3.access-key": "test-key",
            "s3.secret-key": "test-secret", "s3.path.style.access": "true"}


def _events():
    return [(f"k{i % KEYS}", i) for i in range(RECORDS)]


def _build(env, out):
    (env.from_collection(_events(), RECORD_TYPE).uid("events")
        .key_by(lambda e: e[0])
        .process(Count(), Types.STRING()).uid("counts")
        .sink_to(FileSink.for_row_format(str(out), Encoder.simple_string_encoder())
                 .with_bucket_assigner(BucketAssigner.base_path_bucket_assigner())
                 .build()))



def _versions(client, bucket_name, prefix=""):
    """key -> [(last modified, is a delete marker)] of every write and delete ever."""
    versions = {}
    pages = client.get_paginator("list_object_versions").paginate(Bucket=bucket_name,
                                                                   Prefix=prefix)
    for page in pages:
        for v in page.get("Versions", []):
            versions.setdefault(v["Key"], []).append((v["LastModified"], False))
        for m in page.get("DeleteMarkers", []):
            versions.setdefault(m["Key"], []).append((m["LastModified"], True))
    return versions


def _stop_with_savepoint(executor, conf, out, parallelism=2):
    env = make_env(executor, parallelism=parallelism, micro_batch_size=20, **conf)
    _build(env, out)
    client = env.execute_async("counting")
    path = client.stop_with_savepoint(False).result(timeout=120)
    client.get_job_execution_result().result(timeout=120)
    assert client.get_job_status().result().name == "FINISHED"
    return path


def _check_written_once_with_metadata_last(client, bucket_name, savepoint):
    """Every object of the savepoint was written once (no temporary names renamed into
    place, nothing overwritten) and its _metadata last."""
    prefix = savepoint.split(f"s3://{bucket_name}/", 1)[1] + "/"
    written = _versions(client, bucket_name, prefix)
    assert prefix + "_metadata" in written and len(written) > 1  # state files too
    for key, history in written.items():
        assert history == [(history[0][0], False)], f"{key} written more than once: {history}"
    assert not [k for k in _versions(client, bucket_name) if "/.tmp-" in k]
    metadata_time = written.pop(prefix + "_metadata")[0][0]
    assert all(history[0][0] <= metadata_time for history in written.values())


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("restore_parallelism", [1, 3])
def test_a_keyed_job_on_s3_stops_with_a_savepoint_and_restores_at_another_parallelism(
        tmp_path, monkeypatch, s3_endpoint, bucket, backend, restore_parallelism):
    bucket_name, client = bucket
    conf = dict(_s3_conf(s3_endpoint, bucket_name), **BACKENDS[backend])
    out = tmp_path / "out"
    monkeypatch.chdir(tmp_path)
    path = _stop_with_savepoint("local", conf, out)
    assert os.listdir(tmp_path) == ["out"]  # nothing of the job's directory written locally
    assert path.startswith(f"s3://{bucket_name}/savepoints/savepoint-")
    first = finished_lines(out)
    assert first and len(first) < RECORDS  # stopped early: the rest is still to come
    _check_written_once_with_metadata_last(client, bucket_name, path)
    stored = list(_versions(client, bucket_name, path.split("/", 3)[3]))
    assert any(k.endswith(".incremental") for k in stored) == (backend != "hashmap")
    history = _versions(client, bucket_name, "jobs/")  # the live job directory's
    assert any("/metadata/" in k for k in history)
    assert any("/state/counts/" in k for k in history)
    assert not any(k.endswith("metrics.jsonl") for k in history)

    env = make_env("local", parallelism=restore_parallelism, micro_batch_size=20,
                   **conf, **{"execution.savepoint.path": path})
    _build(env, out)
    env.execute("counting")
    assert Counter(finished_lines(out)) == Counter(_count_lines(_events()))
    # A finished job deletes its directory; the savepoint stays.
    live = client.list_objects_v2(Bucket=bucket_name, Prefix="jobs/").get("KeyCount")
    assert live == 0
    assert client.list_objects_v2(Bucket=bucket_name, Prefix=path.split("/", 3)[3] + "/")[
        "KeyCount"] > 1


def test_a_sink_that_stages_in_the_job_directory_is_refused_at_build_time(
        tmp_path, s3_endpoint, bucket):
    bucket_name, client = bucket
    env = make_env("local", **_s3_conf(s3_endpoint, bucket_name))
    (env.from_collection(_events(), RECORD_TYPE).key_by(lambda e: e[0])
        .process(Count(), Types.STRING()).write_as_text(str(tmp_path / "text")))
    with pytest.raises(PlanError, match="stages each batch .* local 'state.checkpoints.dir'"):
        env.execute("staged")
    assert client.list_objects_v2(Bucket=bucket_name).get("KeyCount") == 0


def test_spark_workers_write_state_to_s3_and_a_local_run_restores_it(
        tmp_path, s3_endpoint, bucket, spark):
    bucket_name, client = bucket
    conf = _s3_conf(s3_endpoint, bucket_name)
    out = tmp_path / "out"
    path = _stop_with_savepoint("spark", conf, out)
    _check_written_once_with_metadata_last(client, bucket_name, path)
    assert 0 < len(finished_lines(out)) < RECORDS
    env = make_env("local", parallelism=3, micro_batch_size=20, **conf,
                   **{"execution.savepoint.path": path})
    _build(env, out)
    env.execute("counting")
    assert Counter(finished_lines(out)) == Counter(_count_lines(_events()))


def test_an_interrupted_checkpoint_on_s3_is_no_checkpoint_and_is_replaced(s3_endpoint, bucket):
    from checkpoint import storage
    from checkpoint.job_directory import JobDirectory, export_checkpoint
    from checkpoint.metadata import CommitRecord, OperatorInfo
    bucket_name, client = bucket
    storage.configure(storage.options_from_configuration(_s3_conf(s3_endpoint, bucket_name)))
    directory = JobDirectory(f"s3://{bucket_name}/jobs/job")
    directory.store.write("op", (0, 127), 0, "snapshot", {3: {"k": 1}})
    record = CommitRecord("job", 0, "hashmap", {"op": OperatorInfo("Op", 1, 128)}, {}, 0)
    directory.commit(record)
    client.put_object(Bucket=bucket_name, Key="jobs/job/chk-1/state/op/0-127/9.snapshot",
                      Body=b"left by a crashed export")
    assert directory.checkpoint_ids() == []
    directory.write_checkpoint(1, record, num_retained=1)
    assert directory.checkpoint_ids() == [1]
    assert sorted(_versions(client, bucket_name, "jobs/job/chk-1/")) == [
        "jobs/job/chk-1/_metadata", "jobs/job/chk-1/state/op/0-127/0.snapshot",
        "jobs/job/chk-1/state/op/0-127/9.snapshot"]  # (the leftover: deleted)
    assert client.list_objects_v2(Bucket=bucket_name, Prefix="jobs/job/chk-1/state/op/0-127/9")[
        "KeyCount"] == 0
    with pytest.raises(FileExistsError):
        export_checkpoint(directory.store, record, directory.checkpoint_path(1))
    point = directory.find_restore_point()
    assert point.record.batch_id == 0
    assert dict(point.store.read(point.store.list_files("op")[0]).groups) == {3: {"k": 1}}
