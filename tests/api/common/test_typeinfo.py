"""Expected values observed on PyFlink 2.3.0 (coders and print() sink)."""
import datetime
import struct
from decimal import Decimal
from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from api.common import Instant, Row, RowKind, Types as T
from api.common.typeinfo import TupleTypeInfo, _java_float_string


@pytest.mark.parametrize('type_info, text', [
    (T.STRING(), 'String'), (T.INT(), 'Integer'), (T.BIG_DEC(), 'BigDecimal'),
    (T.INSTANT(), 'Instant'), (T.SQL_DATE(), 'DateTypeInfo'),
    (T.SQL_TIMESTAMP(), 'TimestampTypeInfo'), (T.PICKLED_BYTE_ARRAY(), 'PickledByteArrayTypeInfo'),
    (T.ROW([T.INT(), T.STRING()]), 'RowTypeInfo(Integer, String)'),
    (T.ROW_NAMED(['a', 'b'], [T.INT(), T.STRING()]), 'RowTypeInfo(a: Integer, b: String)'),
    (T.TUPLE([T.INT(), T.STRING()]), 'TupleTypeInfo(Integer, String)'),
    (T.LIST(T.INT()), 'ListTypeInfo<Integer>'),
    (T.MAP(T.STRING(), T.INT()), 'MapTypeInfo<String, Integer>'),
    (T.BASIC_ARRAY(T.INT()), 'BasicArrayTypeInfo<Integer>'),
    (T.PRIMITIVE_ARRAY(T.INT()), 'PrimitiveArrayTypeInfo<Integer>'),
    (T.OBJECT_ARRAY(T.STRING()), 'ObjectArrayTypeInfo<String>'),
])
def test_repr(type_info, text):
    assert repr(type_info) == str(type_info) == text


def test_equality():
    assert T.INT() == T.INT() and T.INT() != T.LONG()
    assert T.ROW([T.INT()]) == T.ROW_NAMED(['x'], [T.INT()])
    assert T.MAP(T.STRING(), T.LIST(T.INT())) == T.MAP(T.STRING(), T.LIST(T.INT()))
    assert T.BASIC_ARRAY(T.INT()) != T.PRIMITIVE_ARRAY(T.INT())
    assert T.ROW([T.INT(), T.STRING()]).get_field_names() == ['f0', 'f1']


@pytest.mark.parametrize('type_info, value, expected', [
    (T.FLOAT(), 110.1, 110.0999984741211),
    (T.FLOAT(), 1, 1.0),
    (T.FLOAT(), 1e40, float('inf')),
    (T.DOUBLE(), 1, 1.0),
    (T.INT(), 1.7, 1),
    (T.INT(), True, 1),
    (T.INT(), 2 ** 31 - 1, 2 ** 31 - 1),
    (T.LONG(), -2 ** 63, -2 ** 63),
    (T.BOOLEAN(), 2, True),
    (T.BIG_DEC(), 1.5, Decimal('1.5')),
    (T.INSTANT(), None, None),
    (T.SQL_DATE(), datetime.datetime(2020, 1, 2, 3, 4), datetime.date(2020, 1, 2)),
    (T.SQL_TIME(), datetime.time(12, 34, 56, 789123), datetime.time(12, 34, 56, 789000)),
    (T.SQL_TIMESTAMP(), datetime.datetime(2020, 1, 2, 12, 34, 56, 789123),
     datetime.datetime(2020, 1, 2, 12, 34, 56, 789000)),
    (T.TUPLE([T.INT(), T.FLOAT()]), (1, 110.1), (1, 110.0999984741211)),
    (T.TUPLE([T.PICKLED_BYTE_ARRAY(), T.INSTANT()]), (None, None), (None, None)),
    (T.LIST(T.FLOAT()), [110.1], [110.0999984741211]),
    (T.MAP(T.STRING(), T.INT()), {'a': None}, {'a': None}),
    (T.BASIC_ARRAY(T.INT()), [1, None], [1, None]),
    (T.PRIMITIVE_ARRAY(T.BYTE()), bytearray(b'ab'), b'ab'),
    (T.PRIMITIVE_ARRAY(T.BOOLEAN()), [1, 0], [True, False]),
])
def test_convert(type_info, value, expected):
    assert type_info.convert(value) == expected


def test_convert_row():
    named = T.ROW_NAMED(['a', 'b'], [T.INT(), T.FLOAT()])
    row = named.convert(Row(b=110.1, a=1))
    assert repr(row) == 'Row(a=1, b=110.0999984741211)'
    assert repr(named.convert(Row(9, 1.5))) == 'Row(a=9, b=1.5)'
    assert repr(T.ROW([T.INT(), T.STRING()]).convert((1, 'a'))) == "Row(f0=1, f1='a')"
    assert repr(T.ROW([T.INT(), T.STRING()]).convert(Row(None, None))) == 'Row(f0=None, f1=None)'
    deleted = T.ROW([T.INT()]).convert(Row.of_kind(RowKind.DELETE, 1))
    assert deleted.get_row_kind() == RowKind.DELETE
    nested = T.ROW([T.FLOAT(), T.ROW([T.INT()])]).convert(Row(110.1, Row(2)))
    assert repr(nested) == 'Row(f0=110.0999984741211, f1=Row(f0=2))'


def test_pickled_is_identity():
    value = {'k': [1]}
    assert T.PICKLED_BYTE_ARRAY().convert(value) is value


@pytest.mark.parametrize('type_info, value, error', [
    (T.INT(), 2 ** 31, OverflowError), (T.INT(), -2 ** 31 - 1, OverflowError),
    (T.SHORT(), 32768, OverflowError), (T.BYTE(), 128, OverflowError),
    (T.LONG(), 2 ** 63, OverflowError),
    (T.INT(), '1', TypeError), (T.INT(), None, TypeError), (T.FLOAT(), '1.5', TypeError),
    (T.DOUBLE(), None, TypeError), (T.BOOLEAN(), 'x', TypeError), (T.STRING(), 1, TypeError),
    (T.STRING(), None, TypeError), (T.SQL_DATE(), None, TypeError),
    (T.SQL_TIMESTAMP(), datetime.date(2020, 1, 2), TypeError), (T.INSTANT(), 5, TypeError),
    (T.TUPLE([T.INT(), T.STRING()]), (None, 'a'), TypeError),
    (T.TUPLE([T.INT(), T.STRING()]), (1,), ValueError),
    (T.TUPLE([T.INT(), T.STRING()]), 'ab', TypeError),
    (T.ROW([T.INT(), T.STRING()]), (1,), ValueError),
    (T.ROW([T.INT(), T.STRING()]), 5, TypeError),
    (T.ROW([T.INT(), T.STRING()]), Row('1', 'a'), TypeError),
    (T.LIST(T.INT()), [1, None], TypeError), (T.LIST(T.STRING()), 'ab', TypeError),
    (T.MAP(T.STRING(), T.INT()), {None: 1}, TypeError),
    (T.MAP(T.STRING(), T.INT()), [('a', 1)], TypeError),
    (T.PRIMITIVE_ARRAY(T.INT()), [1, None], TypeError),
    (T.PRIMITIVE_ARRAY(T.BYTE()), [1, 2], TypeError),
])
def test_convert_errors(type_info, value, error):
    with pytest.raises(error):
        type_info.convert(value)


def test_convert_error_names_type_and_value():
    with pytest.raises(OverflowError, match='2147483648 is out of range for Integer'):
        T.INT().convert(2 ** 31)
    with pytest.raises(TypeError, match="String expects str, got int: 1"):
        T.STRING().convert(1)


@given(st.integers(-2 ** 40, 2 ** 40))
def test_int_range(value):
    if -2 ** 31 <= value < 2 ** 31:
        assert T.INT().convert(value) == value
    else:
        with pytest.raises(OverflowError):
            T.INT().convert(value)


@given(st.floats(width=32))
def test_float_keeps_32_bit_values(value):
    converted = T.FLOAT().convert(value)
    assert converted == value or converted != converted
    assert T.FLOAT().convert(converted) == converted or converted != converted


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float_rounds_like_struct(value):
    try:
        expected = struct.unpack('f', struct.pack('f', value))[0]
    except OverflowError:
        expected = float('inf') if value > 0 else float('-inf')
    assert T.FLOAT().convert(value) == expected


# Lines printed by PyFlink's print() for `map(lambda x: x, output_type=...)`.
@pytest.mark.parametrize('type_info, value, line', [
    (T.PICKLED_BYTE_ARRAY(), ('Germany', 123), "('Germany', 123)"),
    (T.PICKLED_BYTE_ARRAY(), 's', 's'),
    (T.PICKLED_BYTE_ARRAY(), None, 'None'),
    (T.PICKLED_BYTE_ARRAY(), Row(1, 'a'), "<Row(1, 'a')>"),
    (T.STRING(), 'a,b', 'a,b'),
    (T.BOOLEAN(), True, 'true'),
    (T.BYTE(), -3, '-3'),
    (T.LONG(), 2 ** 62, '4611686018427387904'),
    (T.FLOAT(), 110.1, '110.1'),
    (T.DOUBLE(), 0.1 + 0.2, '0.30000000000000004'),
    (T.BIG_DEC(), Decimal('1.50'), '1.50'),
    (T.BIG_DEC(), Decimal('1E+3'), '1E+3'),
    (T.BIG_DEC(), Decimal('-0.000001'), '-0.000001'),
    (T.BIG_DEC(), Decimal('1E-7'), '1E-7'),
    (T.BIG_DEC(), Decimal('123.456E+10'), '1.23456E+12'),
    (T.INSTANT(), Instant.of_epoch_milli(1577934896123), '2020-01-02T03:14:56.123Z'),
    (T.INSTANT(), Instant.of_epoch_milli(0), '1970-01-01T00:00:00Z'),
    (T.SQL_DATE(), datetime.date(2020, 1, 2), '2020-01-02'),
    (T.SQL_TIME(), datetime.time(12, 34, 56, 789000), '12:34:56'),
    (T.SQL_TIMESTAMP(), datetime.datetime(2020, 1, 2, 12, 34, 56, 789123),
     '2020-01-02 12:34:56.789'),
    (T.SQL_TIMESTAMP(), datetime.datetime(2020, 1, 2, 12, 34, 56), '2020-01-02 12:34:56.0'),
    (T.SQL_TIMESTAMP(), datetime.datetime(2020, 1, 2, 12, 34, 56, 500000),
     '2020-01-02 12:34:56.5'),
    (T.TUPLE([T.STRING(), T.INT(), T.DOUBLE(), T.BOOLEAN()]), ('be,', 1, 1.5, True),
     '(be,,1,1.5,true)'),
    (T.TUPLE([T.STRING(), T.INT(), T.DOUBLE(), T.BOOLEAN()]), ('', -2, 1e10, False),
     '(,-2,1.0E10,false)'),
    (T.TUPLE([T.TUPLE([T.INT(), T.STRING()]), T.ROW([T.INT(), T.STRING()]), T.LIST(T.INT()),
              T.MAP(T.STRING(), T.INT()), T.PICKLED_BYTE_ARRAY(), T.FLOAT()]),
     ((1, 'a'), Row(2, 'b'), [1, 2], {'k': 3}, ('p', 1), 110.1),
     '((1,a),+I[2, b],[1, 2],{k=3},[-128, 5, -107, 9, 0, 0, 0, 0, 0, 0, 0, -116, 1, 112, -108,'
     ' 75, 1, -122, -108, 46],110.1)'),
    (T.TUPLE([T.BASIC_ARRAY(T.INT()), T.PRIMITIVE_ARRAY(T.INT()), T.BASIC_ARRAY(T.STRING()),
              T.PRIMITIVE_ARRAY(T.BYTE()), T.LIST(T.STRING()), T.LIST(T.LIST(T.INT()))]),
     ([1, None], [1, 2], ['a', 'b'], b'ab', ['x', 'y'], [[1], []]),
     '([1, null],[1, 2],[a, b],[97, 98],[x, y],[[1], []])'),
    (T.TUPLE([T.CHAR(), T.SQL_TIME()]), ('c', datetime.time(1, 2, 3)), '(c,01:02:03)'),
    (T.TUPLE([T.SQL_TIMESTAMP(), T.INSTANT()]), (datetime.datetime(2020, 1, 2, 3, 4, 5, 6000),
                                                 None), '(2020-01-02 03:04:05.006,null)'),
    (T.TUPLE([T.BIG_DEC(), T.SQL_DATE()]), (Decimal('2.50'), datetime.date(2020, 1, 2)),
     '(2.50,2020-01-02)'),
    (T.TUPLE([T.INSTANT(), T.INSTANT(), T.INSTANT()]),
     (Instant(5, 123456789), Instant(5, 120000000), Instant(-1, 0)),
     '(1970-01-01T00:00:05.123456789Z,1970-01-01T00:00:05.120Z,1969-12-31T23:59:59Z)'),
    (T.ROW([T.STRING(), T.INT()]), Row('a', 1), '+I[a,1]'),
    (T.ROW([T.STRING(), T.INT()]), Row(None, None), '+I[None,None]'),
    (T.ROW([T.STRING(), T.INT()]), Row.of_kind(RowKind.UPDATE_BEFORE, 'b', 2), '-U[b,2]'),
    (T.ROW([T.STRING(), T.INT()]), Row.of_kind(RowKind.UPDATE_AFTER, 'c', 3), '+U[c,3]'),
    (T.ROW([T.STRING(), T.INT()]), Row.of_kind(RowKind.DELETE, 'd', 4), '-D[d,4]'),
    (T.ROW([T.STRING(), T.INT()]), Row('a', 1, 3), '+I[a,1,3]'),
    (T.ROW_NAMED(['name', 'age'], [T.STRING(), T.INT()]), Row(age=4, name='y'), '+I[4,y]'),
    (T.ROW([T.ROW([T.INT(), T.STRING()]), T.TUPLE([T.INT(), T.STRING()]), T.LIST(T.DOUBLE()),
            T.MAP(T.STRING(), T.BOOLEAN()), T.FLOAT(), T.PICKLED_BYTE_ARRAY()]),
     Row(Row(1, 'a'), (2, 'b'), [1.0, 1e10], {'t': True}, 110.1, {'p': [1]}),
     "+I[<Row(1, 'a')>,(2, 'b'),[1.0, 10000000000.0],{'t': True},110.1,{'p': [1]}]"),
    (T.ROW([T.TUPLE([T.INT(), T.FLOAT()]), T.ROW_NAMED(['x'], [T.FLOAT()])]),
     Row((1, 110.1), Row(x=110.1)), '+I[(1, 110.1),Row(x=110.1)]'),
    (T.LIST(T.INT()), [1, 2, 3], '[1, 2, 3]'),
    (T.LIST(T.INT()), [], '[]'),
    (T.LIST(T.FLOAT()), [110.1, 1e10], '[110.1, 1.0E10]'),
    (T.LIST(T.TUPLE([T.INT(), T.STRING()])), [(1, 'a')], '[(1,a)]'),
    (T.LIST(T.ROW([T.INT(), T.STRING()])), [Row(1, 'a')], '[+I[1, a]]'),
    (T.LIST(T.MAP(T.STRING(), T.TUPLE([T.INT(), T.BOOLEAN()]))), [{'a': (1, True)}],
     '[{a=(1,true)}]'),
    (T.MAP(T.STRING(), T.INT()), {'a': 1, 'b': 2}, '{a=1, b=2}'),
    (T.MAP(T.STRING(), T.INT()), {'a': None}, '{a=null}'),
    (T.MAP(T.INT(), T.LIST(T.DOUBLE())), {1: [1.5, 2.0]}, '{1=[1.5, 2.0]}'),
    (T.MAP(T.STRING(), T.ROW([T.INT(), T.DOUBLE()])), {'a': Row(1, 2.5)}, '{a=+I[1, 2.5]}'),
])
def test_print_string(type_info, value, line):
    assert type_info.to_print_string(value) == line


@pytest.mark.parametrize('type_info, value, prefix', [
    (T.BASIC_ARRAY(T.INT()), [1, None], '[Ljava.lang.Integer;@'),
    (T.BASIC_ARRAY(T.STRING()), ['a'], '[Ljava.lang.String;@'),
    (T.OBJECT_ARRAY(T.STRING()), ['a', None], '[Ljava.lang.String;@'),
    (T.PRIMITIVE_ARRAY(T.INT()), [1], '[I@'),
    (T.PRIMITIVE_ARRAY(T.DOUBLE()), [1.5], '[D@'),
])
def test_print_string_of_arrays_is_an_identity(type_info, value, prefix):
    assert type_info.to_print_string(value).startswith(prefix)
    assert T.PRIMITIVE_ARRAY(T.BYTE()).to_print_string(b'ab').startswith('[B@')


@pytest.mark.parametrize('value, double, single', [
    (110.1, '110.1', '110.1'), (1e10, '1.0E10', '1.0E10'), (0.1, '0.1', '0.1'),
    (1e-5, '1.0E-5', '1.0E-5'), (float('nan'), 'NaN', 'NaN'),
    (float('inf'), 'Infinity', 'Infinity'), (float('-inf'), '-Infinity', '-Infinity'),
    (-0.0, '-0.0', '-0.0'), (1234567.0, '1234567.0', '1234567.0'),
    (12345678.0, '1.2345678E7', '1.2345678E7'), (0.001, '0.001', '0.001'),
    (0.0001, '1.0E-4', '1.0E-4'), (100.0, '100.0', '100.0'), (1e7, '1.0E7', '1.0E7'),
    (9999999.0, '9999999.0', '9999999.0'), (1e21, '1.0E21', '1.0E21'),
    (1e100, '1.0E100', 'Infinity'), (5e-324, '4.9E-324', '0.0'),
    (123456789.123, '1.23456789123E8', '1.23456792E8'), (2.0 ** -20, '9.5367431640625E-7',
                                                          '9.536743E-7'),
    (1e22, '1.0E22', '1.0E22'), (3.4e38, '3.4E38', '3.4E38'), (1e-45, '1.0E-45', '1.4E-45'),
    (16777217.0, '1.6777217E7', '1.6777216E7'), (0.3, '0.3', '0.3'),
    (-46733887.90854809, '-4.673388790854809E7', '-4.6733888E7'),
    (2e13, '2.0E13', '1.99999997E13'),
    (-1.6130484589462314e17, '-1.61304845894623136E17', '-1.6130485E17'),
])
def test_java_float_string(value, double, single):
    # Observed from Java 17's Double.toString and Float.toString.
    assert _java_float_string(value, False) == double
    assert _java_float_string(T.FLOAT().convert(value), True) == single


# --- PyFlink's wire forms (to_internal_type / from_internal_type), observed on PyFlink 2.3.0
# (in UTC, where naive times and datetimes are UTC) --------------------------------------

@pytest.mark.parametrize('type_info, value, internal', [
    (T.INSTANT(), Instant.of_epoch_milli(1500), 1500000),
    (T.SQL_DATE(), datetime.date(2024, 2, 29), 19782),
    (T.INT(), 5, 5),
    (T.STRING(), 'x', 'x'),
])
def test_wire_forms(type_info, value, internal):
    assert type_info.to_internal_type(value) == internal
    assert type_info.from_internal_type(internal) == value
    assert type_info.need_conversion() is (internal != value)


@pytest.mark.skipif(datetime.datetime.now().astimezone().utcoffset(), reason='needs UTC')
def test_wire_forms_of_times_in_utc():
    time_of_day = datetime.time(1, 2, 3, 4000)
    assert T.SQL_TIME().to_internal_type(time_of_day) == 3723004000
    assert T.SQL_TIME().from_internal_type(3723004000) == time_of_day
    moment = datetime.datetime(2024, 2, 29, 1, 2, 3, 4000)
    assert T.SQL_TIMESTAMP().to_internal_type(moment) == 1709168523004000
    assert T.SQL_TIMESTAMP().from_internal_type(1709168523004000) == moment


def test_wire_forms_of_rows_and_tuples():
    row_type = T.ROW_NAMED(['a', 'b'], [T.INT(), T.SQL_DATE()])
    assert row_type.to_internal_type(Row(a=1, b=datetime.date(1970, 1, 2))) == (0, 1, 1)
    assert row_type.to_internal_type({'a': 2, 'b': None}) == (0, 2, None)
    assert row_type.to_internal_type([3, datetime.date(1970, 1, 3)]) == (0, 3, 2)
    deleted = Row(1, 'x')
    deleted.set_row_kind(RowKind.DELETE)
    assert T.ROW([T.INT(), T.STRING()]).to_internal_type(deleted) == (3, 1, 'x')
    assert row_type.from_internal_type((1, 2)) == (1, 2)  # tuples are Python values already
    tuple_type = T.TUPLE([T.INT(), T.SQL_DATE()])
    assert tuple_type.to_internal_type([1, datetime.date(1970, 1, 5)]) == (1, 4)
    assert T.TUPLE([T.INT()]).to_internal_type([1]) == [1]
    with pytest.raises(ValueError, match='Unexpected tuple 5 with TupleTypeInfo'):
        tuple_type.to_internal_type(5)


def test_type_info_classes_of_pyflink():
    from api.common.typeinfo import (BasicType, BasicTypeInfo, ExternalTypeInfo,
                                     LocalTimeTypeInfo, SqlTimeTypeInfo)
    assert BasicTypeInfo.INT_TYPE_INFO() == T.INT()
    assert BasicType.INT.value == 'Integer'
    assert SqlTimeTypeInfo.TIMESTAMP() == T.SQL_TIMESTAMP()
    assert repr(LocalTimeTypeInfo(LocalTimeTypeInfo.TimeType.LOCAL_DATE)) == \
        'LocalTimeTypeInfo<LOCAL_DATE>'
    assert repr(ExternalTypeInfo(T.INT())) == 'ExternalTypeInfo<Integer>'
    assert T.INT().get_java_type_info() is None  # no JVM here


# --- a chunk converted in one pass (chunk_converter) ---------------------------------------

_SCALAR_TYPES = [T.STRING(), T.BYTE(), T.SHORT(), T.INT(), T.LONG(), T.DOUBLE(), T.FLOAT(),
                 T.BOOLEAN(), T.BIG_INT()]
_tuple_types = st.recursive(st.sampled_from(_SCALAR_TYPES),
                            lambda inner: st.lists(inner, min_size=1, max_size=3).map(T.TUPLE),
                            max_leaves=6)
_types = st.one_of(_tuple_types, st.lists(_tuple_types, min_size=1, max_size=3).map(T.ROW))
_scalars = st.one_of(st.text(max_size=3), st.integers(-2 ** 70, 2 ** 70), st.booleans(),
                     st.floats(allow_nan=False), st.decimals(allow_nan=False), st.none())
_kinds = st.sampled_from(list(RowKind))
_values = st.recursive(_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3).map(tuple), st.lists(inner, max_size=3),
    st.tuples(st.lists(inner, max_size=3), _kinds).map(lambda vk: Row.of_kind(vk[1], *vk[0]))),
    max_leaves=8)


def _converted(type_info, value):
    try:
        return type_info.convert(value)
    except (TypeError, ValueError, OverflowError):
        return None


def _identical(a, b) -> bool:
    """Equal, and of the same types all the way down."""
    if type(a) is not type(b):
        return False
    if type(a) in (tuple, list):
        return len(a) == len(b) and all(map(_identical, a, b))
    if type(a) is Row:
        return (a.get_row_kind(), getattr(a, "_fields", None)) == \
            (b.get_row_kind(), getattr(b, "_fields", None)) and _identical(a._values, b._values)
    return a == b


@given(_types, st.lists(_values, max_size=6), st.booleans())
def test_a_chunk_converted_at_once_is_each_value_converted(type_info, values, timed):
    elements = [(i, v) for i, v in enumerate(values)] if timed else values
    converted = type_info.chunk_converter(timed)(elements)
    if converted is not None:
        expected = [type_info.convert(v) for v in values]
        assert _identical([c for _, c in converted] if timed else converted, expected)
        assert not timed or [t for t, _ in converted] == list(range(len(values)))


def _float_in_a_nested_tuple(type_info) -> bool:
    fields = getattr(type_info, "get_field_types", list)()
    return any('Float' in repr(field) for field in fields if isinstance(field, TupleTypeInfo))


@given(_types, st.lists(_values, max_size=6))
def test_converted_values_convert_at_once_unless_a_nested_tuple_rounds_floats(type_info,
                                                                              values):
    converted = [c for c in (_converted(type_info, v) for v in values) if c is not None]
    assert type_info.chunk_converter(False)(converted) is not None or \
        _float_in_a_nested_tuple(type_info)


def test_the_chunk_conversion_leaves_a_misfit_to_the_conversion_of_each():
    pair = T.TUPLE([T.STRING(), T.INT()])
    chunk = [("a", 1)] * 100
    converted = pair.chunk_converter(False)
    assert converted(chunk) == chunk
    assert converted(chunk + [("a", 2 ** 31)]) is None  # out of INT's range
    assert converted(chunk + [("a", True)]) is None     # a bool is no INT value as it is
    assert converted(chunk + [["a", 1]]) == chunk + [("a", 1)]  # a list becomes a tuple
    assert converted(chunk + [("a", 1, 2)]) is None


def test_float_fields_are_rounded_to_32_bits_in_the_one_pass():
    values = [0.1, 1e300, -1e300, 2 ** 70, 1e-50, float("inf")]
    rounded = [T.FLOAT().convert(v) for v in values]
    assert rounded[:2] == [0.10000000149011612, float("inf")]
    assert T.FLOAT().chunk_converter(False)(values) == rounded
    assert T.FLOAT().chunk_converter(True)(list(enumerate(values))) == list(enumerate(rounded))
    pairs = T.TUPLE([T.STRING(), T.FLOAT()]).chunk_converter(False)
    assert pairs([("a", v) for v in values]) == [("a", r) for r in rounded]
    assert pairs([("a", None)]) is None  # (a tuple's FLOAT is no None: each names it)
    rows = T.ROW([T.FLOAT(), T.INT()]).chunk_converter(False)([(0.1, 1), (None, None)])
    assert [(r._values, r.get_row_kind()) for r in rows] == \
        [([0.10000000149011612, 1], RowKind.INSERT), ([None, None], RowKind.INSERT)]


def test_a_double_takes_what_pyflink_takes():
    # Observed on PyFlink 2.3.0: a Decimal or a Fraction written to a DOUBLE or FLOAT
    # field arrives as its float (Java's double of it).
    assert T.DOUBLE().convert(Decimal("1.5")) == 1.5
    assert T.FLOAT().convert(Fraction(1, 3)) == 0.3333333432674408
    with pytest.raises(TypeError, match="Double expects float, got str"):
        T.DOUBLE().convert("1.5")
