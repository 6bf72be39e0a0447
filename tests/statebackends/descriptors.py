"""Minimal descriptors with the API's duck type: state backends never import ``api``."""


class Descriptor:
    state_kind = ""

    def __init__(self, name, function=None):
        self.name = name
        self.function = function

    def get_name(self):
        return self.name


class ValueStateDescriptor(Descriptor):
    state_kind = "value"


class ListStateDescriptor(Descriptor):
    state_kind = "list"


class MapStateDescriptor(Descriptor):
    state_kind = "map"


class ReducingStateDescriptor(Descriptor):
    state_kind = "reducing"

    def get_reduce_function(self):
        return self.function


class AggregatingStateDescriptor(Descriptor):
    state_kind = "aggregating"

    def get_agg_function(self):
        return self.function
