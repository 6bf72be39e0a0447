"""Configuration, as in ``pyflink.common.configuration``."""
import base64
from typing import Dict, Set

from .typeinfo import _java_float_string

__all__ = ['Configuration']


def _to_string(value) -> str:
    # How Flink shows a stored value: Java-style booleans, floats and YAML binary.
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, float):
        return _java_float_string(value, False)
    if isinstance(value, bytes):
        return '!!binary |-\n  ' + base64.b64encode(value).decode('ascii')
    return str(value)


def _split_flow_list(text: str):
    """The items of a YAML flow list's inside, split at commas outside quotes."""
    items, current, quote = [], '', None
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in '\'"':
            quote = ch
        elif ch == ',':
            items.append(current)
            current = ''
            continue
        current += ch
    if current.strip() or items:
        items.append(current)
    return items


def _yaml_scalar(text: str):
    """A YAML scalar: a quoted string, an integer, a float, a boolean, null, or plain text."""
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in '\'"':
        return text[1:-1]
    lowered = text.lower()
    if lowered in ('true', 'false'):
        return lowered == 'true'
    if lowered in ('null', '~', ''):
        return None
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


class Configuration:
    """
    Lightweight configuration object which stores key/value pairs.

    Values keep the type they were set with; reading converts them like Flink does
    (``set_integer('a', 3)`` then ``get_string('a', '')`` gives ``'3'``).
    """

    def __init__(self, other: 'Configuration' = None):
        self._data = dict(other._data) if other is not None else {}

    @classmethod
    def from_dict(cls, map: Dict[str, str]) -> 'Configuration':
        """Creates a configuration from a dict of strings."""
        config = cls()
        config._data.update(map)
        return config

    def _get(self, key, default_value, convert):
        if key not in self._data:
            return default_value
        value = self._data[key]
        try:
            return convert(value)
        except (TypeError, ValueError):
            raise ValueError("Could not parse value '%s' for key '%s'."
                             % (_to_string(value), key)) from None

    def get_string(self, key: str, default_value: str) -> str:
        """Returns the value of the key as a string, or ``default_value`` if absent."""
        return self._get(key, default_value, _to_string)

    def set_string(self, key: str, value: str) -> 'Configuration':
        """Adds the given key/value pair."""
        self._data[key] = value
        return self

    @staticmethod
    def parse_list_value(value: str):
        """Parses a list-valued option as Flink writes one: a YAML list (``[a, b]`` or
        ``- a`` lines) or ``a;b;c``."""
        if not value:
            return []
        text = value.strip()
        if text.startswith('[') and text.endswith(']'):
            return [_yaml_scalar(item) for item in _split_flow_list(text[1:-1])]
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if all(line.startswith('- ') or line == '-' for line in lines):
            return [_yaml_scalar(line[1:]) for line in lines]
        return value.split(';')

    def get_integer(self, key: str, default_value: int) -> int:
        """Returns the value of the key as an integer, or ``default_value`` if absent."""
        def convert(value):
            if isinstance(value, (bool, float, bytes)):
                raise ValueError(value)
            return int(value)
        return self._get(key, default_value, convert)

    def set_integer(self, key: str, value: int) -> 'Configuration':
        """Adds the given key/value pair."""
        self._data[key] = int(value)
        return self

    def get_boolean(self, key: str, default_value: bool) -> bool:
        """Returns the value of the key as a boolean, or ``default_value`` if absent."""
        def convert(value):
            if isinstance(value, bool):
                return value
            text = value.lower() if isinstance(value, str) else None
            if text not in ('true', 'false'):
                raise ValueError(value)
            return text == 'true'
        return self._get(key, default_value, convert)

    def set_boolean(self, key: str, value: bool) -> 'Configuration':
        """Adds the given key/value pair."""
        self._data[key] = bool(value)
        return self

    def get_float(self, key: str, default_value: float) -> float:
        """Returns the value of the key as a float, or ``default_value`` if absent."""
        def convert(value):
            if isinstance(value, (bool, bytes)):
                raise ValueError(value)
            return float(value)
        return self._get(key, float(default_value), convert)

    def set_float(self, key: str, value: float) -> 'Configuration':
        """Adds the given key/value pair."""
        self._data[key] = float(value)
        return self

    def get_bytearray(self, key: str, default_value: bytearray) -> bytearray:
        """Returns the value of the key as a byte array, or ``default_value`` if absent."""
        value = self._data.get(key)
        if value is None:
            return default_value
        if not isinstance(value, bytes):
            raise ValueError("Configuration cannot evaluate value %s as a byte[] value"
                             % _to_string(value))
        return bytearray(value)

    def set_bytearray(self, key: str, value: bytearray) -> 'Configuration':
        """Adds the given byte array under the key."""
        self._data[key] = bytes(value)
        return self

    def key_set(self) -> Set[str]:
        """Returns the keys of all key/value pairs."""
        return set(self._data)

    def add_all_to_dict(self, target_dict: Dict):
        """Adds all entries, as strings, to the given dict."""
        target_dict.update(self.to_dict())

    def add_all(self, other: 'Configuration', prefix: str = None) -> 'Configuration':
        """Adds all entries of ``other``, their keys prefixed with ``prefix`` if given."""
        prefix = prefix or ''
        self._data.update((prefix + k, v) for k, v in other._data.items())
        return self

    def contains_key(self, key: str) -> bool:
        """Checks whether there is an entry with the key."""
        return key in self._data

    def to_dict(self) -> Dict[str, str]:
        """Returns the entries as a dict of strings."""
        return {k: _to_string(v) for k, v in self._data.items()}

    def remove_config(self, key: str) -> bool:
        """Removes the key; returns whether it was there."""
        return self._data.pop(key, None) is not None

    def __deepcopy__(self, memodict=None):
        return Configuration(self)

    def __hash__(self):
        return hash(frozenset(self.to_dict().items()))

    def __eq__(self, other):
        return isinstance(other, Configuration) and self._data == other._data

    def __str__(self):
        return '{%s}' % ', '.join('%s=%s' % kv for kv in self.to_dict().items())
