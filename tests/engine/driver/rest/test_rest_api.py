"""The REST API against running jobs: every endpoint, with the field names of Flink's
REST API documentation (its ``rest_v1_dispatcher`` specification, written out below); a
savepoint and a stop over HTTP, then a run restored from the stop's savepoint; a cancel
over HTTP; control calls refused unless enabled; bad requests answered Flink's way."""
import re
import socket

import pytest

from tests.engine.driver.rest.rest_job import OPERATORS, call, get, job_id, start_job, \
    wait_until

# Flink's field names, from its REST API documentation.
OVERVIEW = {"taskmanagers", "slots-total", "slots-available", "jobs-running",
            "jobs-finished", "jobs-cancelled", "jobs-failed", "flink-version", "flink-commit"}
JOB_ID_WITH_STATUS = {"id", "status"}
JOB_SUMMARY = {"jid", "name", "state", "start-time", "end-time", "duration",
               "last-modification", "tasks"}
JOB_DETAILS = {"jid", "name", "isStoppable", "state", "start-time", "end-time", "duration",
               "maxParallelism", "now", "timestamps", "vertices", "status-counts", "plan"}
JOB_VERTEX = {"id", "name", "maxParallelism", "parallelism", "status", "start-time",
              "end-time", "duration", "tasks", "metrics"}
IO_METRICS = {"read-bytes", "read-bytes-complete", "write-bytes", "write-bytes-complete",
              "read-records", "read-records-complete", "write-records",
              "write-records-complete", "accumulated-busy-time"}
PLAN = {"jid", "name", "nodes"}
PLAN_NODE = {"id", "parallelism", "operator", "operator_strategy", "description",
             "optimizer_properties"}
PLAN_INPUT = {"num", "id", "ship_strategy", "exchange"}
CHECKPOINTING_STATISTICS = {"counts", "summary", "latest", "history"}
COUNTS = {"restored", "total", "in_progress", "completed", "failed"}
LATEST_CHECKPOINTS = {"completed", "savepoint", "failed", "restored"}
CHECKPOINT_STATISTICS = {"id", "status", "is_savepoint", "trigger_timestamp",
                         "latest_ack_timestamp", "state_size", "end_to_end_duration",
                         "num_subtasks", "num_acknowledged_subtasks", "checkpoint_type"}
COMPLETED_CHECKPOINT = CHECKPOINT_STATISTICS | {"external_path", "discarded"}
EXCEPTIONS = {"root-exception", "timestamp", "all-exceptions", "truncated",
              "exceptionHistory"}
EXCEPTION_HISTORY = {"entries", "truncated"}
ROOT_EXCEPTION = {"exceptionName", "stacktrace", "timestamp", "taskName", "location",
                  "concurrentExceptions"}
TRIGGER_RESPONSE = {"request-id"}
ASYNCHRONOUS_OPERATION_RESULT = {"status", "operation"}
HEX32 = re.compile(r"[0-9a-f]{32}$")
ENABLED = {"web.savepoint.enable": "true", "web.cancel.enable": "true"}


def _savepoint_result(url, job, request_id, timeout=120):
    """Polls a savepoint's status until it is COMPLETED; returns its operation."""
    def completed():
        body = get(f"{url}/jobs/{job}/savepoints/{request_id}")
        assert set(body) >= ASYNCHRONOUS_OPERATION_RESULT
        return body["operation"] if body["status"]["id"] == "COMPLETED" else None
    return wait_until(completed, timeout, "the savepoint")


def _sums(sink) -> dict:
    """The last running sum of each key."""
    sums = {}
    for key, total in sink.values():
        sums[key] = max(total, sums.get(key, 0))
    return sums


def test_every_endpoint_a_savepoint_and_a_stop_over_http_and_a_run_restored_from_it(
        tmp_path, spark):
    count = 3000
    client, url, _ = start_job(tmp_path, "spark", "rest-api", count=count, **ENABLED)
    job = job_id(url)
    assert HEX32.match(job) and job == str(client.get_job_id())

    overview = get(f"{url}/overview")
    assert set(overview) >= OVERVIEW and overview["jobs-running"] == 1
    assert get(f"{url}/jobs")["jobs"] == [{"id": job, "status": "RUNNING"}]
    summary, = get(f"{url}/jobs/overview")["jobs"]
    assert set(summary) >= JOB_SUMMARY and summary["name"] == "rest-api"
    assert summary["state"] == "RUNNING" and summary["tasks"]["running"] >= 5

    details = get(f"{url}/jobs/{job}")
    assert set(details) >= JOB_DETAILS and details["state"] == "RUNNING"
    names = [vertex["name"] for vertex in details["vertices"]]
    assert all(any(operator in name for name in names) for operator in OPERATORS), names
    for vertex in details["vertices"]:
        assert set(vertex) >= JOB_VERTEX and set(vertex["metrics"]) >= IO_METRICS
        assert HEX32.match(vertex["id"]) and vertex["status"] == "RUNNING"
    source = details["vertices"][0]
    assert source["name"] == "Source: events" and source["parallelism"] == 1
    reduce_ = next(v for v in details["vertices"] if "Reduce" in v["name"])
    assert reduce_["parallelism"] == 2

    plan = get(f"{url}/jobs/{job}/plan")["plan"]
    assert set(plan) >= PLAN and plan["jid"] == job
    assert [node["id"] for node in plan["nodes"]] == [v["id"] for v in details["vertices"]]
    for node in plan["nodes"]:
        assert set(node) >= PLAN_NODE
        for plan_input in node.get("inputs", []):
            assert set(plan_input) >= PLAN_INPUT
    reduce_input, = next(n for n in plan["nodes"] if n["id"] == reduce_["id"])["inputs"]
    assert reduce_input["ship_strategy"] == "HASH"

    # records flow: the source's records out rise between two reads
    first = get(f"{url}/jobs/{job}")["vertices"][0]["metrics"]["write-records"]
    wait_until(lambda: get(f"{url}/jobs/{job}")["vertices"][0]["metrics"]["write-records"]
               > first, what="more records")

    def reduce_metric_names():  # (an operator's state size is known after a checkpoint)
        names = {m["id"] for m in get(f"{url}/jobs/{job}/vertices/{reduce_['id']}/metrics")}
        return names if "Reduce.stateSize" in names else None
    metric_names = wait_until(reduce_metric_names, what="a checkpoint's state size")
    assert {"numRecordsIn", "numRecordsOut", "numRecordsInPerSecond", "numRecordsOutPerSecond",
            "currentInputWatermark", "busyTimeMsPerSecond", "Reduce.accumulatedBusyTime"} \
        <= metric_names
    busy = get(f"{url}/jobs/{job}/vertices/{reduce_['id']}/metrics?get=busyTimeMsPerSecond")
    assert 0 < float(busy[0]["value"]) <= 1000
    # (the reduce's task has worked; the source's batches may each round to 0 ms)
    busy_times = {v["id"]: v["metrics"]["accumulated-busy-time"]
                  for v in get(f"{url}/jobs/{job}")["vertices"]}
    assert busy_times[reduce_["id"]] > 0 and min(busy_times.values()) >= 0
    values = get(f"{url}/jobs/{job}/vertices/{reduce_['id']}/metrics"
                 "?get=numRecordsIn,numRecordsOutPerSecond,noSuchMetric")
    assert [m["id"] for m in values] == ["numRecordsIn", "numRecordsOutPerSecond"]
    assert all(isinstance(m["value"], str) for m in values) and int(values[0]["value"]) > 0
    watermarks = wait_until(lambda: [
        w for w in get(f"{url}/jobs/{job}/vertices/{reduce_['id']}/watermarks")
        if int(w["value"]) > 0], what="a watermark")
    assert {w["id"] for w in watermarks} == {"0.currentInputWatermark", "1.currentInputWatermark"}

    checkpoints = wait_until(lambda: (lambda c: c["counts"]["completed"] >= 1 and c)(
        get(f"{url}/jobs/{job}/checkpoints")), what="a checkpoint")
    assert set(checkpoints) >= CHECKPOINTING_STATISTICS
    assert set(checkpoints["counts"]) >= COUNTS and set(checkpoints["latest"]) >= LATEST_CHECKPOINTS
    latest = checkpoints["latest"]["completed"]
    assert set(latest) >= COMPLETED_CHECKPOINT and latest["status"] == "COMPLETED"
    assert latest["external_path"].endswith(f"chk-{latest['id']}") and latest["state_size"] > 0
    assert checkpoints["history"][0] == latest

    exceptions = get(f"{url}/jobs/{job}/exceptions")
    assert set(exceptions) >= EXCEPTIONS and set(exceptions["exceptionHistory"]) >= EXCEPTION_HISTORY
    assert exceptions["exceptionHistory"]["entries"] == []

    # a savepoint over HTTP
    status, trigger = call(f"{url}/jobs/{job}/savepoints", "POST",
                           {"target-directory": str(tmp_path / "savepoints")})
    assert status == 202 and set(trigger) == TRIGGER_RESPONSE and HEX32.match(trigger["request-id"])
    location = _savepoint_result(url, job, trigger["request-id"])["location"]
    assert location.startswith(str(tmp_path / "savepoints"))
    listed = wait_until(lambda: [c for c in get(f"{url}/jobs/{job}/checkpoints")["history"]
                                 if c["is_savepoint"]], what="the savepoint in the history")
    assert listed[0]["external_path"] == location and listed[0]["checkpoint_type"] == "SAVEPOINT"

    # a stop with a savepoint over HTTP; the ended job is still shown for a while
    status, trigger = call(f"{url}/jobs/{job}/stop", "POST",
                           {"targetDirectory": str(tmp_path / "stopped")})
    assert status == 202
    stopped = _savepoint_result(url, job, trigger["request-id"])["location"]
    assert stopped.startswith(str(tmp_path / "stopped"))
    client.get_job_execution_result().result(timeout=120)
    assert get(f"{url}/jobs")["jobs"] == [{"id": job, "status": "FINISHED"}]
    assert get(f"{url}/overview")["jobs-finished"] == 1

    # a new run from the stop's savepoint goes on with the sums where they were
    client, url, sink = start_job(tmp_path / "restored", "spark", "rest-api", count=count,
                                  rate=100_000, **{"execution.savepoint.path": stopped})
    client.get_job_execution_result().result(timeout=120)
    assert _sums(sink) == {f"k{r}": sum(range(r, count, 3)) for r in range(3)}


def test_a_failure_is_listed_and_a_cancel_over_http_cancels_the_job(tmp_path, spark):
    client, url, _ = start_job(tmp_path, "spark", "cancelled", fail_at=20, **ENABLED)
    job = job_id(url)
    entries = wait_until(lambda: get(f"{url}/jobs/{job}/exceptions")["exceptionHistory"][
        "entries"], what="the failure")
    exceptions = get(f"{url}/jobs/{job}/exceptions")
    assert set(entries[0]) >= ROOT_EXCEPTION
    assert "injected failure at record 20" in entries[0]["stacktrace"]
    assert exceptions["root-exception"] == entries[0]["stacktrace"]
    assert exceptions["timestamp"] == entries[0]["timestamp"]
    wait_until(lambda: get(f"{url}/jobs/{job}/checkpoints")["counts"]["completed"],
               what="a checkpoint after the restart")

    assert call(f"{url}/jobs/{job}?mode=cancel", "PATCH") == (202, {})
    client.cancel().result(timeout=120)  # (waits for the end: the job is cancelled already)
    assert client.get_job_status().result().name == "CANCELED"
    assert get(f"{url}/jobs")["jobs"] == [{"id": job, "status": "CANCELED"}]


def test_control_calls_are_refused_unless_enabled_and_bad_requests_answer_errors(tmp_path):
    client, url, _ = start_job(tmp_path, "local", "refusing")
    job = job_id(url)
    try:
        for method, path, body, key in [
                ("POST", f"/jobs/{job}/savepoints", {}, "web.savepoint.enable"),
                ("POST", f"/jobs/{job}/stop", {"drain": True}, "web.savepoint.enable"),
                ("PATCH", f"/jobs/{job}?mode=cancel", None, "web.cancel.enable")]:
            status, answer = call(url + path, method, body)
            assert status == 403 and key in answer["errors"][0], (path, answer)
        missing = "0" * 32
        for method, path, body, expected, reason in [
                ("GET", f"/jobs/{missing}", None, 404, f"Job {missing} not found"),
                ("GET", f"/jobs/{job}/vertices/{missing}/metrics", None, 404, "Vertex"),
                ("GET", f"/jobs/{job}/savepoints/{missing}", None, 404, "trigger id"),
                ("GET", "/no/such/thing", None, 404, "Not found: /no/such/thing"),
                ("DELETE", f"/jobs/{job}", None, 405, "allowed: GET, PATCH"),
                ("POST", f"/jobs/{job}/savepoints", b"{not json", 400, "not JSON"),
                ("POST", f"/jobs/{job}/savepoints", b"[1]", 400, "JSON object"),
                ("PATCH", f"/jobs/{job}?mode=stop", None, 400, "mode=cancel"),
                ("GET", "/static/../server.py", None, 404, "Not found")]:
            status, answer = call(url + path, method, body)
            assert status == expected and set(answer) == {"errors"}, (path, answer)
            assert reason in answer["errors"][0], (path, answer)
        assert get(f"{url}/jobs")["jobs"] == [{"id": job, "status": "RUNNING"}]
    finally:
        client.cancel().result(timeout=60)


def test_bad_control_requests_and_requests_from_other_pages(tmp_path):
    client, url, _ = start_job(tmp_path, "local", "checked", **ENABLED)
    job = job_id(url)
    try:
        for path, body, reason in [
                ("savepoints", {"target-directory": 7}, "'target-directory' must be a str"),
                ("savepoints", {"target-directory": "relative/dir"}, "absolute path"),
                ("stop", {"drain": "yes"}, "'drain' must be a bool")]:
            status, answer = call(f"{url}/jobs/{job}/{path}", "POST", body)
            assert status == 400 and reason in answer["errors"][0], answer
        status, answer = call(f"{url}/jobs/{job}/savepoints", "POST", {},
                              headers={"Origin": "http://evil.example"})
        assert status == 403 and "http://evil.example" in answer["errors"][0]
        status, answer = call(f"{url}/jobs/{job}/savepoints", "POST", {})  # no savepoint dir
        assert status == 202
        operation = _savepoint_result(url, job, answer["request-id"])
        assert "No savepoint directory configured" in operation["failure-cause"]["stack-trace"]
    finally:
        client.cancel().result(timeout=60)


def test_jobs_of_one_process_share_a_port_and_a_taken_port_fails_the_job(tmp_path):
    first, url, _ = start_job(tmp_path / "first", "local", "first")
    job_id(url)
    port = int(url.rsplit(":", 1)[1])
    second, _, _ = start_job(tmp_path / "second", "local", "second", **{"rest.port": port})
    try:
        jobs = wait_until(lambda: len(get(f"{url}/jobs")["jobs"]) == 2 and
                          get(f"{url}/jobs/overview")["jobs"], what="both jobs")
        assert {job["name"] for job in jobs} == {"first", "second"}
    finally:
        first.cancel().result(timeout=60)
        second.cancel().result(timeout=60)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        client, _, _ = start_job(tmp_path / "third", "local", "third",
                                 **{"rest.port": taken.getsockname()[1]})
        with pytest.raises(OSError, match="rest.port .*: cannot serve the REST API"):
            client.get_job_execution_result().result(timeout=60)


def test_an_invalid_port_fails_when_the_job_is_built(tmp_path):
    with pytest.raises(ValueError, match="'rest.port' takes a port within 0-65535"):
        start_job(tmp_path, "local", "bad-port", **{"rest.port": "eighty"})
