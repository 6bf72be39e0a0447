"""The REST API's response bodies, with the field names of Flink's REST API (its
``rest_v1_dispatcher`` specification), built from ``JobView``s. A client written for
Flink's API reads them unchanged; values Flink has and this engine does not measure
(bytes moved between tasks) are 0 and marked incomplete."""
from typing import Iterable, List, Optional

from engine.time.watermarks import MIN_WATERMARK

VERSION = "spark-datastream"  # answers "flink-version": which implementation serves
TASK_STATES = ("CREATED", "SCHEDULED", "DEPLOYING", "RUNNING", "FINISHED", "CANCELING",
               "CANCELED", "FAILED", "RECONCILING", "INITIALIZING")
JOB_STATES = ("INITIALIZING", "CREATED", "RUNNING", "FAILING", "FAILED", "CANCELLING",
              "CANCELED", "FINISHED", "RESTARTING", "SUSPENDED", "RECONCILING")


def config(options) -> dict:
    """``/config``: what the dashboard needs to know of the server: which control calls
    the (first) job served allows (``options``: its RestOptions, None without jobs)."""
    return {"refresh-interval": 1000, "timezone-name": "UTC", "timezone-offset": 0,
            "flink-version": VERSION, "flink-revision": VERSION,
            "features": {"web-submit": False,
                         "web-cancel": bool(options and options.cancel_enabled),
                         "web-savepoint": bool(options and options.savepoint_enabled)}}


def overview(views) -> dict:
    """``/overview``: the cluster at a glance (one driver; Spark's executors are not
    counted as task managers)."""
    states = [view.state() for view in views]
    return {"taskmanagers": 0, "slots-total": 0, "slots-available": 0,
            "jobs-running": sum(s in ("RUNNING", "CANCELLING") for s in states),
            "jobs-finished": states.count("FINISHED"), "jobs-cancelled": states.count("CANCELED"),
            "jobs-failed": states.count("FAILED"), "flink-version": VERSION,
            "flink-commit": VERSION}


def jobs(views) -> dict:
    """``/jobs``: ids and statuses."""
    return {"jobs": [{"id": view.job_id, "status": view.state()} for view in views]}


def jobs_overview(views, now: int) -> dict:
    """``/jobs/overview``: one summary per job."""
    return {"jobs": [_job_summary(view, now) for view in views]}


def _job_summary(view, now: int) -> dict:
    tasks = _task_counts(_task_state(view), sum(v.plan.parallelism for v in view.vertices))
    return {"jid": view.job_id, "name": view.name, "state": view.state(), **_times(view, now),
            "last-modification": view.end_time or now,
            "tasks": {state.lower(): count for state, count in tasks.items()}
            | {"total": sum(tasks.values())}}


def _times(view, now: int) -> dict:
    end = view.end_time
    return {"start-time": view.start_time, "end-time": -1 if end is None else end,
            "duration": (end or now) - view.start_time}


def _task_state(view) -> str:
    """The state of the job's tasks: they run, end and fail with the job."""
    state = view.state()
    return {"CANCELLING": "CANCELING"}.get(state, state)


def _task_counts(state: str, count: int) -> dict:
    counts = dict.fromkeys(TASK_STATES, 0)
    counts[state] = count
    return counts


def job_details(view, now: int) -> dict:
    """``/jobs/<id>``: the job and its vertices with their records in and out."""
    vertices, task_state = [], _task_state(view)
    for vertex in view.vertices:
        values = _vertex_values(view, vertex)
        vertices.append({
            "id": vertex.id, "name": vertex.plan.name, "maxParallelism": view.max_parallelism,
            "parallelism": vertex.plan.parallelism, "status": task_state, **_times(view, now),
            "tasks": _task_counts(task_state, vertex.plan.parallelism),
            "metrics": {"read-bytes": 0, "read-bytes-complete": False,
                        "write-bytes": 0, "write-bytes-complete": False,
                        "read-records": 0 if vertex.plan.pact == "Data Source"
                        else values["numRecordsIn"],
                        "read-records-complete": True,
                        "write-records": values["numRecordsOut"],
                        "write-records-complete": True,
                        "accumulated-busy-time": values["accumulatedBusyTime"]}})
    state = view.state()
    return {"jid": view.job_id, "name": view.name, "isStoppable": False, "state": state,
            **_times(view, now), "maxParallelism": view.max_parallelism, "now": now,
            "timestamps": dict(dict.fromkeys(JOB_STATES, 0), RUNNING=view.start_time,
                               **({state: view.end_time} if view.end_time else {})),
            "vertices": vertices,
            "status-counts": _task_counts(task_state, len(vertices)),
            "plan": job_plan(view)["plan"]}


def job_plan(view) -> dict:
    """``/jobs/<id>/plan``: the vertices and their inputs with ship strategies."""
    ids = {vertex.plan.id: vertex.id for vertex in view.vertices}
    nodes = [{"id": vertex.id, "parallelism": vertex.plan.parallelism,
              "operator": "", "operator_strategy": "", "description": vertex.plan.name,
              "optimizer_properties": {},
              **({"inputs": [{"num": i, "id": ids[source], "ship_strategy": strategy,
                              "exchange": "pipelined_bounded"}
                             for i, (source, strategy) in enumerate(vertex.plan.inputs)]}
                 if vertex.plan.inputs else {})}
             for vertex in view.vertices]
    return {"plan": {"jid": view.job_id, "name": view.name, "type": "STREAMING",
                     "nodes": nodes}}


def checkpoints(view) -> dict:
    """``/jobs/<id>/checkpoints``: counts, the latest ones and the history."""
    counts, history = view.history()
    completed = [c for c in history if c["status"] == "COMPLETED"]
    done = counts["completed"] + counts["savepoints"]
    return {"counts": {"restored": 0, "total": done + counts["failed"], "in_progress": 0,
                       "completed": done, "failed": counts["failed"]},
            "summary": {name: _stats([c[name] for c in completed])
                        for name in ("checkpointed_size", "state_size", "end_to_end_duration")},
            "latest": dict(view.latest, restored=None),
            "history": history}


def _stats(values: List[int]) -> dict:
    if not values:
        return {"min": 0, "max": 0, "avg": 0}
    return {"min": min(values), "max": max(values), "avg": sum(values) // len(values)}


def exceptions(view) -> dict:
    """``/jobs/<id>/exceptions``: the failed runs of the job, newest first."""
    entries = view.failures()
    latest = entries[0] if entries else None
    return {"root-exception": latest and latest["stacktrace"],
            "timestamp": latest and latest["timestamp"],
            "all-exceptions": [], "truncated": False,
            "exceptionHistory": {"entries": entries, "truncated": False}}


def vertex_metrics(view, vertex, names: Optional[Iterable[str]]) -> list:
    """``/jobs/<id>/vertices/<vid>/metrics``: the vertex's metric names, or with
    ``names`` (``?get=a,b``) their values, as strings (Flink's format)."""
    values = _vertex_values(view, vertex)
    if names is None:
        return [{"id": name} for name in values]
    return [{"id": name, "value": str(values[name])} for name in names if name in values]


def vertex_watermarks(view, vertex) -> list:
    """``/jobs/<id>/vertices/<vid>/watermarks``: each subtask's input watermark."""
    watermark = _job_values(view).get("currentInputWatermark", MIN_WATERMARK)
    return [{"id": f"{subtask}.currentInputWatermark", "value": str(watermark)}
            for subtask in range(vertex.plan.parallelism)]


def _vertex_values(view, vertex) -> dict:
    """The vertex's records in and out (of its first and last operator), its task's busy
    time, and each of its operators' numeric metrics as ``<operator>.<metric>``."""
    operators = _operators(view)
    head, tail = operators.get(vertex.operators[0], {}), operators.get(vertex.operators[-1], {})
    values = {name: head.get(name, 0) for name in ("numRecordsIn", "numRecordsInPerSecond",
                                                   "accumulatedBusyTime", "busyTimeMsPerSecond")}
    values.update({name: tail.get(name, 0)
                   for name in ("numRecordsOut", "numRecordsOutPerSecond")})
    values["currentInputWatermark"] = _job_values(view).get("currentInputWatermark",
                                                            MIN_WATERMARK)
    for operator in vertex.operators:
        for name, value in operators.get(operator, {}).items():
            if isinstance(value, dict) and "rate" in value:
                value = value["rate"]
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                values[f"{operator}.{name}"] = value
    return values


def savepoint_status(result: Optional[dict]) -> dict:
    """``/jobs/<id>/savepoints/<trigger>``: IN_PROGRESS, or COMPLETED with the
    savepoint's location or the failure's cause."""
    if result is None:
        return {"status": {"id": "IN_PROGRESS"}, "operation": None}
    if "savepoint" in result:
        return {"status": {"id": "COMPLETED"}, "operation": {"location": result["savepoint"]}}
    return {"status": {"id": "COMPLETED"},
            "operation": {"failure-cause": {"class": "java.lang.Exception",
                                            "stack-trace": result["error"]}}}


def _operators(view) -> dict:
    snapshot = view.runner.metrics.snapshot()
    return snapshot["operators"] if snapshot else {}


def _job_values(view) -> dict:
    snapshot = view.runner.metrics.snapshot()
    return snapshot["job"] if snapshot else {}
