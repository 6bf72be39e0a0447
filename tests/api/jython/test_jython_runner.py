"""Running a program of the older Python streaming guide
(python-streaming-programming-guide-jython.txt, "Program Skeleton" and "Executing Plans"):
``main(factory)`` is the entry point, the program gets its environment from
``factory.get_execution_environment()``, and ``python -m api.jython`` replaces
``pyflink-stream.sh <script> [<package> ...] [- <arg> ...]``."""
import os
import subprocess
import sys
import textwrap
from collections import Counter

import pytest

from api.common import Configuration
from api.jython import run_program

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
WORD_COUNT = os.path.join(ROOT, "examples", "jython_word_count.py")


def local_configuration(micro_batch_size: int) -> Configuration:
    configuration = Configuration()
    configuration.set_string("execution.executor", "local")
    configuration.set_string("execution.micro-batch.size", str(micro_batch_size))
    return configuration


def word_totals(printed: str) -> Counter:
    """The guide's WordCount prints (count, word) per word and 50 ms window, each after a
    ``N> `` subtask prefix: the counts of each word summed over its windows."""
    totals = Counter()
    for line in printed.splitlines():
        _, _, record = line.partition("> ")
        count, word = eval(record)  # the str() of a (count, word) tuple
        totals[word] += count
    return totals


def test_the_guide_word_count_runs_through_main_factory(capsys):
    run_program(WORD_COUNT, configuration=local_configuration(micro_batch_size=100))
    # 1000 x "Hello World", counted case-insensitively, whatever windows they fell in
    assert word_totals(capsys.readouterr().out) == {"hello": 1000, "world": 1000}


def test_the_guide_word_count_on_spark(spark, capsys):
    run_program(WORD_COUNT, spark_session=spark)
    assert word_totals(capsys.readouterr().out) == {"hello": 1000, "world": 1000}


PROGRAM = '''
import sys
from org.apache.flink.api.common.functions import MapFunction
import helpers
from mypackage.words import shout


class Shout(MapFunction):
    def map(self, value):
        return shout(helpers.PREFIX + value)


def main(factory):
    env = factory.get_execution_environment()
    env.set_parallelism(1)
    env.from_elements(*sys.argv[1:]).map(Shout()).write_as_text(sys.argv[1])
    env.execute(local=True)
'''


def test_the_command_line_ships_packages_and_passes_arguments(tmp_path):
    program = tmp_path / "job.py"
    program.write_text(PROGRAM)
    (tmp_path / "helpers.py").write_text("PREFIX = 'x-'\n")
    package = tmp_path / "mypackage"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "words.py").write_text("def shout(s):\n    return s.upper()\n")
    out = tmp_path / "out.txt"
    result = subprocess.run(
        [sys.executable, "-m", "api.jython", "-D", "execution.executor=local", str(program),
         str(tmp_path / "helpers.py"), str(package), "-", str(out), "b"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    # sys.argv is [program, arg ...]: the arguments after "-"
    assert out.read_text().splitlines() == [f"X-{str(out).upper()}", "X-B"]


def test_a_program_without_main_factory(tmp_path):
    program = tmp_path / "no_main.py"
    program.write_text("def run(env):\n    pass\n")
    with pytest.raises(TypeError, match=r"no_main.py has no main\(factory\) function"):
        run_program(str(program))
    with pytest.raises(FileNotFoundError, match="Could not find file"):
        run_program(str(tmp_path / "missing.py"))


def test_python_2_only_syntax_is_refused_with_what_to_do(tmp_path):
    program = tmp_path / "py2.py"
    program.write_text(textwrap.dedent('''
        def main(factory):
            print "hello"
    '''))
    with pytest.raises(SyntaxError, match=r"not valid Python 3.*line 3.*Jython \(Python 2\.7\)"
                                          r".*must be ported to Python 3"):
        run_program(str(program))


def test_usage():
    result = subprocess.run([sys.executable, "-m", "api.jython"], cwd=ROOT,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "usage: python -m api.jython" in result.stderr
