"""Planning: chaining, stage cuts, ship strategies and the JSON execution plan."""
import json

import pytest

from engine.graph import PlanError
from tests.conftest import make_env


def stages_of(env):
    from engine.graph import build_plan
    plan = build_plan(env._transformations, env.get_parallelism(), env.get_max_parallelism(),
                      env.is_chaining_enabled())
    return [[plan.nodes[n].name for n in stage.nodes] for stage in plan.stages], plan


def test_forward_operators_of_equal_parallelism_are_chained_into_one_stage():
    env = make_env("local", parallelism=2)
    ds = env.from_collection([1]).map(lambda x: x).name("a").filter(bool).name("b")
    ds.key_by(lambda x: x).sum(0).print()
    stages, plan = stages_of(env)
    assert stages == [["Source: Collection Source"], ["a", "b"],
                      ["Reduce", "Print to Std. Out"]]
    strategies = [e.partitioning.strategy for e in plan.edges.values()]
    assert strategies == ["REBALANCE", "FORWARD", "HASH", "FORWARD"]


def test_chaining_controls_split_stages():
    env = make_env("local", parallelism=1)
    src = env.from_collection([1])
    src.map(lambda x: x).name("a").map(lambda x: x).name("b").start_new_chain() \
        .map(lambda x: x).name("c").disable_chaining().map(lambda x: x).name("d") \
        .slot_sharing_group("other").print()
    stages, _ = stages_of(env)
    assert stages == [["Source: Collection Source", "a"], ["b"], ["c"], ["d", "Print to Std. Out"]]


def test_disabled_chaining_gives_every_operator_a_stage():
    env = make_env("local", parallelism=1)
    env.disable_operator_chaining()
    env.from_collection([1]).map(lambda x: x).print()
    stages, _ = stages_of(env)
    assert stages == [["Source: Collection Source"], ["Map"], ["Print to Std. Out"]]


def test_union_consumer_starts_a_stage_with_two_inputs():
    env = make_env("local", parallelism=1)
    a = env.from_collection([1])
    b = env.from_collection([2])
    a.union(b).map(lambda x: x).print()
    stages, plan = stages_of(env)
    assert stages[-1] == ["Map", "Print to Std. Out"]
    assert len(plan.stages[-1].in_edges) == 2


def test_forward_with_a_parallelism_change_fails_at_planning():
    env = make_env("local", parallelism=2)
    env.from_collection([1]).forward().map(lambda x: x).print()
    with pytest.raises(PlanError, match="Forward partitioning does not allow change of "
                                        "parallelism"):
        env.get_execution_plan()


def test_execution_plan_json_in_flinks_layout():
    env = make_env("local", parallelism=2)
    (env.from_collection([1]).map(lambda x: x).filter(bool).key_by(lambda x: x)
     .reduce(lambda a, b: a).print())
    text = env.get_execution_plan()
    assert text.startswith('{\n  "nodes" : [ {\n    "id" : ')
    nodes = json.loads(text)["nodes"]
    assert [(n["type"], n["pact"], n["parallelism"]) for n in nodes] == [
        ("Source: Collection Source", "Data Source", 1),
        ("Map, Filter", "Operator", 2),
        ("Reduce", "Operator", 2),
        ("Sink: Print to Std. Out", "Data Sink", 2),
    ]
    assert [[p["ship_strategy"] for p in n.get("predecessors", [])] for n in nodes] == [
        [], ["REBALANCE"], ["HASH"], ["FORWARD"]]
    assert all(n["type"] == n["contents"] for n in nodes)


def _stamped(env, data):
    from api.common import WatermarkStrategy
    from api.common.watermark_strategy import TimestampAssigner

    class First(TimestampAssigner):
        def extract_timestamp(self, value, record_timestamp):
            return value[0]
    return env.from_collection(data).assign_timestamps_and_watermarks(
        WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(First()))


def test_stages_after_every_watermark_take_the_watermark_from_their_inputs():
    from api.common import Time
    from api.datastream.window import TumblingEventTimeWindows
    env = make_env("local", parallelism=2)
    windows = TumblingEventTimeWindows.of(Time.seconds(1))
    # a window after a window: both advance with the watermark their inputs bring
    _stamped(env, [(1, 1)]).key_by(lambda v: v[1]).window(windows).reduce(max) \
        .key_by(lambda v: v[1]).window(windows).reduce(max).print()
    stages, plan = stages_of(env)
    assert [s.watermark_from_inputs for s in plan.stages] == [False, False, True, True]

    # a keyed stage of one stream, before the union with another: its timers fire at the
    # committed watermark, so the stage after the union does too (what they emit would
    # be late there otherwise)
    env = make_env("local", parallelism=2)
    first = _stamped(env, [(1, 1)]).key_by(lambda v: v[1]).window(windows).reduce(max)
    first.union(_stamped(env, [(2, 2)])).key_by(lambda v: v[1]).window(windows) \
        .reduce(max).print()
    stages, plan = stages_of(env)
    late = {tuple(names): s.watermark_from_inputs for names, s in zip(stages, plan.stages)}
    assert not any(late.values()), late

    # a broadcast side input of records without timestamps: the stage it reaches keeps
    # the committed watermark (in Flink the side input holds it back until it ends), so
    # a bid's timer fires only once the side rows of its batch are in (Nexmark q13)
    from api.datastream import KeyedBroadcastProcessFunction
    from api.datastream.state import MapStateDescriptor
    from api.common import Types
    env = make_env("local", parallelism=2)
    side = env.from_collection([(1, "a")]).broadcast(
        MapStateDescriptor("side", Types.LONG(), Types.STRING()))

    class Join(KeyedBroadcastProcessFunction):
        def process_element(self, value, ctx):
            yield value

        def process_broadcast_element(self, value, ctx):
            pass
    _stamped(env, [(1, 1)]).key_by(lambda v: v[1]).connect(side).process(Join()).print()
    stages, plan = stages_of(env)
    assert not any(s.watermark_from_inputs for s in plan.stages)


def test_only_operators_of_the_users_functions_hand_records_on_unconverted():
    # The user's chained maps are Python operators (the first hands its records to the
    # second as they are); the Table planner's operators and the timestamp assigner are
    # Flink's Java operators, which convert what they emit.
    from api.common import Types, WatermarkStrategy
    from api.table import StreamTableEnvironment
    env = make_env("local", parallelism=1)
    t_env = StreamTableEnvironment.create(env)
    words = env.from_collection([("a", 1), ("b", 2)],
                                Types.ROW_NAMED(["w", "n"], [Types.STRING(), Types.INT()]))
    t_env.create_temporary_view("words", words)
    counts = t_env.to_changelog_stream(
        t_env.sql_query("SELECT w, SUM(n) AS s FROM words GROUP BY w"))
    counts.map(lambda r: r, counts.get_type()).name("user's first") \
        .map(lambda r: r).name("user's second") \
        .assign_timestamps_and_watermarks(WatermarkStrategy.no_watermarks()) \
        .map(str).name("user's third").print()
    _, plan = stages_of(env)
    python = {n.name for n in plan.nodes.values() if n.python_operator}
    assert python == {"user's first", "user's second", "user's third"}
    handing_on = {n.name for n in plan.nodes.values() if plan.hands_on_unconverted(n)}
    assert handing_on == {"user's first"}
