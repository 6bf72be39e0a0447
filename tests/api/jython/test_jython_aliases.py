"""The ``org.apache.flink...`` import paths of the older Python streaming guide
(python-streaming-programming-guide-jython.txt): its WordCount's imports, and the Java
packages of the other classes it names, give the classes a program subclasses."""
import importlib

import pytest


def test_the_word_count_imports():
    from org.apache.flink.streaming.api.functions.source import SourceFunction
    from org.apache.flink.api.common.functions import FlatMapFunction, ReduceFunction
    from org.apache.flink.api.java.functions import KeySelector
    from org.apache.flink.streaming.api.windowing.time.Time import milliseconds

    import api.datastream
    import api.jython.functions as legacy
    assert SourceFunction is api.datastream.SourceFunction  # same run(ctx)/cancel() contract
    assert (FlatMapFunction, ReduceFunction, KeySelector) == \
        (legacy.FlatMapFunction, legacy.ReduceFunction, legacy.KeySelector)
    assert milliseconds(50).to_milliseconds() == 50


@pytest.mark.parametrize("module, names", [
    ("org.apache.flink.api.common.functions",
     ["MapFunction", "FlatMapFunction", "FilterFunction", "ReduceFunction",
      "RichMapFunction", "RichFlatMapFunction", "RichFilterFunction", "RichReduceFunction"]),
    ("org.apache.flink.streaming.api.functions.windowing",
     ["WindowFunction", "RichWindowFunction"]),
    ("org.apache.flink.streaming.api.collector.selector", ["OutputSelector"]),
    ("org.apache.flink.streaming.api.windowing.time", ["Time"]),
    ("org.apache.flink.streaming.api.windowing.time.Time",
     ["milliseconds", "seconds", "minutes", "hours", "days"]),
    ("org.apache.flink.core.fs.FileSystem", ["WriteMode"]),
    ("org.apache.flink.api.common.serialization", ["SerializationSchema"]),
])
def test_the_java_packages_of_the_other_classes(module, names):
    imported = importlib.import_module(module)
    for name in names:
        assert hasattr(imported, name), f"{module}.{name}"


def test_time_and_write_mode_as_java_classes():
    from org.apache.flink.streaming.api.windowing.time import Time
    from org.apache.flink.core.fs import FileSystem
    from api.datastream import WriteMode
    assert Time.seconds(2).to_milliseconds() == 2000
    assert FileSystem.WriteMode.OVERWRITE is WriteMode.OVERWRITE


def test_installing_twice_keeps_the_modules():
    from api.jython import install_aliases
    import org.apache.flink.api.java.functions as before
    install_aliases()
    import org.apache.flink.api.java.functions as after
    assert before is after
