"""An operator's parallelism is the environment's parallelism when the operator is
created, as in PyFlink 2.3.0. Expected plans and outputs were observed on PyFlink 2.3.0
(2 CPUs): ``env.get_execution_plan()`` and the printed results of the same programs."""
import json
from collections import defaultdict

from api.common import Configuration, Duration, Types, WatermarkStrategy
from api.common.time import Time
from api.common.watermark_strategy import TimestampAssigner
from api.datastream import StreamExecutionEnvironment
from api.datastream.connectors.number_seq import NumberSequenceSource
from api.datastream.window import TumblingEventTimeWindows

from tests.conftest import make_env


def plan(env):
    """[(contents, parallelism, [(predecessor contents, ship strategy)])] in plan order."""
    nodes = json.loads(env.get_execution_plan())["nodes"]
    names = {n["id"]: n["contents"] for n in nodes}
    return [(n["contents"], n["parallelism"],
             [(names[p["id"]], p["ship_strategy"]) for p in n.get("predecessors", [])])
            for n in nodes]


def parallelism_of(env, contents):
    return {name: p for name, p, _ in plan(env)}[contents]


def test_operators_keep_the_parallelism_of_their_creation():
    # PyFlink: source 1, the first map 1 (FORWARD from the source), the keyed map and
    # the print sink 2.
    env = make_env("local", parallelism=1)
    ds = env.from_collection([("a", 1)]).map(lambda x: x)
    env.set_parallelism(2)
    ds.key_by(lambda x: x[0]).map(lambda x: x).print()
    nodes = plan(env)
    assert [(name, p) for name, p, _ in nodes] == [
        ("Source: Collection Source", 1), ("Map", 1), ("Map", 2),
        ("Sink: Print to Std. Out", 2)]
    assert nodes[1][2] == [("Source: Collection Source", "FORWARD")]
    assert nodes[2][2] == [("Map", "HASH")]


def test_parallelism_set_after_the_last_operator_changes_nothing():
    # PyFlink: a parallel source created at 3 stays 3, operators created at 2 stay 2
    # although the environment is at 4 when the plan is made.
    env = make_env("local", parallelism=3)
    mapped = env.from_source(NumberSequenceSource(1, 10), WatermarkStrategy.no_watermarks(),
                             "seq").map(lambda x: (x % 2, x))
    env.set_parallelism(2)
    mapped.filter(lambda x: True).print()
    env.set_parallelism(4)
    assert [(name, p) for name, p, _ in plan(env)] == [
        ("Source: seq", 3), ("Map", 3), ("Filter", 2), ("Sink: Print to Std. Out", 2)]


def test_an_unset_parallelism_is_the_default_at_creation():
    # PyFlink: before any set_parallelism the environment's parallelism is the default
    # (the CPU count, or 'parallelism.default'), and operators created then keep it.
    env = StreamExecutionEnvironment.get_execution_environment()
    default = env.get_parallelism()
    ds = env.from_collection([1]).map(lambda x: x)
    env.set_parallelism(default + 1)
    ds.print()
    assert parallelism_of(env, "Map") == default
    assert parallelism_of(env, "Sink: Print to Std. Out") == default + 1

    config = Configuration()
    config.set_string("parallelism.default", "3")
    env = StreamExecutionEnvironment.get_execution_environment(config)
    assert env.get_parallelism() == 3
    ds = env.from_collection([1]).map(lambda x: x)
    env.set_parallelism(1)
    ds.print()
    assert parallelism_of(env, "Map") == 3


class _Ts(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[1]


def test_window_all_runs_at_the_environment_parallelism_on_one_subtask(capsys):
    # PyFlink at parallelism 2, 3 and 4: the window node has the environment's
    # parallelism, and every result is printed by subtask 1 ("1> ").
    for parallelism in (2, 3):
        env = make_env("local", parallelism=parallelism)
        strategy = WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(_Ts())
        env.from_collection([("a", 1), ("b", 2), ("c", 1500), ("d", 3000)]) \
            .assign_timestamps_and_watermarks(strategy) \
            .window_all(TumblingEventTimeWindows.of(Time.seconds(1))) \
            .reduce(lambda a, b: (a[0] + b[0], a[1])).print()
        window = [(name, p) for name, p, _ in plan(env) if "AllWindow" in name]
        assert [p for _, p in window] == [parallelism]
        env.execute()
        lines = capsys.readouterr().out.splitlines()
        assert sorted(line[:3] for line in lines) == ["1> "] * 3
        assert sorted(line[3:] for line in lines)[1:] == ["('c', 1500)", "('d', 3000)"]


def test_an_order_sensitive_keyed_reduce_sees_each_key_in_input_order(env_factory):
    # The map is created at parallelism 1, so each key's records reach the reduce in
    # input order (no rebalance between the source and the map). PyFlink prints:
    # 1> ('k0', 0) ('k0', 3) ('k0', 306) ('k0', 30609), 2> ('k1', 1) ... ('k1', 1040710),
    # 1> ('k2', 2) ... ('k2', 2050811).
    env = env_factory(parallelism=1)
    ds = env.from_collection([("k%d" % (i % 3), i) for i in range(12)]).map(lambda x: x)
    env.set_parallelism(2)
    reduced = ds.key_by(lambda x: x[0]) \
        .reduce(lambda a, b: (a[0], a[1] * 100 + b[1] if a[1] < 10 ** 6 else b[1]))
    per_key = defaultdict(list)
    with reduced.execute_and_collect() as results:
        for key, value in results:
            per_key[key].append(value)
    assert dict(per_key) == {"k0": [0, 3, 306, 30609], "k1": [1, 104, 10407, 1040710],
                             "k2": [2, 205, 20508, 2050811]}
