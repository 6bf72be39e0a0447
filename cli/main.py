"""The command line client, ``spark-datastream`` (or ``python -m cli``), as
Flink's ``flink`` command: run a job program, show its plan, list jobs, take a
savepoint, stop or cancel a job.

``run`` executes a program in this process with the command line's settings as the
base configuration of every environment it creates (what the program configures
itself wins, as in Flink). Jobs are found without a server: every job with a checkpoint
directory keeps a status file there, and the control commands leave requests beside
it that the job's driver takes between micro-batches (``engine/driver/job_control.py``).
Exit code 0 when done; otherwise a one-line reason on stderr.
"""
import argparse
import os
import runpy
import sys
import time
import traceback
from datetime import datetime
from typing import List, Optional, Tuple

from api.common import Configuration
from api.datastream.checkpoint_config import checkpoint_directory
from api.datastream.checkpoint_storage import local_path
from api.datastream.client_context import ProgramAbortException, client_context
from api.datastream.job_settings import IGNORE_UNCLAIMED_STATE, SAVEPOINT_PATH, SPARK_MASTER, \
    STATE_DIR
from engine.driver.job_control import RUNNING, JobStatusRecord, error_line, find_jobs, read_status, \
    send_request, withdraw_request
from cli.plan_picture import render_plan
from engine.time.watermarks import MAX_WATERMARK, MIN_WATERMARK

PROGRAM = "spark-datastream"
CHECKPOINT_DIR_VARIABLE = "SPARK_DATASTREAM_CHECKPOINT_DIR"
DEFAULT_CHECKPOINT_DIR = os.path.join("~", ".spark-datastream", "checkpoints")
POLL_SECONDS = 0.1


class CommandError(Exception):
    """A command cannot be done; the message is the one-line reason shown."""


def default_checkpoint_root() -> str:
    """Where jobs keep their directories unless told otherwise: $SPARK_DATASTREAM_CHECKPOINT_DIR,
    else ~/.spark-datastream/checkpoints."""
    return os.environ.get(CHECKPOINT_DIR_VARIABLE) or os.path.expanduser(DEFAULT_CHECKPOINT_DIR)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROGRAM, description="Run and control spark-datastream jobs.")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    root = argparse.ArgumentParser(add_help=False)
    root.add_argument("--checkpoint-dir", metavar="DIR",
                      help=f"checkpoint root the jobs' directories are in (default: "
                           f"${CHECKPOINT_DIR_VARIABLE}, else {DEFAULT_CHECKPOINT_DIR})")
    program = argparse.ArgumentParser(add_help=False, parents=[root])
    program.add_argument("job", metavar="JOB.py", help="the job program")
    program.add_argument("-p", "--parallelism", type=int, metavar="N",
                         help="default parallelism (parallelism.default)")
    program.add_argument("-m", "--master", metavar="URL", help="Spark master (spark.master)")
    program.add_argument("-s", "--from-savepoint", metavar="PATH",
                         help="start from this savepoint or checkpoint (execution.savepoint.path)")
    program.add_argument("-n", "--allow-non-restored-state", action="store_true",
                         help="drop saved state of operators the job no longer has")
    program.add_argument("-D", dest="properties", action="append", default=[],
                         metavar="KEY=VALUE", help="any configuration option; repeatable")
    program.add_argument("-v", "--verbose", action="store_true",
                         help="print the traceback of a failed program")
    epilog = "Arguments after -- are passed to the program as sys.argv[1:]."
    commands.add_parser("run", parents=[program], epilog=epilog,
                        help="run a job program (JOB.py [options] [-- job args])")
    plan = commands.add_parser("plan", parents=[program], epilog=epilog,
                               help="print the execution plan (JSON) of a job program, "
                                    "without running it")
    plan.add_argument("--picture", metavar="FILE",
                      help="also draw the plan into FILE (.svg, .png, .pdf) with Graphviz")
    commands.add_parser("list", parents=[root], help="list running and recent jobs")
    control = argparse.ArgumentParser(add_help=False, parents=[root])
    control.add_argument("job_ref", metavar="JOB", help="job id or name")
    control.add_argument("--timeout", type=float, default=300, metavar="SECONDS",
                         help="how long to wait for the job (default 300)")
    savepoint = commands.add_parser("savepoint", parents=[control],
                                    help="take a savepoint of a running job")
    savepoint.add_argument("target", nargs="?", metavar="TARGET",
                           help="savepoint directory (default: the job's state.savepoints.dir)")
    stop = commands.add_parser("stop", parents=[control],
                               help="stop a running job with a savepoint")
    stop.add_argument("-d", "--drain", action="store_true",
                      help="end event time first: every event-time timer and window fires")
    stop.add_argument("-p", "--savepoint-dir", metavar="DIR",
                      help="savepoint directory (default: the job's state.savepoints.dir)")
    commands.add_parser("cancel", parents=[control], help="cancel a running job")
    return parser


def main(argv: Optional[List[str]] = None) -> int:
    """Runs one command; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    job_args: List[str] = []
    if "--" in argv:
        argv, job_args = argv[:argv.index("--")], argv[argv.index("--") + 1:]
    args = _parser().parse_args(argv)
    args.job_args = job_args
    if job_args and args.command not in ("run", "plan"):
        print(f"{PROGRAM}: error: '{args.command}' takes no job arguments", file=sys.stderr)
        return 2
    try:
        return COMMANDS[args.command](args)
    except CommandError as e:
        print(f"{PROGRAM}: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROGRAM}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `spark-datastream plan JOB.py | head`: the reader is done
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141


# -- run and plan --------------------------------------------------------------------

def _configuration(args) -> Configuration:
    """The command line's settings under Flink's configuration keys."""
    config = Configuration()
    for item in args.properties:
        key, equals, value = item.partition("=")
        if not equals or not key.strip():
            raise CommandError(f"-D {item!r}: expected KEY=VALUE")
        config.set_string(key.strip(), value)
    if args.parallelism is not None:
        if args.parallelism < 1:
            raise CommandError(f"--parallelism {args.parallelism}: must be at least 1")
        config.set_string("parallelism.default", str(args.parallelism))
    if args.master is not None:
        config.set_string(SPARK_MASTER, args.master)
    if args.checkpoint_dir is not None or checkpoint_directory(config.to_dict()) is None:
        config.set_string(STATE_DIR, _checkpoint_root(args))
    if args.from_savepoint is not None:
        config.set_string(SAVEPOINT_PATH, os.path.abspath(local_path(args.from_savepoint)))
    if args.allow_non_restored_state:
        config.set_string(IGNORE_UNCLAIMED_STATE, "true")
    return config


def _run_program(args, plan_only: bool) -> None:
    """Runs the program file as ``__main__`` with ``sys.argv`` = [JOB.py, job args...] and
    its directory first on ``sys.path``, as ``python JOB.py`` would."""
    path = os.path.abspath(args.job)
    if not os.path.isfile(path):
        raise CommandError(f"{args.job}: no such file")
    config = _configuration(args)
    sys.argv = [args.job, *args.job_args]
    sys.path.insert(0, os.path.dirname(path))
    try:
        with client_context(config, plan_only):
            runpy.run_path(path, run_name="__main__")
    except (ProgramAbortException, SystemExit, KeyboardInterrupt):
        raise
    except BaseException as e:
        if args.verbose:
            traceback.print_exc()
        raise CommandError(f"{args.job} failed: {error_line(e)}") from e


def _run(args) -> int:
    _run_program(args, plan_only=False)
    return 0


def _plan(args) -> int:
    try:
        _run_program(args, plan_only=True)
    except ProgramAbortException as e:
        print(e.plan)
        if args.picture:
            try:
                render_plan(e.plan, args.picture)
            except RuntimeError as error:
                raise CommandError(str(error)) from None
        return 0
    raise CommandError(f"{args.job} did not execute a job, so it has no plan")


# -- finding and controlling jobs ---------------------------------------------------

def _checkpoint_root(args) -> str:
    return os.path.abspath(local_path(args.checkpoint_dir or default_checkpoint_root()))


def _find(args) -> Tuple[str, JobStatusRecord]:
    """The directory and status of the job named by id or name."""
    root = _checkpoint_root(args)
    matches = [(job_dir, status) for job_dir, status in find_jobs(root).items()
               if args.job_ref in (status.id, status.name)]
    if not matches:
        raise CommandError(f"no job {args.job_ref!r} under {root}")
    if len(matches) > 1:
        raise CommandError(f"{len(matches)} jobs named {args.job_ref!r} under {root}: "
                           f"give a job id ({', '.join(s.id for _, s in matches)})")
    return matches[0]


def _running(args) -> Tuple[str, JobStatusRecord]:
    job_dir, status = _find(args)
    shown = status.shown_status()
    if shown != RUNNING:
        raise CommandError(f"job {_describe(status)} is not running "
                           f"({_explained(status, shown)})")
    return job_dir, status


def _wait(args, job_dir: str, done) -> JobStatusRecord:
    """Polls the job's status until ``done(status)`` holds, the job ended or its driver
    is gone, or the timeout passes; returns the last status read."""
    deadline = time.monotonic() + args.timeout
    while True:
        status = read_status(job_dir)
        if status is None:
            raise CommandError(f"the status file of job {args.job_ref!r} in {job_dir} is gone")
        if done(status) or status.shown_status() != RUNNING:
            return status
        if time.monotonic() > deadline:
            raise CommandError(f"job {_describe(status)} did not answer within "
                               f"{args.timeout:g} s (requests are taken after each "
                               "micro-batch; see --timeout)")
        time.sleep(POLL_SECONDS)


def _savepoint_result(args, action: str, directory: Optional[str],
                      drain: bool = False) -> Tuple[str, str]:
    """Sends a savepoint or stop request; waits for the savepoint and returns the job's
    directory and the savepoint's path."""
    job_dir, status = _running(args)
    if directory is not None:
        directory = os.path.abspath(local_path(directory))
    request = send_request(job_dir, status, action, directory, drain)
    try:
        status = _wait(args, job_dir, lambda s: request.id in s.results)
    finally:
        withdraw_request(job_dir, request)  # (a no-op once the job took it)
    result = status.results.get(request.id)
    if result is None:
        raise CommandError(f"job {_describe(status)} ended before taking the savepoint "
                           f"({_explained(status, status.shown_status())})")
    if "error" in result:
        raise CommandError(f"savepoint of job {_describe(status)} failed: {result['error']}")
    return job_dir, result["savepoint"]


def _savepoint(args) -> int:
    print(_savepoint_result(args, "savepoint", args.target)[1])
    return 0


def _stop(args) -> int:
    job_dir, path = _savepoint_result(args, "stop", args.savepoint_dir, args.drain)
    status = _wait(args, job_dir, lambda s: s.status != RUNNING)
    if status.status != "stopped":
        raise CommandError(f"job {_describe(status)} took savepoint {path} but did not "
                           f"stop ({_explained(status, status.shown_status())})")
    print(path)
    return 0


def _cancel(args) -> int:
    job_dir, status = _running(args)
    request = send_request(job_dir, status, "cancel")
    try:
        status = _wait(args, job_dir, lambda s: s.status != RUNNING)
    finally:
        withdraw_request(job_dir, request)
    if status.status != "cancelled":
        raise CommandError(f"job {_describe(status)} ended before it was cancelled "
                           f"({_explained(status, status.shown_status())})")
    print(f"Cancelled job {_describe(status)}.")
    return 0


# -- list -------------------------------------------------------------------------

def _list(args) -> int:
    root = _checkpoint_root(args)
    jobs = sorted(find_jobs(root).values(), key=lambda s: s.start, reverse=True)
    if not jobs:
        print(f"No jobs under {root}.")
        return 0
    rows = [("ID", "NAME", "START", "LAST BATCH", "WATERMARK", "STATUS")]
    for status in jobs:
        last_batch = "-" if status.last_batch is None else \
            f"{status.last_batch} at {_time(status.last_batch_time)}"
        rows.append((status.id, status.name, _time(status.start), last_batch,
                     _watermark(status.watermark),
                     _explained(status, status.shown_status())))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        print("  ".join([cell.ljust(width) for cell, width in zip(row, widths)] + [row[-1]]))
    return 0


def _time(epoch_ms: Optional[int]) -> str:
    return "-" if epoch_ms is None else \
        datetime.fromtimestamp(epoch_ms / 1000).strftime("%Y-%m-%d %H:%M:%S")


def _watermark(watermark: Optional[int]) -> str:
    if watermark is None or watermark == MIN_WATERMARK:
        return "-"
    return "end" if watermark == MAX_WATERMARK else str(watermark)


def _describe(status: JobStatusRecord) -> str:
    return f"{status.name!r} ({status.id})"


def _explained(status: JobStatusRecord, shown: str) -> str:
    """The status with what explains it: a failed job's error, a lost job's driver."""
    if shown == "lost":
        return f"lost: its driver, pid {status.pid} on {status.host}, is gone"
    if status.error:
        return f"{shown}: {status.error}"
    return shown


COMMANDS = {"run": _run, "plan": _plan, "list": _list, "savepoint": _savepoint,
            "stop": _stop, "cancel": _cancel}

