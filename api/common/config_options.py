"""ConfigOptions and ConfigOption, as in ``pyflink.common.config_options``: typed
descriptions of configuration keys, e.g.
``ConfigOptions.key("tmp.dir").string_type().default_value("/tmp")``."""
from typing import Generic, TypeVar

T = TypeVar('T')

__all__ = ['ConfigOptions', 'ConfigOption']


class ConfigOption(Generic[T]):
    """A configuration key, its value type and its default value (None if it has none)."""

    def __init__(self, key: str, value_type: type, default_value: T = None):
        self._key = key
        self._value_type = value_type
        self._default_value = default_value

    def key(self) -> str:
        return self._key

    def default_value(self) -> T:
        return self._default_value

    def has_default_value(self) -> bool:
        return self._default_value is not None

    def __eq__(self, other):
        return isinstance(other, ConfigOption) and (self._key, self._default_value) == (
            other._key, other._default_value)

    def __hash__(self):
        return hash(self._key)

    def __str__(self):
        default = 'null' if self._default_value is None else self._default_value
        return "Key: '%s' , default: %s (fallback keys: [])" % (self._key, default)


class ConfigOptions(object):
    """Builds ConfigOptions: ``ConfigOptions.key("a.b").int_type().default_value(100)``."""

    @staticmethod
    def key(key: str) -> 'ConfigOptions.OptionBuilder':
        """Starts building the option of ``key``."""
        return ConfigOptions.OptionBuilder(key)

    class OptionBuilder(object):
        """Chooses the value type of the option being built."""

        def __init__(self, key: str):
            self._key = key

        def boolean_type(self) -> 'ConfigOptions.TypedConfigOptionBuilder[bool]':
            return ConfigOptions.TypedConfigOptionBuilder(self._key, bool)

        def int_type(self) -> 'ConfigOptions.TypedConfigOptionBuilder[int]':
            return ConfigOptions.TypedConfigOptionBuilder(self._key, int)

        def long_type(self) -> 'ConfigOptions.TypedConfigOptionBuilder[int]':
            return ConfigOptions.TypedConfigOptionBuilder(self._key, int)

        def float_type(self) -> 'ConfigOptions.TypedConfigOptionBuilder[float]':
            return ConfigOptions.TypedConfigOptionBuilder(self._key, float)

        def double_type(self) -> 'ConfigOptions.TypedConfigOptionBuilder[float]':
            return ConfigOptions.TypedConfigOptionBuilder(self._key, float)

        def string_type(self) -> 'ConfigOptions.TypedConfigOptionBuilder[str]':
            return ConfigOptions.TypedConfigOptionBuilder(self._key, str)

    class TypedConfigOptionBuilder(Generic[T]):
        """Sets the default value of the option being built."""

        def __init__(self, key: str, value_type: type):
            self._key = key
            self._value_type = value_type

        def default_value(self, value: T) -> 'ConfigOption[T]':
            return ConfigOption(self._key, self._value_type, value)

        def no_default_value(self) -> 'ConfigOption[str]':
            return ConfigOption(self._key, self._value_type)
