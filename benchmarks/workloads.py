"""The benchmark workloads. Each workload is one function that builds and runs the job
on the engine, with its pure-Python single-process baseline next to it. Both call the
same user functions (lambdas and sink), so the ratio measures the engine's overhead."""
import heapq
import os
import pickle
import shutil
import tempfile
import uuid

from api.common import Configuration, Duration, Time, TimestampAssigner, Types, WatermarkStrategy
from api.datastream import (AggregateFunction, KeyedProcessFunction, ProcessWindowFunction,
                            StreamExecutionEnvironment, WindowFunction)
from api.datastream.connectors import NumberSequenceSource
from api.datastream.functions import SinkFunction
from api.datastream.state import ValueStateDescriptor
from api.datastream.window import SlidingEventTimeWindows, TimeWindow, TumblingEventTimeWindows

DISTINCT_WORDS = 10_000


class CountSink(SinkFunction):
    """Counts the records it receives and keeps the last one per key (``key`` of a record,
    or None to keep nothing). In a job it runs in the tasks, one copy per subtask; each
    copy writes its count and last records to ``directory`` when the input ends (a
    baseline closes its one copy too), and ``gathered()`` adds them up afterwards,
    outside the timed run."""

    def __init__(self, key=None):
        self.key = key
        self.count = 0
        self.last = {}
        self.directory = tempfile.mkdtemp(prefix="benchmark-sink-")

    def invoke(self, value, context):
        self.count += 1
        if self.key is not None:
            self.last[self.key(value)] = value

    def close(self):
        with open(os.path.join(self.directory, uuid.uuid4().hex), "wb") as f:
            pickle.dump((self.count, self.last), f)

    def gathered(self) -> "CountSink":
        """The subtasks' counts and last records together (the directory is removed)."""
        total = CountSink(self.key)
        for name in os.listdir(self.directory):
            with open(os.path.join(self.directory, name), "rb") as f:
                count, last = pickle.load(f)
            total.count += count
            total.last.update(last)
        shutil.rmtree(self.directory)
        shutil.rmtree(total.directory)
        return total


def environment(opts) -> StreamExecutionEnvironment:
    conf = Configuration()
    conf.set_string("execution.executor", opts.executor)
    conf.set_string("execution.micro-batch.size", str(opts.micro_batch_size))
    conf.set_string("state.backend.type", getattr(opts, "state_backend", "hashmap"))
    conf.set_string("pipeline.object-reuse", str(getattr(opts, "object_reuse", False)).lower())
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
    env = environment(opts)
    sink = CountSink()
    _numbers(env, n).map(double).filter(not_multiple_of_3).add_sink(sink)
    env.execute("W1")
    return sink


def w1_baseline(opts, n: int) -> CountSink:
    sink = CountSink()
    for x in range(n):
        y = double(x)
        if not_multiple_of_3(y):
            sink.invoke(y, None)
    sink.close()  # keeps its results as the job's sink copies do
    return sink


# --- W2: keyed rolling word count (STREAMING: one result per record) -------------------
to_word = lambda i: (f"w{i * 7919 % DISTINCT_WORDS}", 1)  # noqa: E731
word_of = lambda pair: pair[0]                                # noqa: E731
add_counts = lambda a, b: (a[0], a[1] + b[1])                 # noqa: E731


def w2(opts, n: int) -> CountSink:
    env = environment(opts)
    sink = CountSink(key=word_of)
    _numbers(env, n).map(to_word).key_by(word_of).reduce(add_counts).add_sink(sink)
    env.execute("W2")
    return sink


def w2_baseline(opts, n: int) -> CountSink:
    sink = CountSink(key=word_of)
    state = {}
    for i in range(n):
        record = to_word(i)
        key = word_of(record)
        accumulated = state.get(key)
        accumulated = record if accumulated is None else add_counts(accumulated, record)
        state[key] = accumulated
        sink.invoke(accumulated, None)
    sink.close()  # keeps its results as the job's sink copies do
    return sink


# --- W4: event time: per-key counter flushed by one event-time timer per key -----------
DISTINCT_KEYS = 1_000
OUT_OF_ORDERNESS_MS = 5_000
TIMER_DELAY_MS = 10_000
MIN_WATERMARK, MAX_WATERMARK = -2 ** 63, 2 ** 63 - 1
# Event i: 10 ms apart, up to 4,999 ms early: never more than 5 s behind an earlier one.
to_event = lambda i: (f"k{i * 7919 % DISTINCT_KEYS}", i * 10 - (i * 37) % 5000)  # noqa: E731
event_key = lambda event: event[0]                                              # noqa: E731
fired_at = lambda result: (result[0], result[1])                                 # noqa: E731


class EventTime(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


class CountUntilTimer(KeyedProcessFunction):
    """Counts a key's events; the first event without a pending timer registers one at
    its timestamp + 10 s, which emits (key, timer time, count) and starts afresh."""

    def open(self, runtime_context):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))
        self.pending = runtime_context.get_state(ValueStateDescriptor("timer", Types.LONG()))

    def process_element(self, value, ctx):
        self.count.update((self.count.value() or 0) + 1)
        if self.pending.value() is None:
            timer = ctx.timestamp() + TIMER_DELAY_MS
            ctx.timer_service().register_event_time_timer(timer)
            self.pending.update(timer)

    def on_timer(self, timestamp, ctx):
        yield ctx.get_current_key(), timestamp, self.count.value()
        self.count.clear()
        self.pending.clear()


def w4(opts, n: int) -> CountSink:
    env = environment(opts)
    sink = CountSink(key=fired_at)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_seconds(OUT_OF_ORDERNESS_MS // 1000)).with_timestamp_assigner(EventTime())
    (_numbers(env, n).map(to_event).assign_timestamps_and_watermarks(strategy)
     .key_by(event_key).process(CountUntilTimer()).add_sink(sink))
    env.execute("W4")
    return sink


def _micro_batches(opts, n: int):
    """The engine's micro-batches of NumberSequenceSource(0, n-1): split s holds
    [n*s//p, n*(s+1)//p); batch b holds the b-th slice of at most micro_batch_size
    of every split, in split order. Yields (batch, [(split, range), ...])."""
    p, size = opts.parallelism, opts.micro_batch_size
    bounds = [(n * s // p, n * (s + 1) // p) for s in range(p)]
    batches = max(-(-(hi - lo) // size) for lo, hi in bounds)
    for b in range(batches):
        yield b, [(s, range(min(lo + b * size, hi), min(lo + (b + 1) * size, hi)))
                  for s, (lo, hi) in enumerate(bounds)]


def w4_baseline(opts, n: int) -> CountSink:
    """The same counting, with the engine's watermark rule (so the outputs can be
    compared exactly): a batch's records see the watermark fixed before it; after them
    the timers up to that next watermark fire in timestamp order. The watermark is the
    minimum over the unfinished splits of (max timestamp in earlier batches - 5 s - 1),
    and MAX at the last batch. (Flink's per-record watermark would fire timers sooner:
    fewer events per timer, more outputs.) Asserts the 5 s out-of-orderness bound."""
    sink = CountSink(key=fired_at)
    counts, pending, timers = {}, set(), []  # timers: heap of (time, key)
    no_max = MIN_WATERMARK + OUT_OF_ORDERNESS_MS + 1  # Flink's start: watermark MIN
    split_max = [no_max] * opts.parallelism
    finished = [False] * opts.parallelism
    watermark = MIN_WATERMARK
    batches = list(_micro_batches(opts, n))
    for b, splits in batches:
        batch_max = split_max[:]
        for s, numbers in splits:
            top = batch_max[s]
            for i in numbers:
                event = to_event(i)
                key, ts = event_key(event), event[1]
                assert ts >= top - OUT_OF_ORDERNESS_MS, (i, ts, top)
                if ts > top:
                    top = ts
                counts[key] = counts.get(key, 0) + 1
                if key not in pending:
                    pending.add(key)
                    heapq.heappush(timers, (ts + TIMER_DELAY_MS, key))
            batch_max[s] = top
        if b == len(batches) - 1:
            watermark = MAX_WATERMARK
        else:
            live = [m for m, done in zip(split_max, finished) if not done]
            watermark = max(watermark, min(live) - OUT_OF_ORDERNESS_MS - 1)
        while timers and timers[0][0] <= watermark:
            timer, key = heapq.heappop(timers)
            sink.invoke((key, timer, counts.pop(key)), None)
            pending.discard(key)
        split_max = batch_max
        finished = [numbers.stop == n * (s + 1) // opts.parallelism for s, numbers in splits]
    assert sum(count for _, _, count in sink.last.values()) == n
    assert len(sink.last) == sink.count  # one timer per (key, time): last is the multiset
    sink.close()  # keeps its results as the job's sink copies do
    return sink


# --- W3 / W5: event-time windows (tumbling aggregate, sliding reduce) -----------------
# The W4 events with a value field: (key, timestamp, i % 100). Each key has one event
# per 10 s of event time, so a 10 s tumbling window holds ~1 event per key, a 60 s
# window sliding by 10 s ~6 (and each event is in 6 windows): ~N window outputs each.
TUMBLE_MS = 10_000
SLIDE_SIZE_MS, SLIDE_MS = 60_000, 10_000
to_valued_event = lambda i: (f"k{i * 7919 % DISTINCT_KEYS}", i * 10 - (i * 37) % 5000,  # noqa
                             i % 100)
window_of = lambda result: (result[0], result[1])  # (key, window start)  # noqa: E731
add_values = lambda a, b: (a[0], a[1], a[2] + b[2])  # noqa: E731


class CountSum(AggregateFunction):
    """(count, sum of the value field) of a window."""

    def create_accumulator(self):
        return 0, 0

    def add(self, value, accumulator):
        return accumulator[0] + 1, accumulator[1] + value[2]

    def get_result(self, accumulator):
        return accumulator

    def merge(self, acc_a, acc_b):
        return acc_a[0] + acc_b[0], acc_a[1] + acc_b[1]


class WithKeyAndStart(ProcessWindowFunction):
    """Emits (key, window start, count, sum) for the window's one aggregate."""

    def process(self, key, context, elements):
        start = context.window().start
        for count, total in elements:
            yield key, start, count, total


class SumWithKeyAndStart(WindowFunction):
    """Emits (key, window start, sum of values) for the window's one reduced event."""

    def apply(self, key, window, inputs):
        for event in inputs:
            yield key, window.start, event[2]


def _windowed(opts, n: int, assigner):
    env = environment(opts)
    strategy = WatermarkStrategy.for_bounded_out_of_orderness(
        Duration.of_seconds(OUT_OF_ORDERNESS_MS // 1000)).with_timestamp_assigner(EventTime())
    return env, (_numbers(env, n).map(to_valued_event)
                 .assign_timestamps_and_watermarks(strategy)
                 .key_by(event_key).window(assigner))


def w3(opts, n: int) -> CountSink:
    sink = CountSink(key=window_of)
    env, windowed = _windowed(opts, n, TumblingEventTimeWindows.of(Time.seconds(10)))
    windowed.aggregate(CountSum(), WithKeyAndStart()).add_sink(sink)
    env.execute("W3")
    return sink


class _WindowContext:
    """The part of ProcessWindowFunction.Context that WithKeyAndStart uses."""

    def __init__(self, window):
        self._window = window

    def window(self):
        return self._window


def _value_total(n: int) -> int:
    """sum(i % 100 for i in range(n)), in closed form (not to slow the baselines)."""
    return n // 100 * 4950 + (n % 100) * (n % 100 - 1) // 2


def w3_baseline(opts, n: int) -> CountSink:
    """Groups all events by (key, window start) with the same CountSum, then calls the
    same window function. No event is late (the disorder stays under the 5 s bound, and
    the engine's watermark trails the batches), so the firing order is all that differs."""
    sink = CountSink(key=window_of)
    aggregate, window_function = CountSum(), WithKeyAndStart()
    accumulators = {}
    for i in range(n):
        event = to_valued_event(i)
        ts = event[1]
        window = (event_key(event), ts - ts % TUMBLE_MS)
        accumulator = accumulators.get(window)
        if accumulator is None:
            accumulator = aggregate.create_accumulator()
        accumulators[window] = aggregate.add(event, accumulator)
    for (key, start), accumulator in accumulators.items():
        context = _WindowContext(TimeWindow(start, start + TUMBLE_MS))
        for result in window_function.process(key, context,
                                              [aggregate.get_result(accumulator)]):
            sink.invoke(result, None)
    assert sum(r[2] for r in sink.last.values()) == n
    assert sum(r[3] for r in sink.last.values()) == _value_total(n)
    assert len(sink.last) == sink.count  # one output per (key, start): last is the multiset
    sink.close()  # keeps its results as the job's sink copies do
    return sink


def w5(opts, n: int) -> CountSink:
    sink = CountSink(key=window_of)
    env, windowed = _windowed(opts, n, SlidingEventTimeWindows.of(Time.seconds(60),
                                                                  Time.seconds(10)))
    windowed.reduce(add_values, SumWithKeyAndStart()).add_sink(sink)
    env.execute("W5")
    return sink


def w5_baseline(opts, n: int) -> CountSink:
    """Groups all events by (key, window start) for each of the 6 sliding windows an event
    is in (starts ts - ts % 10 s, then back by 10 s while start > ts - 60 s), reduces with
    the same function and calls the same window function."""
    sink = CountSink(key=window_of)
    window_function = SumWithKeyAndStart()
    reduced = {}
    for i in range(n):
        event = to_valued_event(i)
        key, ts = event_key(event), event[1]
        start = ts - ts % SLIDE_MS
        while start > ts - SLIDE_SIZE_MS:
            window = (key, start)
            value = reduced.get(window)
            reduced[window] = event if value is None else add_values(value, event)
            start -= SLIDE_MS
    for (key, start), value in reduced.items():
        for result in window_function.apply(key, TimeWindow(start, start + SLIDE_SIZE_MS),
                                            [value]):
            sink.invoke(result, None)
    assert sum(r[2] for r in sink.last.values()) == SLIDE_SIZE_MS // SLIDE_MS * _value_total(n)
    assert len(sink.last) == sink.count  # one output per (key, start): last is the multiset
    sink.close()  # keeps its results as the job's sink copies do
    return sink


WORKLOADS = {"W1": (w1, w1_baseline), "W2": (w2, w2_baseline), "W3": (w3, w3_baseline),
             "W4": (w4, w4_baseline), "W5": (w5, w5_baseline)}
