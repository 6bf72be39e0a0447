"""Runs the programs of the differential tests of the Table bridge in-process: each
``*_job.py`` here runs unchanged on PyFlink 2.3.0 (``python <job>.py pyflink`` in a venv with
apache-flink==2.3.0, where the tests' expected output was recorded) and here (``api``)."""
import runpy
import sys


def run_job(job: str, capsys, monkeypatch) -> str:
    """What ``job`` prints, run here in-process (the tests' Spark session is shared)."""
    monkeypatch.setattr(sys, 'argv', [job, 'api'])
    runpy.run_path(job, run_name='__main__')
    return capsys.readouterr().out
