"""The engine's own state descriptors: the same duck type as the API's descriptors
(``state_kind``, ``get_name``, and the reduce/aggregate function), for state the engine
keeps for its built-in operators."""


class InternalStateDescriptor:
    """Describes internal keyed state: ``kind`` is "value", "list", "reducing" or
    "aggregating" (``function`` is the ReduceFunction or AggregateFunction)."""

    def __init__(self, name: str, kind: str, function=None):
        self.name = name
        self.state_kind = kind
        self.function = function

    def get_name(self) -> str:
        return self.name

    def get_reduce_function(self):
        return self.function

    def get_agg_function(self):
        return self.function
