"""Where a job's metrics go after each committed batch: a JSON-lines file in the job's
directory and a Prometheus endpoint (``metrics.reporter.prom.*``)."""
import http.server
import json
import logging
import os
import threading
from typing import Callable, Iterable, Optional

from checkpoint import storage
from core.private_paths import open_private
from engine.driver.job_metrics import prometheus_text

log = logging.getLogger(__name__)

METRICS_FILE = "metrics.jsonl"


class MetricReporter:
    """Receives the snapshot of each committed batch and each failed run of the job
    (``job_failed``, before a restart or the job's failure); ``close`` when the job ends
    (``discard``: the job's directory is deleted, as after it finished)."""

    def report(self, snapshot: dict) -> None:
        pass

    def job_failed(self, error: BaseException) -> None:
        pass

    def close(self, discard: bool = False) -> None:
        pass


class JsonLinesReporter(MetricReporter):
    """Appends each batch's snapshot as one JSON line to ``<job dir>/metrics.jsonl``
    (across the runs of a job that resumes), deleted with the job's directory."""

    def __init__(self, job_dir: str):
        storage.makedirs(job_dir)
        self.path = os.path.join(job_dir, METRICS_FILE)

    def report(self, snapshot: dict) -> None:
        with open_private(self.path, "a") as f:  # (its gauges may be anything a user set)
            f.write(json.dumps(snapshot, default=str) + "\n")

    def close(self, discard: bool = False) -> None:
        if discard and os.path.exists(self.path):
            os.remove(self.path)


class PrometheusReporter(MetricReporter):
    """Serves ``snapshot()`` in Prometheus' text format at ``http://host:port/metrics``
    (any path answers) from a daemon thread. ``ports``: the ports to try in order (as
    Flink's ``metrics.reporter.prom.port`` range); 0 picks a free one."""

    def __init__(self, snapshot: Callable[[], Optional[dict]], host: str, ports: Iterable[int]):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = prometheus_text(snapshot()).encode("utf-8")
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format, *args):  # not on stderr: scrapes come often
                log.debug("%s %s", self.address_string(), format % args)

        errors = []
        self.server = None
        for port in ports:
            try:
                self.server = http.server.ThreadingHTTPServer((host, port), Handler)
                break
            except OSError as e:
                errors.append(f"{port}: {e}")
        if self.server is None:
            raise OSError(f"metrics.reporter.prom: no port to serve metrics on at {host}: "
                          + "; ".join(errors))
        self.server.daemon_threads = True
        self.address = self.server.server_address[:2]
        threading.Thread(target=self.server.serve_forever, name="prometheus-metrics",
                         daemon=True).start()
        if errors:  # a scraper of the first port may be reading someone else's server
            log.warning("Serving metrics for Prometheus at http://%s:%d/metrics: the "
                        "range's earlier ports are taken (%s)", *self.address,
                        "; ".join(errors))
        else:
            log.info("Serving metrics for Prometheus at http://%s:%d/metrics", *self.address)

    def close(self, discard: bool = False) -> None:
        self.server.shutdown()
        self.server.server_close()


def parse_ports(value: str):
    """``"9249"`` or a range ``"9249-9260"`` (Flink's syntax) -> the ports."""
    text = str(value).strip()
    first, _, last = text.partition("-")
    try:
        low = int(first)
        high = int(last) if last else low
    except ValueError:
        raise ValueError(f"metrics.reporter.prom.port: expected a port or a range like "
                         f"'9249-9260', got {value!r}") from None
    if not 0 <= low <= high <= 65535:
        raise ValueError(f"metrics.reporter.prom.port: {value!r} is not a port range "
                         "within 0-65535")
    return range(low, high + 1)
