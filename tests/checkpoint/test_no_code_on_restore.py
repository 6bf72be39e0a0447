"""Stored state runs no code on restore: commit records, checkpoint metadata and file
headers are data, never unpickled; state frames are unpickled only for state the job
declares pickled, and not at all with 'state.restore.allow-pickled' false. Each test
replaces files with a payload that would create a marker directory when unpickled,
with valid checksums (whoever writes a file writes its checksum), and shows that
nothing runs and the error names the file."""
import logging
import os
import pickle
import struct
import time
from zlib import crc32

import msgpack
import pytest

from api.common import Types
from api.datastream.functions import KeyedProcessFunction, RuntimeContext
from api.datastream.state import ValueStateDescriptor
from checkpoint.files import (
    CorruptFileError, FramedFile, UnknownFormatError, read_checked, write_checked, write_framed,
)
from checkpoint.job_directory import (
    METADATA_FILE, InvalidRestorePointError, JobDirectory, export_checkpoint, read_restore_point,
)
from checkpoint.metadata import CommitRecord, IncompatibleCheckpointError, OperatorInfo
from checkpoint.state_store import StateStore
from engine.errors import JobExecutionException
from engine.driver.state_reader import read_keyed_state
from statebackends.base import PickledStateError
from statebackends.hashmap import HashMapKeyedStateBackend
from statebackends.rocksdb import RocksDBKeyedStateBackend
from core.codec import Pickled, deserialize_data, deserialize_deferred, serialize_value
from core.state_spec import StateKind, StateSpec
from tests.conftest import GatheringSink, make_env

MAX_PARALLELISM = 8
TYPED = StateSpec("count", StateKind.VALUE, pickled=False)  # e.g. Types.LONG()
UNTYPED = StateSpec("count", StateKind.VALUE)               # no type: pickled allowed
BACKENDS = [HashMapKeyedStateBackend, RocksDBKeyedStateBackend]


class Payload:
    """Unpickling it creates the directory ``marker`` (if it does not exist)."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return os.makedirs, (self.marker, 0o777, True)


@pytest.fixture
def marker(tmp_path):
    path = str(tmp_path / "code-ran")
    yield path
    assert not os.path.exists(path), "the payload ran"


def _evil(marker) -> bytes:
    return pickle.dumps(Payload(marker))


def _checked_file(path, payload: bytes, version: int = 2) -> None:
    """A file as ``write_checked`` lays it out, around any payload, checksum included."""
    with open(path, "wb") as f:
        f.write(struct.pack("<8sIIQ", b"SDSCHK\0\n", version, crc32(payload), len(payload)))
        f.write(payload)


def _pickle_inside_msgpack(marker) -> bytes:
    """Data holding the payload as the pickle extension of state values."""
    return msgpack.packb({"batch_id": msgpack.ExtType(2, _evil(marker))})


def _record(batch_id: int) -> CommitRecord:
    return CommitRecord("job", batch_id, "hashmap",
                        {"counter": OperatorInfo("Counter", 1, MAX_PARALLELISM)},
                        {"source": {"0": batch_id}}, watermark=batch_id)


def _committed(root, backend_class=HashMapKeyedStateBackend, spec=UNTYPED, batches=2,
               value=lambda batch: batch):
    """A job directory with ``batches`` committed batches of keyed state ``spec``."""
    directory = JobDirectory(root)
    backend = backend_class("counter", (0, MAX_PARALLELISM - 1), MAX_PARALLELISM)
    state = backend.state(spec)
    for batch in range(batches):
        for key in ("a", "b"):
            backend.set_current_key(key)
            state.update(value(batch))
        backend.write_version(directory.store, batch)
        directory.commit(_record(batch))
    backend.close()
    return directory


KEYS, NAMESPACES, VALUES = 0, 1, 2  # lists of a stored key group (statebackends.base)


def _poison_state_files(store: StateStore, marker, parts=(VALUES,)) -> list:
    """Rewrites every state file as an attacker would: the same header, each item of
    ``parts`` (values, keys, namespaces) replaced by the payload as a pickle extension,
    valid checksums. The paths."""
    paths = []
    for operator_id in store.operator_ids():
        for state_file in store.list_files(operator_id):
            with FramedFile(state_file.path) as framed:
                header = framed.header
                frames = {g: deserialize_deferred(framed.read(g)) for g in framed.frame_ids()}
            for changes in frames.values():  # {name: [keys, namespaces, values, deletes..]}
                for lists in changes.values():
                    for part in parts:
                        lists[part] = [Pickled(_evil(marker))] * len(lists[part])
            write_framed(state_file.path, header,
                         ((g, serialize_value(c)) for g, c in frames.items()))
            paths.append(state_file.path)
    return paths


def _restore(store, backend_class, version=1, **options):
    return backend_class.restore(store, "counter", (0, MAX_PARALLELISM - 1), MAX_PARALLELISM,
                                 version, **options)


# -- commit records and checkpoint metadata ---------------------------------------------

@pytest.mark.parametrize("payload", ["raw pickle", "pickle inside msgpack"])
def test_a_poisoned_commit_record_is_skipped_naming_it_and_nothing_runs(tmp_path, marker,
                                                                       payload, caplog):
    directory = _committed(str(tmp_path / "job"))
    newest = os.path.join(directory.root, "metadata", "1")
    if payload == "raw pickle":
        with open(newest, "wb") as f:
            f.write(_evil(marker))
    else:
        _checked_file(newest, _pickle_inside_msgpack(marker))
    with caplog.at_level(logging.WARNING, logger="spark_datastream.checkpoint"):
        point = directory.find_restore_point()
    assert point.record.batch_id == 0  # the older commit, intact
    assert f"Skipping a damaged restore point: corrupt checkpoint file {newest}" in caplog.text
    with pytest.raises(CorruptFileError, match=newest):
        read_checked(newest)


@pytest.mark.parametrize("payload", ["raw pickle", "pickle inside msgpack"])
def test_poisoned_checkpoint_metadata_fails_naming_the_file_and_nothing_runs(tmp_path, marker,
                                                                            payload):
    directory = _committed(str(tmp_path / "job"))
    savepoint = export_checkpoint(directory.store, _record(1), str(tmp_path / "savepoint"))
    metadata = os.path.join(savepoint, METADATA_FILE)
    if payload == "raw pickle":
        with open(metadata, "wb") as f:
            f.write(_evil(marker))
        reason = "bad magic bytes"
    else:
        _checked_file(metadata, _pickle_inside_msgpack(marker))
        reason = "pickled object"
    with pytest.raises(InvalidRestorePointError, match=f"{metadata}: .*{reason}"):
        read_restore_point(savepoint)


def test_a_framed_file_header_is_data_too(tmp_path, marker):
    path = str(tmp_path / "0.snapshot")
    write_framed(path, {"meta": Pickled(_evil(marker))}, [])  # valid checksums around it
    with pytest.raises(CorruptFileError, match=f"{path}: cannot read the header: .*pickled"):
        FramedFile(path)


def test_metadata_is_data_with_a_schema_version(tmp_path):
    directory = _committed(str(tmp_path / "job"))
    stored = read_checked(os.path.join(directory.root, "metadata", "1"))
    assert stored["format_version"] == 3 and stored["batch_id"] == 1
    assert stored["operators"] == {"counter": ["Counter", 1, MAX_PARALLELISM]}
    assert CommitRecord.from_data("p", stored) == _record(1)
    with pytest.raises(TypeError, match="not data"):  # nothing is pickled to write it
        write_checked(str(tmp_path / "x"), {"f": Payload("m")})


def test_unknown_format_versions_fail_clearly(tmp_path):
    directory = _committed(str(tmp_path / "job"))
    newest = os.path.join(directory.root, "metadata", "1")
    _checked_file(newest, msgpack.packb({}), version=7)
    with pytest.raises(UnknownFormatError, match=f"{newest}: checkpoint file format version 7; "
                                                 "this version of spark-datastream reads "
                                                 "only version 2"):
        directory.find_restore_point()  # not skipped: it is another version's
    write_checked(newest, dict(_record(1).to_data(), format_version=9))
    with pytest.raises(IncompatibleCheckpointError, match=f"{newest} was written in state "
                                                          "format 9; .* reads format 3"):
        directory.find_restore_point()
    state_file = directory.store.list_files("counter")[0].path
    with open(state_file, "r+b") as f:
        f.seek(8)
        f.write(struct.pack("<I", 5))
    with pytest.raises(UnknownFormatError, match=f"{state_file}: framed file format version 5"):
        FramedFile(state_file)


# -- state files ----------------------------------------------------------------------

@pytest.mark.parametrize("backend_class", BACKENDS)
def test_poisoned_values_of_typed_state_are_refused_naming_the_file(tmp_path, marker,
                                                                    backend_class):
    directory = _committed(str(tmp_path / "job"), backend_class, TYPED)
    paths = _poison_state_files(directory.store, marker)
    backend = _restore(directory.store, backend_class)
    try:
        with pytest.raises(PickledStateError) as failure:
            backend.set_current_key("a")
            backend.state(TYPED).value()  # (hashmap: registering fails; RocksDB: reading)
    finally:
        backend.close()
    message = str(failure.value)
    assert any(path in message for path in paths)
    assert "state 'count'" in message and "declared with a type" in message


@pytest.mark.parametrize("backend_class", BACKENDS)
def test_allow_pickled_false_refuses_pickled_state_on_restore(tmp_path, marker, backend_class):
    directory = _committed(str(tmp_path / "job"), backend_class, UNTYPED)
    paths = _poison_state_files(directory.store, marker)
    with pytest.raises(PickledStateError, match="'state.restore.allow-pickled' is false") as e:
        _restore(directory.store, backend_class, allow_pickled=False)
    assert any(path in str(e.value) for path in paths)


@pytest.mark.parametrize("backend_class", BACKENDS)
def test_untyped_state_is_unpickled_because_the_job_declares_it(tmp_path, backend_class):
    # The contrast: the same payload runs when the job's state is untyped and pickled
    # state is allowed (the default), once the job registers the state -- not before.
    marker = str(tmp_path / "code-ran")
    directory = _committed(str(tmp_path / "job"), backend_class, UNTYPED)
    _poison_state_files(directory.store, marker)
    backend = _restore(directory.store, backend_class)
    try:
        assert not os.path.exists(marker)
        assert {type(v) for *_, v in backend.entries()} == {Pickled}
        backend.set_current_key("a")
        backend.state(UNTYPED).value()
        assert os.path.exists(marker)
    finally:
        backend.close()


@pytest.mark.parametrize("backend_class", BACKENDS)
def test_pickled_values_of_an_unregistered_state_are_kept_as_they_are(tmp_path, marker,
                                                                      backend_class):
    directory = _committed(str(tmp_path / "job"), backend_class, UNTYPED)
    _poison_state_files(directory.store, marker)
    backend = _restore(directory.store, backend_class)
    try:
        backend.write_version(directory.store, 10)  # a snapshot: every entry rewritten
    finally:
        backend.close()
    again = _restore(directory.store, backend_class, version=10)
    try:
        assert [v.data for *_, v in again.entries()] == [_evil(marker)] * 2
    finally:
        again.close()


@pytest.mark.parametrize("backend_class", BACKENDS)
def test_state_of_declared_types_is_stored_without_pickle(tmp_path, backend_class):
    import datetime
    from decimal import Decimal
    from api.common import Instant, Row
    from engine.time.windows import CountWindow, GlobalWindow, TimeWindow

    values = [Row(name="a", n=1), Decimal("1.50"), datetime.date(2024, 2, 29),
              datetime.time(1, 2, 3, 4), datetime.datetime(2024, 1, 1, 12, 0, 0, 5),
              datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone(datetime.timedelta(hours=2))),
              Instant(5, 6), 2 ** 80, ("t", [1.5, b"x"], {"k": None}), True]
    windows = [TimeWindow(0, 10), CountWindow(3), GlobalWindow.get(), None]
    directory = JobDirectory(str(tmp_path / "job"))
    backend = backend_class("counter", (0, MAX_PARALLELISM - 1), MAX_PARALLELISM,
                            allow_pickled=False)
    state = backend.state(TYPED)
    for i, value in enumerate(values):
        backend.set_current_key(("key", i))
        backend.set_current_namespace(windows[i % len(windows)])
        state.update(value)
    backend.write_version(directory.store, 0)
    backend.close()
    restored = _restore(directory.store, backend_class, version=0, allow_pickled=False)
    try:
        restored.state(TYPED)
        got = {key[1]: (namespace, value) for _, key, namespace, value in restored.entries()}
    finally:
        restored.close()
    assert [got[i][1] for i in range(len(values))] == values
    assert [type(got[i][1]) for i in range(len(values))] == [type(v) for v in values]
    assert [got[i][0] for i in range(len(values))] == [windows[i % 4] for i in range(len(values))]


@pytest.mark.parametrize("backend_class", BACKENDS)
def test_what_a_job_may_not_pickle_fails_when_written_naming_state_and_key(tmp_path,
                                                                          backend_class):
    store = StateStore(str(tmp_path))
    backend = backend_class("counter", (0, MAX_PARALLELISM - 1), MAX_PARALLELISM)
    try:
        backend.set_current_key("k1")
        with pytest.raises(TypeError, match=r"state 'count' for key 'k1' cannot be serialized: "
                                            r"a .*Payload is not data.*declared with a type"):
            backend.state(TYPED).update(Payload("m"))
            backend.write_version(store, 0)  # (hashmap: values are serialized here)
    finally:
        backend.close()
    strict = backend_class("counter", (0, MAX_PARALLELISM - 1), MAX_PARALLELISM,
                           allow_pickled=False)
    try:
        strict.set_current_key("k1")
        with pytest.raises(TypeError, match=r"Payload is not data.*'state.restore.allow-pickled' "
                                            r"is false"):
            strict.state(UNTYPED).update(Payload("m"))
            strict.write_version(store, 1)
        strict.set_current_key(Payload("key"))  # keys too
        with pytest.raises(TypeError, match="Payload is not data"):
            strict.state(UNTYPED).update(1)
            strict.write_version(store, 2)
    finally:
        strict.close()


# -- whole jobs -------------------------------------------------------------------------

class Count(KeyedProcessFunction):
    def __init__(self, type_info):
        self.type_info = type_info

    def open(self, runtime_context: RuntimeContext):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", self.type_info))

    def process_element(self, value, ctx):
        self.count.update((self.count.value() or 0) + 1)
        yield f"{value},{self.count.value()}"


def _slowly(value):
    """Passes ``value`` on after 20 ms: the job is still running when the test stops it
    with a savepoint after its first batch."""
    time.sleep(0.02)
    return value


def _counting_env(tmp_path, type_info, sink=None, **conf):
    env = make_env("local", parallelism=1, micro_batch_size=5, **conf)
    (env.from_collection(["a", "b"] * 5, Types.STRING()).uid("words")
        .map(_slowly, Types.STRING())
        .key_by(lambda w: w, Types.STRING())
        .process(Count(type_info), Types.STRING()).uid("counter")
        .add_sink(sink or GatheringSink()))
    return env


def _savepoint(tmp_path, type_info, conf) -> str:
    """A savepoint of the counting job after its first batch."""
    env = _counting_env(tmp_path, type_info,
                        **{"state.savepoints.dir": str(tmp_path / "savepoints")}, **conf)
    client = env.execute_async("counting")
    path = client.stop_with_savepoint(False).result(timeout=60)
    client.get_job_execution_result().result(timeout=60)
    return path


@pytest.mark.parametrize("type_info, conf", [
    (Types.LONG(), {}),
    (Types.PICKLED_BYTE_ARRAY(), {"state.restore.allow-pickled": "false"}),
])
def test_a_job_restoring_a_poisoned_savepoint_fails_naming_the_file(tmp_path, marker,
                                                                     type_info, conf):
    savepoint = _savepoint(tmp_path, type_info, conf)
    paths = _poison_state_files(StateStore(savepoint), marker)
    env = _counting_env(tmp_path, type_info, **{"execution.savepoint.path": savepoint}, **conf)
    with pytest.raises((JobExecutionException, PickledStateError)) as failure:
        env.execute("counting")
    # (The job links the savepoint's files into its own directory, and names its copy.)
    assert any(os.path.relpath(path, savepoint) in str(failure.value) for path in paths)


def test_a_savepoint_of_typed_state_restores_and_reads_offline_without_pickle(tmp_path):
    strict = {"state.restore.allow-pickled": "false"}
    savepoint = _savepoint(tmp_path, Types.LONG(), strict)
    rows = read_keyed_state(savepoint, "counter", "count", allow_pickled=False)
    assert {row.key for row in rows} == {"a", "b"}
    assert all(type(row.value) is int and row.value > 0 for row in rows)
    sink = GatheringSink()
    env = _counting_env(tmp_path, Types.LONG(), sink,
                        **{"execution.savepoint.path": savepoint}, **strict)
    env.execute("counting")
    counted = {"a": 0, "b": 0}
    for row in rows:
        counted[row.key] = row.value
    for line in sink.values():  # the restored counts go on
        key, count = line.split(",")
        counted[key] += 1
        assert int(count) == counted[key]
    assert counted == {"a": 5, "b": 5}


TRUST = "execution.savepoint.trust-pickled"


def test_a_poisoned_savepoint_given_to_an_untyped_job_runs_no_code_by_default(tmp_path,
                                                                            marker):
    # Another job's savepoint (its own checkpoint root), poisoned, restored under the
    # default settings by a job whose state is untyped: refused, naming the opt-in; a
    # plain second run resumes from the job's own directory, which remembers that its
    # state came from that savepoint: refused again. The payload never runs.
    savepoint = _savepoint(tmp_path / "theirs", Types.PICKLED_BYTE_ARRAY(), {})
    _poison_state_files(StateStore(savepoint), marker)
    own = {"state.checkpoints.dir": str(tmp_path / "ours")}
    for conf in ({"execution.savepoint.path": savepoint}, {}):
        env = _counting_env(tmp_path, Types.PICKLED_BYTE_ARRAY(), **own, **conf)
        with pytest.raises((JobExecutionException, PickledStateError)) as failure:
            env.execute("counting")
        assert f"'{TRUST}' is not true" in str(failure.value)


class Seen(KeyedProcessFunction):
    """Keeps the set of values seen per key (a set is not data: it is pickled)."""

    def open(self, runtime_context: RuntimeContext):
        self.seen = runtime_context.get_state(ValueStateDescriptor("seen",
                                                                   Types.PICKLED_BYTE_ARRAY()))

    def process_element(self, value, ctx):
        seen = (self.seen.value() or set()) | {value}
        self.seen.update(seen)
        yield f"{ctx.get_current_key()}:{len(seen)}"


def _seen_env(values, sink=None, **conf):
    env = make_env("local", parallelism=1, micro_batch_size=2, **conf)
    (env.from_collection(values, Types.STRING()).uid("letters")
        .map(_slowly, Types.STRING())
        .key_by(lambda v: v[0], Types.STRING())
        .process(Seen(), Types.STRING()).uid("seen")
        .add_sink(sink or GatheringSink()))
    return env


def test_a_savepoint_of_pickled_state_restores_once_the_user_trusts_it(tmp_path):
    letters = [f"a{i}" for i in range(1, 9)]  # four batches: the savepoint is after one
    env = _seen_env(letters, **{"state.savepoints.dir": str(tmp_path / "savepoints")})
    client = env.execute_async("seen")
    savepoint = client.stop_with_savepoint(False).result(timeout=60)
    client.get_job_execution_result().result(timeout=60)
    restored = {"execution.savepoint.path": savepoint}
    with pytest.raises((JobExecutionException, PickledStateError), match=f"'{TRUST}' is not"):
        _seen_env(letters, **restored).execute("seen")
    sink = GatheringSink()
    _seen_env(letters, sink, **restored, **{TRUST: "true"}).execute("seen")
    seen = [int(line.split(":")[1]) for line in sink.values()]
    # The restored set goes on: the letters after the savepoint count from where it was.
    assert seen and seen == list(range(len(letters) + 1 - len(seen), len(letters) + 1))


class Timed(KeyedProcessFunction):
    """Counts per key in typed state and sets a processing-time timer an hour ahead."""

    def open(self, runtime_context: RuntimeContext):
        self.count = runtime_context.get_state(ValueStateDescriptor("count", Types.LONG()))

    def process_element(self, value, ctx):
        self.count.update((self.count.value() or 0) + 1)
        now = ctx.timer_service().current_processing_time()
        ctx.timer_service().register_processing_time_timer(now + 3_600_000)
        yield f"{value[0]},{self.count.value()}"


def _typed_env(sink=None, **conf):
    """A job whose types are all declared: its keys, timers, reduce and window state
    are data."""
    env = make_env("local", parallelism=1, micro_batch_size=4, **conf)
    pairs = env.from_collection([("a", 1), ("b", 2)] * 4,
                                Types.TUPLE([Types.STRING(), Types.INT()])).uid("pairs")
    sums = pairs.key_by(lambda p: p[0], Types.STRING()).reduce(
        lambda x, y: (x[0], x[1] + y[1])).uid("sums")
    (sums.key_by(lambda p: p[0], Types.STRING())
        .count_window(3).reduce(lambda x, y: (x[0], max(x[1], y[1]))).uid("windows")
        .add_sink(GatheringSink()))
    (sums.key_by(lambda p: p[0], Types.STRING())
        .process(Timed(), Types.STRING()).uid("timed")
        .add_sink(sink or GatheringSink()))
    return env


@pytest.mark.parametrize("parts", [(KEYS,), (NAMESPACES,), (VALUES,)],
                         ids=["keys", "namespaces", "values"])
def test_a_typed_job_runs_no_code_from_a_poisoned_savepoint_even_when_trusted(
        tmp_path, marker, parts):
    # Another job's savepoint (its own checkpoint root) whose keys, namespaces or values
    # of every state -- the user's, the timers, reduce, the count window's contents and
    # counter -- hold a payload. A job that declares its types reads them as data: it
    # refuses them under the default settings, with the savepoint trusted, and from its
    # own directory after. The payload never runs.
    env = _typed_env(**{"state.savepoints.dir": str(tmp_path / "theirs")})
    client = env.execute_async("typed")
    savepoint = client.stop_with_savepoint(False).result(timeout=60)
    client.get_job_execution_result().result(timeout=60)
    store = StateStore(savepoint)
    assert {"sums", "windows", "timed"} <= set(store.operator_ids())
    _poison_state_files(store, marker, parts)
    own = {"state.checkpoints.dir": str(tmp_path / "ours")}
    for conf in ({"execution.savepoint.path": savepoint},
                 {"execution.savepoint.path": savepoint, TRUST: "true"}, {}):
        with pytest.raises((JobExecutionException, PickledStateError)) as failure:
            _typed_env(**own, **conf).execute("typed")
        assert "pickled data, which is not unpickled" in str(failure.value)
        if TRUST in conf:
            why = "key type" if parts != (VALUES,) else "its values are data"
            assert why in str(failure.value)


def test_a_typed_job_keeps_its_keys_timers_and_engine_state_as_data(tmp_path):
    # Restoring its own checkpoints with pickles allowed, a typed job still finds no
    # pickle anywhere in its state: everything it stored reads back as data.
    env = _typed_env(**{"state.savepoints.dir": str(tmp_path / "savepoints")})
    client = env.execute_async("typed")
    savepoint = client.stop_with_savepoint(False).result(timeout=60)
    client.get_job_execution_result().result(timeout=60)
    store = StateStore(savepoint)
    for operator_id in ("sums", "windows", "timed"):
        for state_file in store.list_files(operator_id):
            with FramedFile(state_file.path) as framed:
                for group in framed.frame_ids():
                    deserialize_data(framed.read(group))  # raises on any pickle
    rows = read_keyed_state(savepoint, "timed", "_timers_processing")
    assert {row.key for row in rows} == {"a", "b"}


def test_reading_state_offline_unpickles_only_when_asked(tmp_path, marker):
    savepoint = _savepoint(tmp_path, Types.PICKLED_BYTE_ARRAY(), {})
    counts = {row.key: row.value for row in read_keyed_state(
        savepoint, "counter", "count", allow_pickled=True)}
    assert set(counts) == {"a", "b"} and all(type(n) is int for n in counts.values())
    _poison_state_files(StateStore(savepoint), marker)
    with pytest.raises(PickledStateError, match="only when called with allow_pickled=True"):
        read_keyed_state(savepoint, "counter", "count")


class Opaque:
    """A key that is not data."""

    def __init__(self, name):
        self.name = name

    def __eq__(self, other):
        return type(other) is Opaque and other.name == self.name

    def __hash__(self):
        return hash(self.name)


@pytest.mark.parametrize("key_type, fails", [(Types.STRING(), True),
                                             (Types.PICKLED_BYTE_ARRAY(), False),
                                             (None, False)])
def test_keys_of_a_declared_key_type_must_be_data(tmp_path, key_type, fails):
    env = make_env("local", parallelism=1, **{"state.checkpoints.dir": str(tmp_path)})
    sink = GatheringSink()
    (env.from_collection(["a", "b", "a"], Types.STRING())
        .key_by(lambda w: Opaque(w), key_type)
        .process(Count(Types.LONG()), Types.STRING()).uid("counter")
        .add_sink(sink))
    if not fails:
        env.execute("opaque keys")
        assert sorted(sink.values()) == ["a,1", "a,2", "b,1"]
        return
    # As in PyFlink, where the key selector's output cannot be encoded as a STRING.
    with pytest.raises(JobExecutionException) as failure:
        env.execute("opaque keys")
    message = str(failure.value)
    assert "(key selector)' failed on record 'a'" in message
    assert "is a Opaque, not a key of type STRING" in message
