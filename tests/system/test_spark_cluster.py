"""A real standalone Spark cluster on this machine: a master and two workers (the pyspark
package's ``bin/spark-class``, bound to 127.0.0.1, each worker with its own working
directory), running a checkpointed keyed job that is stopped with a savepoint, restarted
from it at another parallelism, and gives the output of a run without the stop."""
import os
import socket
import subprocess
import sys
import time
from collections import Counter

import pytest

from tests.system import cluster_job
from tests.system.crash import ROOT
from tests.conftest import finished_lines

WORKERS = 2


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spark_class():
    import pyspark
    return os.path.join(os.path.dirname(pyspark.__file__), "bin", "spark-class")


def _wait_for_workers(web_port: int, count: int, processes, timeout: float = 90) -> None:
    """Waits until the master's status page lists ``count`` alive workers."""
    import json
    import urllib.request
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for process in processes:
            assert process.poll() is None, f"a cluster process ended: {process.args}"
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{web_port}/json/", timeout=2) as r:
                status = json.load(r)
            if sum(w["state"] == "ALIVE" for w in status.get("workers", [])) >= count:
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise TimeoutError("the standalone cluster did not start")


@pytest.fixture(scope="module")
def spark_cluster(tmp_path_factory):
    """``spark://127.0.0.1:<port>`` of a master with two one-core workers; the workers'
    Python finds this project as if it were installed there (PYTHONPATH)."""
    base = tmp_path_factory.mktemp("cluster")
    port, web_port = _free_port(), _free_port()
    env = dict(os.environ, SPARK_LOCAL_IP="127.0.0.1", PYTHONPATH=ROOT,
               PYSPARK_PYTHON=sys.executable, SPARK_LOG_DIR=str(base / "logs"))
    logs = open(base / "cluster.log", "wb")
    processes = [subprocess.Popen(
        [_spark_class(), "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
         "--port", str(port), "--webui-port", str(web_port)],
        env=env, stdout=logs, stderr=subprocess.STDOUT)]
    master = f"spark://127.0.0.1:{port}"
    for i in range(WORKERS):
        work_dir = base / f"worker-{i}"
        work_dir.mkdir()
        processes.append(subprocess.Popen(
            [_spark_class(), "org.apache.spark.deploy.worker.Worker", master,
             "--host", "127.0.0.1", "--cores", "1", "--memory", "1g",
             "--work-dir", str(work_dir), "--webui-port", str(_free_port())],
            env=env, stdout=logs, stderr=subprocess.STDOUT))
    try:
        _wait_for_workers(web_port, WORKERS, processes)
        yield master
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        logs.close()


def _run(*args) -> str:
    done = subprocess.run([sys.executable, "-m", "tests.system.cluster_job", *map(str, args)],
                          cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""



def _expected() -> Counter:
    counts, lines = Counter(), Counter()
    for key, _ in cluster_job.events():
        counts[key] += 1
        lines[f"{key},{counts[key]}"] += 1
    return lines


@pytest.mark.slow
def test_stop_with_savepoint_and_restore_at_another_parallelism_on_a_cluster(
        spark_cluster, tmp_path):
    out = tmp_path / "out"
    savepoint = _run(spark_cluster, out, tmp_path, 2, "stop")
    assert os.path.isdir(savepoint), savepoint
    first = finished_lines(out)
    assert first and len(first) < cluster_job.RECORDS  # stopped mid-job
    _run(spark_cluster, out, tmp_path, 3, "restore", savepoint)
    assert Counter(finished_lines(out)) == _expected()
    # Each subtask of the map opened once per run: it stayed in one process (its host).
    for mode, parallelism in (("stop", 2), ("restore", 3)):
        opened = [name.split("-")[0] for name in os.listdir(tmp_path / f"opened-{mode}")]
        assert sorted(opened) == [str(i) for i in range(parallelism)], (mode, opened)
