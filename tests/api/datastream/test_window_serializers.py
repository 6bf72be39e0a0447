"""The window serializers write Flink's binary forms of windows and read them back."""
from io import BytesIO

import pytest

from api.datastream.window import (CountWindow, CountWindowSerializer, GlobalWindow,
                                   GlobalWindowSerializer, TimeWindow, TimeWindowSerializer)


@pytest.mark.parametrize("serializer, window, data", [
    (TimeWindowSerializer(), TimeWindow(-2, 3), bytes.fromhex("fffffffffffffffe0000000000000003")),
    (CountWindowSerializer(), CountWindow(7), bytes.fromhex("0000000000000007")),
    (GlobalWindowSerializer(), GlobalWindow.get(), b"\x00"),
])
def test_round_trip(serializer, window, data):
    stream = BytesIO()
    serializer.serialize(window, stream)
    assert stream.getvalue() == data
    assert serializer.deserialize(BytesIO(data)) == window
    assert serializer == type(serializer)()
