"""The benchmark workloads. Each workload is one function that builds and runs the job
on the engine, with its pure-Python single-process baseline next to it. Both call the
same user functions (lambdas and sink), so the ratio measures the engine's overhead."""
from api.common import Configuration, WatermarkStrategy
from api.datastream import StreamExecutionEnvironment
from api.datastream.connectors import NumberSequenceSource
from api.datastream.functions import SinkFunction

DISTINCT_WORDS = 10_000


class CountSink(SinkFunction):
    """Counts the records it receives and keeps the last one per key (``key`` of a record,
    or None to keep nothing). Runs in the driver, after each committed micro-batch."""

    def __init__(self, key=None):
        self.key = key
        self.count = 0
        self.last = {}

    def invoke(self, value, context):
        self.count += 1
        if self.key is not None:
            self.last[self.key(value)] = value


def _env(opts) -> StreamExecutionEnvironment:
    conf = Configuration()
    conf.set_string("execution.executor", opts.executor)
    conf.set_string("execution.micro-batch.size", str(opts.micro_batch_size))
    env = StreamExecutionEnvironment.get_execution_environment(conf, opts.session)
    env.set_parallelism(opts.parallelism)
    return env


def _numbers(env, n: int):
    return env.from_source(NumberSequenceSource(0, n - 1),
                           WatermarkStrategy.no_watermarks(), "numbers")


# --- W1: stateless map -> filter -> count ---------------------------------------------
double = lambda x: x * 2               # noqa: E731
not_multiple_of_3 = lambda x: x % 3 != 0  # noqa: E731


def w1(opts, n: int) -> CountSink:
    env = _env(opts)
    sink = CountSink()
    _numbers(env, n).map(double).filter(not_multiple_of_3).add_sink(sink)
    env.execute("W1")
    return sink


def w1_baseline(n: int) -> CountSink:
    sink = CountSink()
    for x in range(n):
        y = double(x)
        if not_multiple_of_3(y):
            sink.invoke(y, None)
    return sink


# --- W2: keyed rolling word count (STREAMING: one result per record) -------------------
to_word = lambda i: (f"w{i * 7919 % DISTINCT_WORDS}", 1)  # noqa: E731
word_of = lambda pair: pair[0]                                # noqa: E731
add_counts = lambda a, b: (a[0], a[1] + b[1])                 # noqa: E731


def w2(opts, n: int) -> CountSink:
    env = _env(opts)
    sink = CountSink(key=word_of)
    _numbers(env, n).map(to_word).key_by(word_of).reduce(add_counts).add_sink(sink)
    env.execute("W2")
    return sink


def w2_baseline(n: int) -> CountSink:
    sink = CountSink(key=word_of)
    state = {}
    for i in range(n):
        record = to_word(i)
        key = word_of(record)
        accumulated = state.get(key)
        accumulated = record if accumulated is None else add_counts(accumulated, record)
        state[key] = accumulated
        sink.invoke(accumulated, None)
    return sink


WORKLOADS = {"W1": (w1, w1_baseline), "W2": (w2, w2_baseline)}
