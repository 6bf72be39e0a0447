"""What passes between the driver and the tasks of one micro-batch.

The driver sends every task the ``CompiledJob`` (once per job, with the job's
``TaskSettings``) and the batch's ``BatchInfo``. A task returns a stream of small
typed results: ``DataChunk`` for the next stage (the executor moves it, the driver
never sees it), and ``SinkCommittable``, ``SplitPosition``, ``MaxTimestamp``,
``MetricReport``, ``Printed`` or ``TaskFailure`` for the driver. Each is a NamedTuple,
so it pickles as cheaply as a plain tuple.
"""
from dataclasses import dataclass, field
from typing import Any, Dict, NamedTuple, Optional, Tuple, Union

from engine.graph import JobPlan
from engine.time.watermarks import MIN_WATERMARK, WatermarkStep


@dataclass(frozen=True)
class BatchInfo:
    """What every task of one micro-batch needs to know, fixed by the driver."""
    run_id: str
    batch_id: int          # the state version this batch writes
    base_version: int      # the committed version the batch starts from
    is_final: bool         # input ends with this batch
    state_dir: str
    processing_time: int
    batch_mode: bool
    job_parameters: Dict[str, str] = field(default_factory=dict)
    input_watermark: int = MIN_WATERMARK  # what the batch's records see
    watermark: int = MIN_WATERMARK        # what the batch advances to after its records
                                          # (at least: ``watermark_step``)
    # How a stage after every watermark input (``Stage.watermark_from_inputs``) advances
    # further: to the watermark the timestamps of the batch's records give (as the
    # driver's tracker does after the batch), known from its inputs' chunks. None: the
    # batch's watermark is fixed (the last batch, a scripted one).
    watermark_step: Optional[WatermarkStep] = None
    job_name: str = ""
    # Where chunks for the next stage are left as files instead of travelling through
    # the executor's shuffle (Spark with a local master: every task shares this disk).
    exchange_dir: Optional[str] = None
    # Object reuse, with every stage of a partition index in one process (Spark with a
    # local master): the chunks a subtask sends to its own index stay there, unpickled.
    keeps_own_chunks: bool = False
    # The previous committed batch's sink output that the task of each sink subtask
    # makes visible while it runs this batch (``engine.runtime.sink_commits``).
    commits: Tuple["SinkCommit", ...] = ()


class SinkCommit(NamedTuple):
    """What subtask ``subtask`` of the sink named ``sink`` (in stage ``stage``) prepared for
    the committed batch ``batch_id``, and the sink's ``Committer`` that makes it visible."""
    sink: str
    stage: int
    subtask: int
    batch_id: int
    committer: Any
    committable: Any


@dataclass(frozen=True)
class TaskSettings:
    """The job's settings its tasks read: the part of the driver's ``JobSettings``
    (``engine.driver.settings``) that travels to them in the ``CompiledJob``."""
    state_backend: str = "hashmap"           # "hashmap" or "rocksdb"
    state_backend_options: Dict[str, object] = field(default_factory=dict)  # e.g. incremental
    storage_options: Dict[str, Dict[str, object]] = field(default_factory=dict)  # per scheme
    group_access: bool = False  # local state files open to their group (0770/0660)
    object_reuse: bool = False               # records may be shared, not copied


@dataclass
class CompiledJob:
    """The plan plus each node's pickled operator factory (a fresh copy per subtask), and
    the settings the tasks read."""
    run_id: str
    plan: JobPlan
    factories: Dict[int, bytes]
    settings: TaskSettings


class ExchangeFile(NamedTuple):
    """A chunk's pickled records left in a file of the batch's ``exchange_dir``."""
    path: str


class KeptChunk(NamedTuple):
    """A chunk's records kept, unpickled, in the process that routed them (which also
    runs their target subtask): the key under which ``engine.runtime.exchange`` keeps them."""
    key: tuple


class DataChunk(NamedTuple):
    """Records crossing ``edge`` from subtask ``source`` to subtask ``target``: one pickled
    list per (edge, source, target) and batch, as bytes or in an ``ExchangeFile`` (or
    unpickled, in the process of both subtasks: ``KeptChunk``). ``timestamps``: every
    ``MaxTimestamp`` of the batch the source subtask knows (of its own watermark inputs
    and from its inputs' chunks); a subtask that knows some sends a chunk to every target,
    records or not, so that event time moves downstream in the batch."""
    edge: int
    source: int
    target: int
    payload: Union[bytes, ExchangeFile, KeptChunk]
    timestamps: Tuple["MaxTimestamp", ...] = ()


class SinkCommittable(NamedTuple):
    """What a sink subtask prepared in this batch, committed after the batch commits."""
    node: int
    subtask: int
    committable: Any


class MaxTimestamp(NamedTuple):
    """The largest timestamp a Timestamps/Watermarks node assigned in this batch to the
    records of one watermark input: a source split (the node is chained to a source) or
    the node's subtask. Inputs without records report nothing."""
    node: int
    input: Union[str, int]
    timestamp: int


class SplitPosition(NamedTuple):
    """Where a source split stands after this batch, when only its reader could tell."""
    node: int
    split: str
    position: Any


class MetricReport(NamedTuple):
    """One subtask's metrics of one operator after a batch (``engine.runtime.metrics``): counter
    increments, meter increments with their time span, gauge values, and distributions
    of the batch's values as ``(count, sum, min, max)``, each by metric identifier."""
    node: int
    subtask: int
    counters: Dict[str, int]
    meters: Dict[str, Tuple[int, int]]
    gauges: Dict[str, Any]
    distributions: Dict[str, tuple]


class Printed(NamedTuple):
    """What a subtask's functions wrote to ``sys.stdout`` in this batch (the print sink's
    lines too), for the driver's stdout; ``closing``: what their ``close()`` wrote, after
    the final batch (the driver writes it after the rest, as Flink closes functions once
    the job's records are through)."""
    stage: int
    subtask: int
    text: str
    closing: bool = False


class TaskFailure(NamedTuple):
    """A task failed (user code or bad input); the error names operator and record."""
    error: Exception


def for_driver(result) -> bool:
    """Whether a task's result goes to the driver (all but ``DataChunk``)."""
    return not isinstance(result, DataChunk)
