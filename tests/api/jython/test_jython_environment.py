"""The environment and streams of the older Python streaming guide
(python-streaming-programming-guide-jython.txt): sources, windows, sinks, split/select,
union, iterate, parallelism and execute, against what the guide says of each."""
import threading
import time

import pytest
from org.apache.flink.api.common.functions import FilterFunction, MapFunction, ReduceFunction
from org.apache.flink.api.common.serialization import SerializationSchema
from org.apache.flink.api.java.functions import KeySelector
from org.apache.flink.core.fs.FileSystem import WriteMode
from org.apache.flink.streaming.api.collector.selector import OutputSelector
from org.apache.flink.streaming.api.functions.source import SourceFunction
from org.apache.flink.streaming.api.windowing.time.Time import milliseconds

from tests.api.jython.jython_helpers import collect, local_env, local_factory
from tests.api.legacy.test_legacy_socket_sink import Server


class Generator(SourceFunction):
    """The guide's source: ``num_iters`` sentences, or until cancelled."""

    def __init__(self, num_iters, pause_s=0.0):
        self._running = True
        self._num_iters = num_iters
        self._pause_s = pause_s
        self.finished = threading.Event()

    def run(self, ctx):
        counter = 0
        while self._running and counter < self._num_iters:
            ctx.collect('Hello World')
            counter += 1
            time.sleep(self._pause_s)
        self.finished.set()

    def cancel(self):
        self._running = False


class First(KeySelector):
    def getKey(self, input):
        return input[0]


class Count(ReduceFunction):
    def reduce(self, input1, input2):
        return (input1[0], input1[1] + input2[1])


def test_create_python_source_runs_the_source_function():
    env = local_env()
    assert collect(env.create_python_source(Generator(num_iters=1000))) == ["Hello World"] * 1000


def test_cancel_stops_a_source_that_never_ends():
    env = local_env()
    generator = Generator(num_iters=float("inf"), pause_s=0.001)
    env.create_python_source(generator).output()
    client = env.env.execute_async("endless")
    time.sleep(0.5)
    client.cancel()
    assert generator.finished.wait(10), "run(ctx) did not return after cancel()"
    with pytest.raises(TypeError, match=r"create_python_source\(\) expects a SourceFunction"):
        env.create_python_source(["Hello World"])


def test_collection_based_sources():
    env = local_env(parallelism=2)
    assert sorted(collect(env.from_elements("Foo", "bar", "foobar", "fubar"))) == \
        ["Foo", "bar", "foobar", "fubar"]
    # "generate_sequence(from, to) - Generates the sequence of numbers in the given
    # interval, in parallel"
    assert sorted(collect(env.generate_sequence(1, 100))) == list(range(1, 101))


def test_read_text_file_and_the_examples_read_text(tmp_path):
    path = tmp_path / "textfile"
    path.write_text("first line\nsecond line\n")
    env = local_env()
    assert collect(env.read_text_file(f"file://{path}")) == ["first line", "second line"]
    assert collect(env.read_text(str(path))) == ["first line", "second line"]


class Person:
    def __init__(self, name, age):
        self.name = name
        self.age = age


class ToPerson(MapFunction):
    def map(self, value):
        return (1, Person(*value))


class SecondField(MapFunction):
    def map(self, value):
        return value[1]


def test_data_types_tuples_and_user_classes():
    env = local_env()
    word_counts = env.from_elements(("hello", 1), ("world", 2))
    assert collect(word_counts.map(SecondField())) == [1, 2]
    people = collect(env.from_elements(("alice", 30)).map(ToPerson()))
    assert [(n, p.name, p.age) for n, p in people] == [(1, "alice", 30)]


def test_time_window_tumbling_by_the_time_records_enter():
    # records that enter together are in one 50 ms window, which fires at the end of input
    env = local_env()
    records = env.from_collection([("a", 1), ("b", 1), ("a", 1), ("a", 1)])
    assert sorted(collect(records.key_by(First()).time_window(milliseconds(50))
                          .reduce(Count()))) == [("a", 3), ("b", 1)]

    # records a second apart are in windows of their own
    class Spaced(SourceFunction):
        def run(self, ctx):
            for _ in range(3):
                ctx.collect(("a", 1))
                time.sleep(1)

    env = local_env()
    windows = env.create_python_source(Spaced()).key_by(First()) \
        .time_window(milliseconds(50)).reduce(Count())
    assert collect(windows) == [("a", 1)] * 3


def test_time_window_sliding():
    env = local_env()
    records = env.from_collection([("a", 1), ("a", 1), ("b", 1)])
    # "Last 100 milliseconds of data, sliding (jumping) by 20 milliseconds": records that
    # enter together are in the same 5 windows
    got = collect(records.key_by(First())
                  .time_window(milliseconds(100), milliseconds(20)).reduce(Count()))
    assert sorted(got) == [("a", 2)] * 5 + [("b", 1)] * 5


def test_output_and_print_write_each_element_to_standard_output(capsys):
    env = local_env()
    env.from_elements((1, "hello"), "text", 3).output()
    env.from_elements(4.5).print()
    env.execute()
    assert sorted(capsys.readouterr().out.splitlines()) == \
        sorted(["(1, 'hello')", "text", "3", "4.5"])


def test_write_as_text_with_a_write_mode(tmp_path):
    path = tmp_path / "result"
    path.write_text("old\n")
    env = local_env()
    env.from_elements((1, "a"), "b").write_as_text(f"file://{path}", mode=WriteMode.OVERWRITE)
    env.execute()
    assert path.read_text().splitlines() == ["(1, 'a')", "b"]
    env.from_elements("c").write_as_text(str(path))  # NO_OVERWRITE, the default
    with pytest.raises(Exception, match="exists"):
        env.execute()


class Utf8Line(SerializationSchema):
    def serialize(self, value):
        return f"{value}\n".encode()


def test_write_to_socket_with_a_serialization_schema():
    server = Server()
    try:
        env = local_env()
        env.from_elements("x", (1, 2)).write_to_socket("127.0.0.1", server.port, Utf8Line())
        env.execute()
    finally:
        server.close()
    assert b"".join(server.received).decode().splitlines() == ["x", "(1, 2)"]


class StreamSelector(OutputSelector):
    def select(self, value):
        return ["even"] if value % 2 == 0 else ["odd"]


def test_split_and_select():
    env = local_env()
    splited_stream = env.from_collection(range(10)).split(StreamSelector())
    even_data_stream = splited_stream.select("even")
    odd_data_stream = splited_stream.select("odd")
    all_data_stream = splited_stream.select("even", "odd")
    assert collect(even_data_stream) == [0, 2, 4, 6, 8]
    assert collect(odd_data_stream) == [1, 3, 5, 7, 9]
    assert collect(all_data_stream) == list(range(10))


def test_union_of_several_streams_and_with_itself():
    env = local_env()
    one = env.from_elements(1, 2)
    union = one.union(env.from_elements(3), env.from_elements(4, 5))
    assert sorted(collect(union)) == [1, 2, 3, 4, 5]
    # "If you union a data stream with itself you will get each element twice"
    assert sorted(collect(one.union(one))) == [1, 1, 2, 2]


class MinusOne(MapFunction):
    def map(self, value):
        return value - 1


class Positive(FilterFunction):
    def filter(self, value):
        return value > 0


def test_iterate_feeds_records_back_until_they_leave_the_loop():
    env = local_env()
    head = env.from_elements(3, 1).iterate(5000)
    minus_one = head.map(MinusOne())
    head.close_with(minus_one.filter(Positive()))
    assert sorted(collect(minus_one)) == [0, 0, 1, 2]  # 3 -> 2 -> 1 -> 0 and 1 -> 0


def test_set_parallelism_applies_to_operators_and_sinks(capsys):
    env = local_env()
    env.set_parallelism(3)
    env.generate_sequence(1, 30).output()
    env.execute()
    prefixes = {line.split("> ")[0] for line in capsys.readouterr().out.splitlines()}
    assert prefixes == {"1", "2", "3"}


def test_execute_with_a_job_name_or_local(capsys):
    factory = local_factory()
    for run in (lambda env: env.execute(), lambda env: env.execute("named"),
                lambda env: env.execute(local=True), lambda env: env.execute(True),
                lambda env: env.execute("named", local=True)):
        env = factory.get_execution_environment().set_parallelism(1)
        env.from_elements("ran").output()
        assert run(env).get_job_id() is not None
    assert capsys.readouterr().out.splitlines() == ["ran"] * 5
    with pytest.raises(TypeError, match="local must be True or False"):
        factory.get_execution_environment().execute(local="yes")
