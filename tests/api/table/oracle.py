"""Runs the programs of the differential tests of the Table bridge in-process: each
``*_job.py`` here runs unchanged on PyFlink 2.3.0 (``python <job>.py pyflink`` in a venv with
apache-flink==2.3.0, where the tests' expected output was recorded) and here (``api``); and
reads their printed tables apart, for rows Flink emits in no defined order."""
import runpy
import sys


def run_job(job: str, capsys, monkeypatch) -> str:
    """What ``job`` prints, run here in-process (the tests' Spark session is shared)."""
    monkeypatch.setattr(sys, 'argv', [job, 'api'])
    runpy.run_path(job, run_name='__main__')
    return capsys.readouterr().out


def tableau_blocks(text: str, unordered) -> list:
    """Each printed table of ``text`` as (its title, schema and frame lines, its rows):
    rows sorted where ``unordered(header lines)`` (e.g. a window's groups, which Flink
    emits in no defined order), others in order."""
    blocks, current = [], []
    for line in text.splitlines():
        current.append(line)
        if line.endswith('rows in set') or line.endswith('row in set'):
            rows = [r for r in current if r.startswith(('| +', '| -'))]
            header = [h for h in current if h not in rows]
            blocks.append((header, sorted(rows) if unordered(header) else rows))
            current = []
    return blocks + [(current, [])]
