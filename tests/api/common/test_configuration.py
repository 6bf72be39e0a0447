"""Expected values observed on PyFlink 2.3.0."""
import copy

import pytest

from api.common import Configuration


@pytest.fixture
def config():
    c = Configuration()
    c.set_string('a', 'x').set_integer('i', 3).set_boolean('b', True).set_float('f', 1.5)
    c.set_bytearray('ba', bytearray(b'\x01\x02'))
    return c


def test_to_dict_shows_strings(config):
    assert config.to_dict() == {'a': 'x', 'i': '3', 'b': 'true', 'f': '1.5',
                                'ba': '!!binary |-\n  AQI='}
    assert config.key_set() == {'a', 'i', 'b', 'f', 'ba'}


def test_getters_convert(config):
    assert (config.get_string('i', 'd'), config.get_string('b', 'd'),
            config.get_string('f', 'd'), config.get_string('nokey', 'd')) == ('3', 'true', '1.5', 'd')
    config.set_string('s3', '7').set_string('sb', 'TRUE').set_string('sf', '2.5')
    assert config.get_integer('s3', 0) == 7
    assert config.get_boolean('sb', False) is True
    assert config.get_float('sf', 0.0) == 2.5
    assert config.get_float('i', 0.0) == 3.0
    assert config.get_integer('zz', 5) == 5 and config.get_float('zz', 5) == 5.0
    assert config.get_bytearray('ba', bytearray()) == bytearray(b'\x01\x02')
    config.set_float('g', 3)
    assert config.get_string('g', '') == '3.0'


@pytest.mark.parametrize('key, getter, default', [
    ('a', 'get_integer', 0), ('a', 'get_boolean', False), ('a', 'get_float', 0.0),
    ('f', 'get_integer', 0), ('i', 'get_boolean', False)])
def test_unparsable_values(config, key, getter, default):
    with pytest.raises(ValueError, match="Could not parse value '.*' for key '%s'." % key):
        getattr(config, getter)(key, default)


def test_bytearray_of_a_string(config):
    with pytest.raises(ValueError, match='cannot evaluate value x as a byte'):
        config.get_bytearray('a', bytearray())


def test_contains_remove_add_all(config):
    assert config.contains_key('a') and not config.contains_key('zz')
    assert config.remove_config('a') is True and config.remove_config('a') is False
    other = Configuration().set_string('k', 'v')
    target = Configuration().add_all(other, 'pre.').add_all(other)
    assert target.to_dict() == {'pre.k': 'v', 'k': 'v'}
    d = {}
    other.add_all_to_dict(d)
    assert d == {'k': 'v'}
    assert Configuration.from_dict({'a': '1'}).to_dict() == {'a': '1'}


def test_equality_and_copies():
    c = Configuration().set_string('k', 'v')
    assert Configuration() == Configuration()
    assert c == copy.deepcopy(c) == Configuration(c)
    assert hash(c) == hash(Configuration(c))
    assert Configuration().set_integer('x', 1) != Configuration().set_string('x', '1')
    c2 = Configuration().set_string('x', '1').set_integer('x', 2)
    assert c2.to_dict() == {'x': '2'}
    assert str(Configuration().set_string('a', 'x').set_boolean('b', True)) == '{a=x, b=true}'


@pytest.mark.parametrize('value, expected', [
    ('[a, b]', ['a', 'b']), ("['a;b', c]", ['a;b', 'c']), ('[1, 2]', [1, 2]),
    ('- a\n- b', ['a', 'b']), ('a;b;c', ['a', 'b', 'c']), ('a', ['a']), ('x: 1', ['x: 1']),
    ('', []),
])
def test_parse_list_value(value, expected):
    assert Configuration.parse_list_value(value) == expected


def test_config_options_describe_a_key_its_type_and_default():
    from api.common import ConfigOptions
    option = ConfigOptions.key("x.y").int_type().default_value(3)
    assert (option.key(), option.default_value(), option.has_default_value()) == ("x.y", 3, True)
    assert str(option) == "Key: 'x.y' , default: 3 (fallback keys: [])"
    assert str(ConfigOptions.key("x.z").string_type().no_default_value()) == \
        "Key: 'x.z' , default: null (fallback keys: [])"
