"""Row and RowKind; expected values observed on PyFlink 2.3.0."""
import pickle

import pytest

from api.common import Row, RowKind


def test_repr_and_str():
    assert repr(Row(name='Alice', age=11)) == str(Row(name='Alice', age=11)) \
        == "Row(name='Alice', age=11)"
    assert repr(Row(1, 'a')) == "<Row(1, 'a')>"
    assert repr(Row()) == '<Row()>'
    assert repr(Row(a=Row(b=1), c=[Row(d=2)])) == 'Row(a=Row(b=1), c=[Row(d=2)])'


def test_row_kind():
    assert [str(k) for k in RowKind] == ['+I', '-U', '+U', '-D']
    assert repr(RowKind.DELETE) == '<RowKind.DELETE: 3>'
    row = Row(1, 2)
    assert row.get_row_kind() == RowKind.INSERT
    row.set_row_kind(RowKind.DELETE)
    assert row != Row(1, 2)
    assert Row.of_kind(RowKind.UPDATE_AFTER, 1).get_row_kind() == RowKind.UPDATE_AFTER


def test_factory():
    person = Row('name', 'age')
    assert repr(person) == "<Row('name', 'age')>"
    assert repr(person('Alice', 11)) == "Row(name='Alice', age=11)"
    assert repr(person(1)) == 'Row(name=1)'
    assert 'name' in person and 'x' not in person
    with pytest.raises(ValueError, match='expected 2 values'):
        person(1, 2, 3)


def test_access():
    row = Row(a=1, b=2)
    assert (row[0], row['b'], row.a, list(row), len(row), row[0:1]) == (1, 2, 1, [1, 2], 2, [1])
    assert 'a' in row and 1 in Row(1, 2)
    with pytest.raises(AttributeError):
        row.zz
    with pytest.raises(ValueError):
        row['zz']
    with pytest.raises(AttributeError):
        row.c = 1
    row['a'] = 5
    row[1] = 6
    assert row == Row(a=5, b=6)


def test_as_dict():
    assert Row(name='Alice', age=11).as_dict() == {'name': 'Alice', 'age': 11}
    nested = Row(a=Row(b=1), c=[Row(d=2)])
    assert nested.as_dict(True) == {'a': {'b': 1}, 'c': [{'d': 2}]}
    with pytest.raises(TypeError, match='Cannot convert a Row class into dict'):
        Row(1, 2).as_dict()
    with pytest.raises(ValueError, match='Can not use both args and kwargs'):
        Row(1, a=2)


def test_equality_and_hash():
    assert Row(1, 2) == Row(1, 2) and Row(1, 2) != (1, 2)
    assert Row(a=1, b=2) == Row(b=2, a=1)
    assert Row(a=1) != Row(1)
    assert hash(Row(1, 2)) == hash((1, 2))


def test_pickle_keeps_names_and_kind():
    row = Row.of_kind(RowKind.UPDATE_BEFORE, a=1, b='x')
    copy = pickle.loads(pickle.dumps(row))
    assert copy == row and copy.get_row_kind() == RowKind.UPDATE_BEFORE
    assert pickle.loads(pickle.dumps(Row(1, 2))) == Row(1, 2)
