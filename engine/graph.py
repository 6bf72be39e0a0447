"""Transformations (what the user asked for) and the plan of stages that runs them.

The API records a DAG of ``Transformation`` objects. ``build_plan`` resolves
virtual nodes (partitioning, union), decides chaining and cuts the physical
operators into stages at every edge that is not a chainable forward edge.
"""
import itertools
import json
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional, Tuple

from core.keygroups import KeyType

# Ship strategies (Flink's names, as they appear in the execution plan).
FORWARD = "FORWARD"
REBALANCE = "REBALANCE"
SHUFFLE = "SHUFFLE"
RESCALE = "RESCALE"
BROADCAST = "BROADCAST"
HASH = "HASH"
CUSTOM = "CUSTOM"

# Chaining strategies.
ALWAYS = "ALWAYS"
HEAD = "HEAD"
NEVER = "NEVER"


@dataclass(frozen=True)
class Partitioning:
    """How records travel over an edge; ``key_selector`` for HASH and CUSTOM, and for HASH
    the declared key type, which decides where keys go (None: untyped)."""
    strategy: str
    key_selector: Optional[object] = None
    partitioner: Optional[object] = None
    key_type: Optional[KeyType] = None


_ids = itertools.count(1)


class Transformation:
    """One node of the user's dataflow; operators are built from ``operator_factory``.

    ``kind`` is "source", "operator" or "sink" for physical nodes, and
    "partition", "union" or "side_output" for virtual ones (they only shape the edges).
    """

    def __init__(self, kind: str, name: str, inputs: List["Transformation"] = (),
                 operator_factory: Optional[Callable] = None, output_type=None,
                 parallelism: Optional[int] = None, partitioning: Optional[Partitioning] = None,
                 keyed: bool = False, pact: str = "Operator", source=None, sink=None):
        self.id = next(_ids)
        self.kind = kind
        self.name = name
        self.inputs = list(inputs)
        self.operator_factory = operator_factory
        self.output_type = output_type
        self.parallelism = parallelism
        self.max_parallelism: Optional[int] = None
        self.partitioning = partitioning
        self.keyed = keyed
        # Keyed: whether the keys and namespaces of its state may be pickled (no key type
        # declared, or one with PICKLED_BYTE_ARRAY in it, or windows of the user's own).
        self.pickled_keys = True
        # Runs a function of the user's DataStream program: a Python operator in PyFlink,
        # which hands its records to a chained Python operator as they are (see
        # ``Node.hands_on_unconverted``).
        self.python_operator = False
        self.pact = pact
        self.source = source  # the engine Source of a source node
        self.sink = sink      # the engine Sink of a sink node
        self.watermark_spec = None                  # of a Timestamps/Watermarks node
        self.uses_time = False                      # reads or assigns timestamps, or timers
        self.side_tag: Optional[str] = None         # of a "side_output" node
        self.broadcast_input: Optional[int] = None  # of an operator with broadcast state
        self.uid: Optional[str] = None
        self.uid_hash: Optional[str] = None
        self.description: Optional[str] = None
        self.chaining = ALWAYS
        self.slot_sharing_group: Optional[str] = None
        self.buffer_timeout: Optional[int] = None

    @property
    def physical(self) -> bool:
        return self.kind in ("source", "operator", "sink")

    def __repr__(self):
        return f"Transformation({self.id}, {self.kind}, {self.name!r})"


@dataclass
class Edge:
    id: int
    src: int
    dst: int
    partitioning: Partitioning
    side_tag: Optional[str] = None  # the edge carries this side output of src
    input_index: int = 0            # which input of dst it feeds (two-input operators: 0, 1)


@dataclass
class Node:
    """A physical operator in the plan."""
    id: int
    name: str
    uid: str
    pact: str
    parallelism: int
    max_parallelism: int
    keyed: bool
    operator_factory: Callable
    output_type: object
    pickled_keys: bool = True  # see Transformation.pickled_keys
    python_operator: bool = False  # see Transformation.python_operator
    key_type: Optional[KeyType] = None  # keyed: of its HASH inputs (their Partitioning)
    watermark_spec: object = None  # generates watermarks (assign_timestamps_and_watermarks)
    broadcast_input: Optional[int] = None  # the input whose records update broadcast state
    stage: int = -1
    chained: List[int] = field(default_factory=list)   # downstream nodes in the same stage
    out_edges: List[int] = field(default_factory=list)  # edges leaving the stage
    in_edges: List[int] = field(default_factory=list)   # all input edges

    @property
    def broadcast_state_id(self) -> str:
        """Where its broadcast state is stored: an operator id of its own, with one key
        group, since every parallel instance holds the same broadcast state."""
        return self.uid + "/broadcast"

    def stored_state(self) -> Dict[str, int]:
        """The operator ids its state is stored under, with their max parallelism."""
        stored = {self.uid: self.max_parallelism} if self.keyed else {}
        if self.broadcast_input is not None:
            stored[self.broadcast_state_id] = 1
        return stored


@dataclass
class Stage:
    """Operators chained into one task, run as one ``mapPartitions`` per micro-batch."""
    id: int
    parallelism: int
    nodes: List[int]            # topological order; nodes[0] is a head
    in_edges: List[int]         # edges entering the stage
    is_source: bool
    # Every node that generates watermarks is in a stage before this one, every keyed
    # stage before it has this too and no source's records reach it without timestamps
    # (``_mark_stages_after_watermarks``): the batch's records bring the timestamps of
    # every watermark input, and the stage advances to the watermark they give in the
    # same batch (``BatchInfo.watermark_step``).
    watermark_from_inputs: bool = False


@dataclass
class JobPlan:
    nodes: Dict[int, Node]
    edges: Dict[int, Edge]
    stages: List[Stage]
    timed: bool = False  # records carry timestamps (some operator uses time)

    def hands_on_unconverted(self, node: Node) -> bool:
        """Whether the node's records go on without being converted to its output type.
        PyFlink converts a record where it leaves Python: a Python operator whose one
        output is a Python operator chained to it hands the record on as the function
        returned it. Every other output (an exchange, a sink, a timestamp assigner,
        several consumers, side outputs read) converts it."""
        return (node.python_operator and not node.out_edges and len(node.chained) == 1
                and self.nodes[node.chained[0]].python_operator)


class PlanError(ValueError):
    """The dataflow cannot be executed as written (raised before anything runs)."""


def reachable(defined: List[Transformation]) -> List[Transformation]:
    """``defined`` and every transformation upstream of them, in the order created."""
    seen: Dict[int, Transformation] = {}
    stack = list(defined)
    while stack:
        t = stack.pop()
        if t.id not in seen:
            seen[t.id] = t
            stack.extend(t.inputs)
    return [seen[i] for i in sorted(seen)]


def _resolve_inputs(t: Transformation):
    """Yields (input index, physical upstream transformation, partitioning or None, side
    output tag or None) for t's inputs."""
    for index, inp in enumerate(t.inputs):
        for src, partitioning, side_tag in _resolve_input(inp, None, None):
            yield index, src, partitioning, side_tag


def _resolve_input(inp: Transformation, partitioning, side_tag):
    if inp.physical:
        yield inp, partitioning, side_tag
        return
    if inp.kind == "partition":
        partitioning = partitioning or inp.partitioning
    elif inp.kind == "side_output":
        side_tag = inp.side_tag
    for upstream in inp.inputs:  # (a union has several)
        yield from _resolve_input(upstream, partitioning, side_tag)


def build_plan(defined: List[Transformation], default_parallelism: int,
               default_max_parallelism: int, chaining_enabled: bool = True) -> JobPlan:
    """Turns ``defined`` (a job's operators and sinks) and the transformations that lead
    to them into nodes, edges and stages."""
    transformations = [t for t in reachable(defined) if t.physical]
    nodes: Dict[int, Node] = {}
    for t in transformations:
        nodes[t.id] = Node(
            id=t.id, name=t.name, uid=t.uid or f"{t.name}-{t.id}", pact=t.pact,
            parallelism=t.parallelism or default_parallelism,
            max_parallelism=t.max_parallelism or default_max_parallelism,
            keyed=t.keyed, operator_factory=t.operator_factory, output_type=t.output_type,
            pickled_keys=t.pickled_keys, python_operator=t.python_operator,
            watermark_spec=t.watermark_spec, broadcast_input=t.broadcast_input)
    edges: Dict[int, Edge] = {}
    for t in transformations:
        for input_index, src, partitioning, side_tag in _resolve_inputs(t):
            up, down = nodes[src.id], nodes[t.id]
            if partitioning is None:
                partitioning = Partitioning(
                    FORWARD if up.parallelism == down.parallelism else REBALANCE)
            if partitioning.strategy == FORWARD and up.parallelism != down.parallelism:
                raise PlanError(
                    "Forward partitioning does not allow change of parallelism. Upstream "
                    f"operation: {up.name} parallelism: {up.parallelism}, downstream "
                    f"operation: {down.name} parallelism: {down.parallelism}. You must use "
                    "another partitioning strategy, such as broadcast, rebalance, shuffle or "
                    "global.")
            if partitioning.strategy == HASH and down.keyed:  # (inputs agree: the API checks)
                down.key_type = partitioning.key_type
            edge = Edge(len(edges) + 1, src.id, t.id, partitioning, side_tag, input_index)
            edges[edge.id] = edge
            down.in_edges.append(edge.id)
    by_id = {t.id: t for t in transformations}
    slot_group = {}
    for t in transformations:  # inherited from the inputs when they agree, as in Flink
        inherited = {slot_group[edges[e].src] for e in nodes[t.id].in_edges}
        slot_group[t.id] = t.slot_sharing_group or (
            inherited.pop() if len(inherited) == 1 else "default")

    def chainable(edge: Edge) -> bool:
        up, down = by_id[edge.src], by_id[edge.dst]
        return (chaining_enabled and edge.partitioning.strategy == FORWARD
                and edge.side_tag is None and len(nodes[down.id].in_edges) == 1
                and down.chaining == ALWAYS and up.chaining != NEVER
                and slot_group[up.id] == slot_group[down.id])

    stages: List[Stage] = []
    for node in nodes.values():  # ids are topological: inputs are created first
        chained_in = [edges[e] for e in node.in_edges if chainable(edges[e])]
        if chained_in:
            upstream = nodes[chained_in[0].src]
            node.stage = upstream.stage
            upstream.chained.append(node.id)
            stages[node.stage].nodes.append(node.id)
        else:
            node.stage = len(stages)
            stages.append(Stage(node.stage, node.parallelism, [node.id], list(node.in_edges),
                                is_source=not node.in_edges))
        for e in node.in_edges:
            if not chainable(edges[e]):
                nodes[edges[e].src].out_edges.append(e)
    _mark_stages_after_watermarks(nodes, edges, stages)
    return JobPlan(nodes, edges, stages, timed=any(t.uses_time for t in transformations))


def _mark_stages_after_watermarks(nodes: Dict[int, Node], edges: Dict[int, Edge],
                                  stages: List[Stage]) -> None:
    """Sets ``watermark_from_inputs`` of each stage downstream of every stage with a node
    that generates watermarks, of no keyed stage without it (whose timers fire at the
    committed watermark: what they emit would be late there) and of no source whose
    records reach it without timestamps (a broadcast side input, say: in Flink it holds
    the stage's watermark back until it ends; here the stage keeps the committed one).
    Stages are in topological order."""
    generating = {n.stage for n in nodes.values() if n.watermark_spec is not None}
    keyed = {n.stage for n in nodes.values() if n.keyed}
    upstream: Dict[int, set] = {}
    untimed: Dict[int, bool] = {}  # records of a source reach the stage without timestamps
    for stage in stages:
        feeding = {nodes[edges[e].src].stage for e in stage.in_edges}
        before = upstream[stage.id] = feeding.union(*(upstream[s] for s in feeding))
        untimed[stage.id] = stage.id not in generating and (
            stage.is_source or any(untimed[s] for s in feeding))
        stage.watermark_from_inputs = bool(generating) and generating <= before and all(
            stages[s].watermark_from_inputs for s in before & keyed) and \
            not untimed[stage.id]


@dataclass
class PlanVertex:
    """One node of the plan as Flink shows it (a vertex of its job graph): chained
    operators as one, named by their comma-joined names; ``id`` is the first operator's
    node id, ``members`` all of them in chain order, ``inputs`` the vertices it reads
    from with each edge's ship strategy."""
    id: int
    name: str
    pact: str
    parallelism: int
    members: List[int]
    inputs: List[Tuple[int, str]]


def plan_vertices(plan: JobPlan) -> List[PlanVertex]:
    """The plan's vertices, as in PyFlink's plans: chained operators are one vertex;
    sources and sinks stay vertices of their own."""
    vertices: Dict[int, PlanVertex] = {}
    group_of: Dict[int, int] = {}
    for node in plan.nodes.values():
        chained_from = [e for e in node.in_edges if plan.edges[e].src in plan.stages[node.stage].nodes]
        up = plan.nodes[plan.edges[chained_from[0]].src] if chained_from else None
        if (up is not None and node.pact == up.pact == "Operator" and len(up.chained) == 1):
            group_of[node.id] = group_of[up.id]
            vertices[group_of[node.id]].members.append(node.id)
            continue
        group_of[node.id] = node.id
        vertices[node.id] = PlanVertex(
            node.id, "", node.pact, node.parallelism, [node.id],
            [(group_of[plan.edges[e].src], plan.edges[e].partitioning.strategy)
             for e in node.in_edges])
    for vertex in vertices.values():
        vertex.name = ", ".join(plan.nodes[n].name for n in vertex.members)
        if vertex.pact == "Data Sink":
            vertex.name = "Sink: " + vertex.name
    return list(vertices.values())


def execution_plan_json(plan: JobPlan) -> str:
    """The plan as Flink's JSON (nodes with id, type, pact, contents, parallelism and
    predecessors with their ship strategy): its ``plan_vertices``."""
    out = []
    for vertex in plan_vertices(plan):
        entry = {"id": vertex.id, "type": vertex.name, "pact": vertex.pact,
                 "contents": vertex.name, "parallelism": vertex.parallelism}
        if vertex.inputs:
            entry["predecessors"] = [{"id": source, "ship_strategy": strategy, "side": "second"}
                                     for source, strategy in vertex.inputs]
        out.append(entry)
    return _pretty_json({"nodes": out})


def _pretty_json(value, indent: int = 0) -> str:
    """JSON laid out like Jackson's default pretty printer, as Flink prints plans."""
    if isinstance(value, dict):
        pad = "  " * (indent + 1)
        fields = ",\n".join(f'{pad}{json.dumps(k)} : {_pretty_json(v, indent + 1)}'
                            for k, v in value.items())
        return "{\n" + fields + "\n" + "  " * indent + "}"
    if isinstance(value, list):
        return "[ " + ", ".join(_pretty_json(v, indent) for v in value) + " ]"
    return json.dumps(value)
