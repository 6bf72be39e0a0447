"""What the REST API's tests share: a running job with the REST API on a free port, and
a small client of it."""
import json
import os
import socket
import time
import urllib.error
import urllib.request
from typing import Optional, Tuple

from api.common import Types, WatermarkStrategy
from api.common.restart_strategy import RestartStrategies
from api.common.watermark_strategy import TimestampAssigner
from api.datastream import MapFunction
from api.datastream.connectors.datagen import DataGeneratorSource
from tests.conftest import GatheringSink, make_env

RECORD = Types.TUPLE([Types.STRING(), Types.LONG()])
OPERATORS = ("Source: events", "Timestamps/Watermarks", "Reduce", "Map", "Sink")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Seconds(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1] * 1000


class FailOnce(MapFunction):
    """Fails on record ``at`` the first time it sees it (a marker file remembers)."""

    def __init__(self, at: Optional[int], marker: str):
        self.at, self.marker = at, marker

    def map(self, value):
        if value[1] == self.at and not os.path.exists(self.marker):
            open(self.marker, "w").close()
            raise ValueError(f"injected failure at record {self.at}")
        return value


def start_job(tmp_path, executor: str, name: str, count: Optional[int] = None,
              rate: float = 300, fail_at: Optional[int] = None, **conf):
    """Starts the running sums of ``(k<i % 3>, i)`` (event time ``i`` seconds) with the
    REST API on a free port; returns its JobClient, the API's URL and the sink."""
    port = free_port()
    env = make_env(executor, parallelism=2, micro_batch_size=1000, **{
        "rest.port": port, "state.checkpoints.dir": tmp_path / "checkpoints", **conf})
    env.enable_checkpointing(300)
    env.set_restart_strategy(RestartStrategies.fixed_delay_restart(1, 10))
    sink = GatheringSink()
    (env.from_source(DataGeneratorSource(lambda i: (f"k{i % 3}", i), count, rate, RECORD),
                     WatermarkStrategy.no_watermarks(), "events").set_parallelism(1).uid("events")
     .assign_timestamps_and_watermarks(
         WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(Seconds()))
     .set_parallelism(1)
     .map(FailOnce(fail_at, str(tmp_path / "failed-once"))).name("Map").uid("fail-once")
     .key_by(lambda e: e[0])
     .reduce(lambda a, b: (a[0], a[1] + b[1])).name("Reduce").uid("sums")
     .add_sink(sink).name("Sink").uid("sink"))
    return env.execute_async(name), f"http://127.0.0.1:{port}", sink


def call(url: str, method: str = "GET", body=None, headers=None) -> Tuple[int, object]:
    """The status and JSON body of a request."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    request = urllib.request.Request(url, data=data, method=method, headers={
        "Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as e:
        return e.code, json.load(e)


def get(url: str):
    status, body = call(url)
    assert status == 200, body
    return body


def job_id(url: str) -> str:
    """The id of the job served at ``url``, once the server is up (the job starts it)."""
    def served():
        try:
            return get(f"{url}/jobs")["jobs"]
        except urllib.error.URLError as e:
            if isinstance(e, urllib.error.HTTPError):
                raise
            return None
    return wait_until(served, what="the job's REST API")[0]["id"]


def wait_until(condition, timeout: float = 120, what: str = "the condition"):
    """Polls ``condition()`` until it returns something true; returns that."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)
