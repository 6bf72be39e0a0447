"""Declared types change how records travel (one conversion pass per chunk, msgpack
across exchanges), never what a job computes: typed and untyped runs of one program give
the same records, of the same Python types."""
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from api.common import Row, RowKind, Types, WatermarkStrategy
from api.common.watermark_strategy import TimestampAssigner
from tests.conftest import make_env

_BASIC = {
    "STRING": (Types.STRING, st.text(max_size=4)),
    "INT": (Types.INT, st.integers(-2 ** 31, 2 ** 31 - 1)),
    "LONG": (Types.LONG, st.integers(-2 ** 63, 2 ** 63 - 1)),
    "BIG_INT": (Types.BIG_INT, st.integers(-2 ** 70, 2 ** 70)),
    "DOUBLE": (Types.DOUBLE, st.floats(allow_nan=False)),
    "BOOLEAN": (Types.BOOLEAN, st.booleans()),
}


@st.composite
def _typed_values(draw):
    """(declared type, key type, values of it, whether the key is field 0)."""
    names = draw(st.lists(st.sampled_from(sorted(_BASIC)), min_size=1, max_size=3))
    as_tuple = draw(st.booleans())
    if not as_tuple:
        names = names[:1]
    types = [_BASIC[n][0]() for n in names]
    fields = st.tuples(*(_BASIC[n][1] for n in names))
    values = draw(st.lists(fields if as_tuple else fields.map(lambda t: t[0]),
                           min_size=1, max_size=40))
    return (Types.TUPLE(types) if as_tuple else types[0]), types[0], values, as_tuple


class _Position(TimestampAssigner):
    def extract_timestamp(self, value, record_timestamp):
        return value[0]


def _run(values, type_info, key_type, key_of_field, timed, batch_size):
    env = make_env("local", parallelism=2, micro_batch_size=batch_size)
    numbered = env.from_collection(list(enumerate(values)))
    if timed:
        numbered = numbered.assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(_Position()))
    typed = {} if type_info is None else {"output_type": type_info}
    keyed = {} if type_info is None else {"key_type": key_type}
    stream = numbered.map(lambda pair: pair[1], **typed).key_by(
        (lambda v: v[0]) if key_of_field else (lambda v: v), **keyed)
    return sorted(stream.map(lambda v: (repr(v), _shape(v))).execute_and_collect())


def _shape(value):
    """The value's Python types, all the way down."""
    if type(value) is tuple:
        return tuple(_shape(v) for v in value)
    return type(value).__name__


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_typed_values(), st.booleans(), st.sampled_from([1, 7, 1000]))
def test_typed_and_untyped_runs_give_the_same_records(typed_values, timed, batch_size):
    type_info, key_type, values, key_of_field = typed_values
    untyped = _run(values, None, None, key_of_field, timed, batch_size)
    assert _run(values, type_info, key_type, key_of_field, timed, batch_size) == untyped
    assert len(untyped) == len(values)


@st.composite
def _rows(draw):
    """(a ROW type, its key type, records for it: Rows of any kind, named as the type
    names its fields or not named, tuples and lists, fields None or not)."""
    basic = dict(_BASIC, FLOAT=(Types.FLOAT, st.floats(allow_nan=False)))
    names = draw(st.lists(st.sampled_from(sorted(basic)), min_size=1, max_size=3))
    types = [basic[n][0]() for n in names]
    named = draw(st.booleans())
    field_names = [f"{'c' if named else 'f'}{i}" for i in range(len(names))]
    key = basic[names[0]][1]
    fields = st.tuples(key, *(st.one_of(st.none(), basic[n][1]) for n in names[1:]))
    kinds = st.sampled_from(list(RowKind))
    record = st.one_of(
        fields,
        fields.map(list),
        st.tuples(fields, kinds).map(lambda fk: Row.of_kind(fk[1], *fk[0])),
        st.tuples(fields, kinds).map(
            lambda fk: Row.of_kind(fk[1], **dict(zip(field_names, fk[0])))))
    row_type = Types.ROW_NAMED(field_names, types) if named else Types.ROW(types)
    return row_type, types[0], draw(st.lists(record, min_size=1, max_size=40))


def _row_seen(row):
    """What a function sees of a row: its kind, names, values and their Python types."""
    return (str(row.get_row_kind()), getattr(row, "_fields", None), repr(row._values),
            [type(v).__name__ for v in row._values])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_rows(), st.booleans(), st.sampled_from([1, 7, 1000]))
def test_rows_cross_an_exchange_as_each_converted_row(rows, timed, batch_size):
    row_type, key_type, values = rows
    env = make_env("local", parallelism=2, micro_batch_size=batch_size)
    numbered = env.from_collection(list(enumerate(values)))
    if timed:
        numbered = numbered.assign_timestamps_and_watermarks(
            WatermarkStrategy.for_monotonous_timestamps().with_timestamp_assigner(_Position()))
    seen = numbered.map(lambda pair: pair[1], output_type=row_type) \
        .key_by(lambda row: row[0], key_type=key_type).map(_row_seen).execute_and_collect()
    assert sorted(seen) == sorted(_row_seen(row_type.convert(v)) for v in values)


def test_from_collection_converts_at_once_and_names_an_element_that_does_not_fit():
    env = make_env("local")
    rows = env.from_collection([("a", 1), ("b", 0.1)], type_info=Types.ROW_NAMED(
        ["s", "x"], [Types.STRING(), Types.FLOAT()]))
    assert sorted(rows.map(lambda r: (r.s, repr(r.x))).execute_and_collect()) == \
        [("a", "1.0"), ("b", "0.10000000149011612")]
    with pytest.raises(TypeError, match=r"element #1 \('b', 'x'\) does not match .*'f1'"):
        env.from_collection([("a", 1), ("b", "x")],
                            type_info=Types.TUPLE([Types.STRING(), Types.INT()]))
