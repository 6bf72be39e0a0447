"""A task's captured stdout: its own thread's text only, nothing lost, stdout put back."""
import sys
import threading

import pytest

from engine.runtime.stdout_capture import captured_stdout, printed_text


def test_a_task_captures_what_its_thread_prints_and_leaves_stdout_as_it_was(capsys):
    before = sys.stdout
    with captured_stdout() as stdout:
        print("from the task")
        sys.stdout.buffer.write("bytes too, é\n".encode())  # as on a real stdout
        print("to stderr", file=sys.stderr)
    assert printed_text(stdout) == "from the task\nbytes too, é\n"
    assert sys.stdout is before
    assert capsys.readouterr() == ("", "to stderr\n")


def test_other_threads_print_through_while_a_task_captures(capsys):
    inside, done = threading.Event(), threading.Event()

    def task():
        with captured_stdout() as stdout:
            print("task")
            inside.set()
            done.wait(5)
        results.append(printed_text(stdout))

    results = []
    thread = threading.Thread(target=task)
    thread.start()
    inside.wait(5)
    print("driver")  # e.g. the user's main thread while a job runs in the background
    done.set()
    thread.join()
    assert results == ["task\n"]
    assert capsys.readouterr().out == "driver\n"


def test_captures_ending_out_of_order_put_stdout_back(capsys):
    """Two jobs' tasks in two threads (execute_async on the local executor)."""
    before = sys.stdout
    first_in, second_in, first_out = threading.Event(), threading.Event(), threading.Event()
    texts = {}

    def first():
        with captured_stdout() as stdout:
            first_in.set()
            second_in.wait(5)
            print("first")
        texts["first"] = printed_text(stdout)
        first_out.set()

    def second():
        first_in.wait(5)
        with captured_stdout() as stdout:
            second_in.set()
            first_out.wait(5)
            print("second")
        texts["second"] = printed_text(stdout)

    threads = [threading.Thread(target=f) for f in (first, second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert texts == {"first": "first\n", "second": "second\n"}
    assert sys.stdout is before
    print("after")
    assert capsys.readouterr().out == "after\n"


def test_what_a_failing_block_printed_goes_on_to_stdout(capsys):
    with pytest.raises(KeyboardInterrupt):
        with captured_stdout():
            print("before the interrupt")
            raise KeyboardInterrupt
    assert capsys.readouterr().out == "before the interrupt\n"
