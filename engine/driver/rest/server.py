"""The HTTP server of the REST API and the dashboard: the standard library's
``ThreadingHTTPServer`` on ``rest.address``:``rest.port``, one per address and port in a
driver process, serving every job of the process that asked for it while it runs.

Requests are read as data only: paths by the routes below, query strings, and JSON
bodies (at most 64 KiB) whose fields are checked; nothing is unpickled. The calls that
steer a job (savepoint, stop, cancel) answer 403 unless the job's settings enable them,
and are refused from a page of another origin (a browser sends its ``Origin``).
Errors answer Flink's way: ``{"errors": [reason]}`` with the status code.
"""
import http.server
import ipaddress
import json
import logging
import os
import re
import threading
import time
from typing import Callable, Dict, List, Optional, Tuple
from urllib.parse import parse_qs, urlsplit

from engine.driver.rest import flink_json

log = logging.getLogger(__name__)

STATIC = os.path.join(os.path.dirname(__file__), "static")
CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
                 ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml"}
MAX_BODY = 64 * 1024


class RestError(Exception):
    """A request that cannot be served: its status code and reason."""

    def __init__(self, status: int, reason: str):
        super().__init__(reason)
        self.status = status


class RestServer:
    """One HTTP server and the jobs it serves, by job id."""

    def __init__(self, address: str, port: int):
        self.views: Dict[str, object] = {}
        try:
            self.httpd = http.server.ThreadingHTTPServer((address, port), _Handler)
        except OSError as e:
            raise OSError(f"rest.port {port}: cannot serve the REST API on {address}: "
                          f"{e.strerror or e}") from e
        self.httpd.daemon_threads = True
        self.httpd.rest = self
        self.address = self.httpd.server_address[:2]
        threading.Thread(target=self.httpd.serve_forever, name="rest-api",
                         daemon=True).start()

    @property
    def url(self) -> str:
        return "http://%s:%d" % self.address

    def view(self, job_id: str):
        """The served job of ``job_id``; a 404 if there is none."""
        view = self.views.get(job_id)
        if view is None:
            raise RestError(404, f"Job {job_id} not found")
        return view

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


_servers: Dict[Tuple[str, int], RestServer] = {}
_lock = threading.Lock()


def serve(view, address: str, port: int) -> RestServer:
    """Serves ``view``'s job on ``address``:``port`` (0: a free port), with the other jobs
    of this process served there; returns the server."""
    with _lock:
        server = _servers.get((address, port)) if port else None
        if server is None:
            server = RestServer(address, port)
            _servers[server.address] = server
        server.views[view.job_id] = view
    log.info("Job %r: REST API and dashboard at %s/", view.name, server.url)
    return server


def withdraw(view) -> None:
    """Ends serving ``view``'s job; the server stops with its last job."""
    with _lock:
        for key, server in list(_servers.items()):
            if server.views.get(view.job_id) is view:
                del server.views[view.job_id]
                if not server.views:
                    del _servers[key]
                    server.close()


# -- routes -----------------------------------------------------------------------

Route = Callable[..., Tuple[int, object]]
ROUTES: List[Tuple[str, "re.Pattern", Route]] = []


def route(method: str, pattern: str):
    def add(handler: Route) -> Route:
        ROUTES.append((method, re.compile(pattern + "$"), handler))
        return handler
    return add


JOB = r"/jobs/(?P<job>[0-9a-f]{32})"
VERTEX = JOB + r"/vertices/(?P<vertex>[0-9a-f]{32})"


def _now() -> int:
    return int(time.time() * 1000)


@route("GET", r"/config")
def _config(server, query, body):
    views = list(server.views.values())
    return 200, flink_json.config(views[0].options if views else None)


@route("GET", r"/overview")
def _overview(server, query, body):
    return 200, flink_json.overview(server.views.values())


@route("GET", r"/jobs")
def _jobs(server, query, body):
    return 200, flink_json.jobs(server.views.values())


@route("GET", r"/jobs/overview")
def _jobs_overview(server, query, body):
    return 200, flink_json.jobs_overview(server.views.values(), _now())


@route("GET", JOB)
def _job(server, query, body, job):
    return 200, flink_json.job_details(server.view(job), _now())


@route("GET", JOB + r"/plan")
def _plan(server, query, body, job):
    return 200, flink_json.job_plan(server.view(job))


@route("GET", JOB + r"/checkpoints")
def _checkpoints(server, query, body, job):
    return 200, flink_json.checkpoints(server.view(job))


@route("GET", JOB + r"/exceptions")
def _exceptions(server, query, body, job):
    return 200, flink_json.exceptions(server.view(job))


def _vertex(server, job: str, vertex_id: str):
    view = server.view(job)
    for vertex in view.vertices:
        if vertex.id == vertex_id:
            return view, vertex
    raise RestError(404, f"Vertex {vertex_id} not found in job {job}")


@route("GET", VERTEX + r"/metrics")
def _vertex_metrics(server, query, body, job, vertex):
    names = query.get("get")
    names = None if names is None else [n for part in names for n in part.split(",") if n]
    return 200, flink_json.vertex_metrics(*_vertex(server, job, vertex), names)


@route("GET", VERTEX + r"/watermarks")
def _vertex_watermarks(server, query, body, job, vertex):
    return 200, flink_json.vertex_watermarks(*_vertex(server, job, vertex))


@route("GET", JOB + r"/savepoints/(?P<trigger>[0-9a-f]{32})")
def _savepoint_status(server, query, body, job, trigger):
    view = server.view(job)
    if trigger not in view.triggers:
        raise RestError(404, f"There is no savepoint operation with trigger id {trigger} "
                             f"for job {job}")
    return 200, flink_json.savepoint_status(view.control.result(trigger))


@route("POST", JOB + r"/savepoints")
def _trigger_savepoint(server, query, body, job):
    view = _controllable(server, job, "savepoint_enabled", "web.savepoint.enable",
                         "Savepoints")
    directory = _field(body, "target-directory", str)
    stop = _field(body, "cancel-job", bool) or False
    return 202, {"request-id": view.trigger(stop, _target(directory))}


@route("POST", JOB + r"/stop")
def _stop(server, query, body, job):
    view = _controllable(server, job, "savepoint_enabled", "web.savepoint.enable",
                         "Stopping with a savepoint")
    directory = _field(body, "targetDirectory", str)
    drain = _field(body, "drain", bool) or False
    return 202, {"request-id": view.trigger(True, _target(directory), drain)}


@route("PATCH", JOB)
def _terminate(server, query, body, job):
    mode = query.get("mode", ["cancel"])[-1]
    if mode.lower() != "cancel":
        raise RestError(400, f"Termination mode {mode!r} is not supported: use "
                             "mode=cancel, or POST /jobs/<id>/stop to stop with a savepoint")
    view = _controllable(server, job, "cancel_enabled", "web.cancel.enable",
                         "Cancelling jobs")
    view.control.submit("cancel")
    return 202, {}


def _controllable(server, job: str, flag: str, key: str, what: str):
    view = server.view(job)
    if not getattr(view.options, flag):
        raise RestError(403, f"{what} over the REST API is disabled for this job: set "
                             f"'{key}: true' in its configuration to allow it")
    return view


def _field(body: dict, name: str, kind: type):
    value = body.get(name)
    if value is not None and not isinstance(value, kind):
        raise RestError(400, f"Field {name!r} must be a {kind.__name__}, not {value!r}")
    return value


def _target(directory: Optional[str]) -> Optional[str]:
    if directory is not None and not (os.path.isabs(directory) or "://" in directory):
        raise RestError(400, f"The target directory {directory!r} must be an absolute path "
                             "or a URL")
    return directory


# -- HTTP ---------------------------------------------------------------------------

class _Handler(http.server.BaseHTTPRequestHandler):
    server_version = "spark-datastream-rest"

    def do_GET(self):
        self._dispatch("GET")

    def do_POST(self):
        self._dispatch("POST")

    def do_PATCH(self):
        self._dispatch("PATCH")

    def do_PUT(self):
        self._dispatch("PUT")

    def do_DELETE(self):
        self._dispatch("DELETE")

    def _dispatch(self, method: str) -> None:
        parts = urlsplit(self.path)
        path = parts.path.rstrip("/") or "/"
        try:
            if method == "GET" and (path == "/" or path.startswith("/static/")):
                return self._static("index.html" if path == "/" else path[len("/static/"):])
            status, body = self._route(method, path, parse_qs(parts.query))
        except RestError as e:
            status, body = e.status, {"errors": [str(e)]}
        except Exception as e:  # the job goes on; the client learns why
            log.exception("REST %s %s failed", method, self.path)
            status, body = 500, {"errors": [f"Internal server error: {type(e).__name__}: {e}"]}
        self._send(status, json.dumps(body).encode(), "application/json; charset=utf-8")

    def _route(self, method: str, path: str, query: dict):
        allowed = []
        for route_method, pattern, handler in ROUTES:
            match = pattern.match(path)
            if match is None:
                continue
            if route_method != method:
                allowed.append(route_method)
                continue
            body = self._body() if method in ("POST", "PATCH") else {}
            return handler(self.server.rest, query, body, **match.groupdict())
        if allowed:
            raise RestError(405, f"{method} is not allowed on {path} (allowed: "
                                 f"{', '.join(allowed)})")
        raise RestError(404, f"Not found: {path}")

    def _body(self) -> dict:
        """The request's JSON object ({} without a body); refused from another origin."""
        origin = self.headers.get("Origin")
        if origin is not None and origin not in self._own_origins():
            raise RestError(403, f"Requests from pages of {origin} are refused")
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            raise RestError(400, "The Content-Length header is not a number") from None
        if length > MAX_BODY:
            raise RestError(413, f"The request body is larger than {MAX_BODY} bytes")
        data = self.rfile.read(length) if length else b""
        if not data.strip():
            return {}
        try:
            body = json.loads(data)
        except ValueError as e:
            raise RestError(400, f"The request body is not JSON: {e}") from None
        if not isinstance(body, dict):
            raise RestError(400, "The request body must be a JSON object")
        return body

    def _own_origins(self):
        """The origins of this server's own page. On a loopback address only those of
        that address: a page of another site whose name was made to resolve to
        127.0.0.1 (DNS rebinding) is not one of them. Bound for the network, the page
        may have been opened under any of the machine's names."""
        host, port = self.server.rest.address
        if ipaddress.ip_address(host).is_loopback:
            return {f"http://{name}:{port}" for name in (host, "localhost")}
        return {f"http://{host}:{port}", f"http://{self.headers.get('Host', '')}"}

    def _static(self, name: str) -> None:
        path = os.path.join(STATIC, name)
        kind = CONTENT_TYPES.get(os.path.splitext(name)[1])
        if "/" in name or name.startswith(".") or kind is None or not os.path.isfile(path):
            body = json.dumps({"errors": [f"Not found: /static/{name}"]}).encode()
            return self._send(404, body, "application/json; charset=utf-8")
        with open(path, "rb") as f:
            self._send(200, f.read(), kind)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format, *args):  # not on stderr: the dashboard polls often
        log.debug("%s %s", self.address_string(), format % args)
