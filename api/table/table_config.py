"""TableConfig, as in ``pyflink.table``: the options of a table environment's jobs. Here
``parallelism.default`` is the one that takes effect (the parallelism of SQL connector
tables' sources and sinks); other options are kept and read back."""
from api.common.configuration import Configuration

__all__ = ['TableConfig']


class TableConfig:
    """A table environment's configuration: ``t_env.get_config().set("parallelism.default",
    "1")``."""

    def __init__(self):
        self._configuration = Configuration()

    def get_configuration(self) -> Configuration:
        """The options, as a Configuration (changes to it take effect)."""
        return self._configuration

    def set(self, key: str, value: str) -> 'TableConfig':
        """Sets the option ``key``."""
        self._configuration.set_string(key, str(value))
        return self

    def get(self, key: str, default_value: str = None) -> str:
        """The option ``key``, or ``default_value``."""
        return self._configuration.get_string(key, default_value)

    def _parallelism(self):
        """``parallelism.default`` as an int, or None when it is not set."""
        value = self._configuration.get_string('parallelism.default', None)
        return None if value is None else int(value)
