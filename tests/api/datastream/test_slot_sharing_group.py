"""SlotSharingGroup and MemorySize. Expected values observed on PyFlink 2.3.0."""
import pytest

from api.datastream import MemorySize, SlotSharingGroup, StreamExecutionEnvironment


def test_memory_size():
    size = MemorySize.of_mebi_bytes(100)
    assert str(size) == "100 mb"
    assert (size.get_bytes(), size.get_kibi_bytes(), size.get_mebi_bytes(),
            size.get_gibi_bytes(), size.get_tebi_bytes()) == (104857600, 102400, 100, 0, 0)
    assert [str(MemorySize(bytes_size=b)) for b in (1500, 2048, 0)] == \
        ["1500 bytes", "2 kb", "0 bytes"]
    assert MemorySize(bytes_size=1024) != MemorySize.of_mebi_bytes(0)
    assert MemorySize(bytes_size=1) < MemorySize(bytes_size=2)


def test_a_group_without_resources():
    group = SlotSharingGroup.builder("a").build()
    assert (group.get_name(), group.get_managed_memory(), group.get_task_heap_memory(),
            group.get_cpu_cores(), group.get_external_resources()) == ("a", None, None, None, {})


def test_a_group_with_resources():
    def build():
        return SlotSharingGroup.builder("c").set_cpu_cores(1.5).set_task_heap_memory_mb(100) \
            .set_managed_memory(MemorySize.of_mebi_bytes(3)).set_external_resource("gpu", 1.0) \
            .build()
    group = build()
    assert [str(group.get_managed_memory()), str(group.get_task_heap_memory()),
            str(group.get_task_off_heap_memory())] == ["3 mb", "100 mb", "0 bytes"]
    assert (group.get_cpu_cores(), group.get_external_resources()) == (1.5, {"gpu": 1.0})
    assert group == build()


@pytest.mark.parametrize("build, message", [
    (lambda: SlotSharingGroup.builder("b").set_cpu_cores(1.0).build(),
     "The cpu cores and task heap memory are required"),
    (lambda: SlotSharingGroup.builder("b").set_task_heap_memory_mb(100).build(),
     "The cpu cores and task heap memory are required"),
    (lambda: SlotSharingGroup.builder("b").set_cpu_cores(-1.0), "The cpu cores should be positive"),
    (lambda: SlotSharingGroup.builder("b").set_task_heap_memory_mb(0),
     "The task heap memory should be positive"),
])
def test_invalid_resources_fail(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_the_environment_registers_groups():
    env = StreamExecutionEnvironment.get_execution_environment()
    assert env.register_slot_sharing_group(SlotSharingGroup.builder("other").build()) is env
