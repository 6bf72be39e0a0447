"""The Prometheus endpoint, scraped over HTTP on 127.0.0.1 while a job runs."""
import logging
import re
import socket
import urllib.error
import urllib.request

import pytest

from api.datastream import MapFunction
from engine.driver.metric_reporters import PrometheusReporter
from tests.conftest import GatheringSink, make_env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        return response.read().decode("utf-8")


def _sample(text: str, name: str, operator: str) -> float:
    pattern = rf'^{name}\{{job_id="\w+",job_name="scraped",operator_name="{operator}"\}} (\S+)$'
    values = re.findall(pattern, text, re.MULTILINE)
    assert len(values) == 1, f"{name} of {operator}: {values}"
    return float(values[0])


class _ScrapeAt(MapFunction):
    """Scrapes the endpoint when it sees ``at`` (the in-process executor runs this in the
    driver's process, while the job runs: the batches before are committed)."""
    scraped = []

    def __init__(self, port: int, at: int):
        self.port, self.at = port, at

    def map(self, value):
        if value == self.at:
            _ScrapeAt.scraped.append(_scrape(self.port))
        return value


def test_a_running_job_is_scraped_over_http_and_the_endpoint_closes_with_it():
    port = _free_port()
    env = make_env("local", micro_batch_size=10, **{"metrics.reporter.prom.port": port})
    # record 50 is the first of batch 5: batches 0-4 (records 0-49) are committed
    env.from_collection(list(range(60))).filter(lambda x: x % 3 != 0) \
        .map(_ScrapeAt(port, 50)).add_sink(GatheringSink())
    _ScrapeAt.scraped.clear()
    env.execute("scraped")
    text, = _ScrapeAt.scraped
    assert _sample(text, "flink_taskmanager_job_task_operator_numRecordsIn", "Filter") == 50
    assert _sample(text, "flink_taskmanager_job_task_operator_numRecordsOut", "Filter") == 33
    assert _sample(text, "flink_taskmanager_job_task_operator_numRecordsIn", "Map") == 33
    assert re.search(r'^flink_jobmanager_job_lastBatchDuration\{job_id="\w+",'
                     r'job_name="scraped"\} [0-9.]+$', text, re.MULTILINE)
    assert "# TYPE flink_taskmanager_job_task_operator_numRecordsIn gauge" in text
    with pytest.raises(urllib.error.URLError):
        _scrape(port)


def test_the_endpoint_binds_to_127_0_0_1_and_tries_a_port_range(caplog):
    taken = socket.socket()  # (another user's server, say)
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    try:
        with caplog.at_level(logging.WARNING, logger="engine.driver.metric_reporters"):
            reporter = PrometheusReporter(lambda: None, "127.0.0.1", [port, 0])
        try:
            host, bound = reporter.address
            assert host == "127.0.0.1" and bound != port
            assert _scrape(bound) == ""
            # Not silently: whoever scrapes the first port is told where the job is.
            assert f"at http://127.0.0.1:{bound}/metrics: the range's earlier ports are " \
                   f"taken ({port}: " in caplog.text
        finally:
            reporter.close()
        with pytest.raises(OSError, match=f"no port to serve metrics on.*{port}"):
            PrometheusReporter(lambda: None, "127.0.0.1", [port])
    finally:
        taken.close()


def test_a_bad_port_fails_before_the_job_runs():
    env = make_env("local", **{"metrics.reporter.prom.port": "9249-x"})
    env.from_collection([1]).add_sink(GatheringSink())
    with pytest.raises(ValueError, match="metrics.reporter.prom.port.*'9249-x'"):
        env.execute()
