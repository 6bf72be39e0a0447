"""The wrappers that turn a plain callable into the function object the engine calls."""
import pickle

import cloudpickle
import pytest

from api.datastream import functions as fn

WRAPPERS = [
    (fn.wrap_map, fn.MapFunction, "map"),
    (fn.wrap_flat_map, fn.FlatMapFunction, "flat_map"),
    (fn.wrap_filter, fn.FilterFunction, "filter"),
    (fn.wrap_reduce, fn.ReduceFunction, "reduce"),
    (fn.wrap_key_selector, fn.KeySelector, "get_key"),
    (fn.wrap_partitioner, fn.Partitioner, "partition"),
    (fn.wrap_process, fn.ProcessFunction, "process_element"),
]


@pytest.mark.parametrize("wrap, interface, method", WRAPPERS)
def test_a_callable_becomes_the_method_itself(wrap, interface, method):
    wrapped = wrap(len)
    assert isinstance(wrapped, interface)
    assert getattr(wrapped, method) is len  # called per record: no extra frame
    assert not fn.opens(wrapped)


@pytest.mark.parametrize("wrap, interface, method", WRAPPERS)
def test_a_function_object_passes_through(wrap, interface, method):
    function = type("Own", (interface,), {method: lambda self, *args: None})()
    assert wrap(function) is function


@pytest.mark.parametrize("wrap, interface, method", WRAPPERS)
def test_wrappers_pickle_by_reference(wrap, interface, method):
    wrapped = wrap(len)
    assert type(pickle.loads(pickle.dumps(wrapped))) is type(wrapped)  # pickle: by reference
    shipped = cloudpickle.loads(cloudpickle.dumps(wrap(lambda value, *rest: value)))
    assert type(shipped) is type(wrapped)
    assert getattr(shipped, method)(7) == 7


def test_a_job_of_lambdas_runs(env_factory):
    """Lambdas for every wrapped kind, shipped to the tasks of either executor."""
    env = env_factory(parallelism=2)
    result = (env.from_collection([1, 2, 3, 4, 5, 6])
              .map(lambda x: x * 10)
              .flat_map(lambda x: [x, x + 1])
              .filter(lambda x: x % 2 == 0)
              .partition_custom(lambda key, partitions: key % partitions, lambda x: x // 10)
              .process(lambda value, ctx: [value])
              .key_by(lambda x: x % 20)
              .reduce(lambda a, b: a + b)
              .execute_and_collect(limit=100))
    assert sorted(result) == [10, 20, 40, 60, 90, 120]  # running sums of 10, 30, 50 and 20, 40, 60
