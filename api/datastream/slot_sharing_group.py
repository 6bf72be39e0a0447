"""SlotSharingGroup and MemorySize, as in ``pyflink.datastream.slot_sharing_group``.

``ds.slot_sharing_group(group)`` keeps operators of different groups out of one chain
(Spark stage). The resources a group declares (CPU cores, memory, external resources)
are recorded and readable, but Spark, not the group, sizes the executors that run the
job: set them with Spark's own settings (``spark.executor.cores``, ...).
"""
from typing import Dict, Optional

__all__ = ["MemorySize", "SlotSharingGroup"]

_UNITS = (("tb", 1 << 40), ("gb", 1 << 30), ("mb", 1 << 20), ("kb", 1 << 10))


class MemorySize:
    """An amount of memory in bytes: ``MemorySize.of_mebi_bytes(100)``."""

    def __init__(self, bytes_size: int):
        if bytes_size < 0:
            raise ValueError("bytes must be >= 0")
        self._bytes = int(bytes_size)

    @staticmethod
    def of_mebi_bytes(mebi_bytes: int) -> "MemorySize":
        return MemorySize(mebi_bytes << 20)

    def get_bytes(self) -> int:
        return self._bytes

    def get_kibi_bytes(self) -> int:
        return self._bytes >> 10

    def get_mebi_bytes(self) -> int:
        return self._bytes >> 20

    def get_gibi_bytes(self) -> int:
        return self._bytes >> 30

    def get_tebi_bytes(self) -> int:
        return self._bytes >> 40

    def get_java_memory_size(self):
        """There is no JVM here: this MemorySize is its own value."""
        return self

    def __eq__(self, other):
        return isinstance(other, MemorySize) and self._bytes == other._bytes

    def __hash__(self):
        return hash(self._bytes)

    def __lt__(self, other: "MemorySize"):
        return self._bytes < other._bytes

    def __le__(self, other: "MemorySize"):
        return self._bytes <= other._bytes

    def __str__(self):
        # Flink shows the largest unit that divides the size exactly: "100 mb", "1500 bytes"
        for unit, size in _UNITS:
            if self._bytes and self._bytes % size == 0:
                return f"{self._bytes // size} {unit}"
        return f"{self._bytes} bytes"

    def __repr__(self):
        return f"MemorySize({self})"


class SlotSharingGroup:
    """A named group of operators and the resources it asks for; build one with
    ``SlotSharingGroup.builder("name").set_cpu_cores(1.0).set_task_heap_memory_mb(100)
    .build()``. See the module docstring for what the resources do here."""

    def __init__(self, name: str, cpu_cores: Optional[float] = None,
                 task_heap_memory: Optional[MemorySize] = None,
                 task_off_heap_memory: Optional[MemorySize] = None,
                 managed_memory: Optional[MemorySize] = None,
                 external_resources: Optional[Dict[str, float]] = None):
        self._name = name
        self._cpu_cores = cpu_cores
        self._task_heap_memory = task_heap_memory
        self._task_off_heap_memory = task_off_heap_memory
        self._managed_memory = managed_memory
        self._external_resources = dict(external_resources or {})

    def get_name(self) -> str:
        return self._name

    def get_managed_memory(self) -> Optional[MemorySize]:
        return self._managed_memory

    def get_task_heap_memory(self) -> Optional[MemorySize]:
        return self._task_heap_memory

    def get_task_off_heap_memory(self) -> Optional[MemorySize]:
        return self._task_off_heap_memory

    def get_cpu_cores(self) -> Optional[float]:
        return self._cpu_cores

    def get_external_resources(self) -> dict:
        return dict(self._external_resources)

    def get_java_slot_sharing_group(self):
        """There is no JVM here: this SlotSharingGroup is its own value."""
        return self

    @staticmethod
    def builder(name: str) -> "SlotSharingGroup.Builder":
        return SlotSharingGroup.Builder(name)

    def _key(self):
        return (self._name, self._cpu_cores, self._task_heap_memory, self._task_off_heap_memory,
                self._managed_memory, tuple(sorted(self._external_resources.items())))

    def __eq__(self, other):
        return isinstance(other, SlotSharingGroup) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    class Builder:
        """Builds a SlotSharingGroup; resources are optional, but once any is set the CPU
        cores and task heap memory must be set too (as in Flink)."""

        def __init__(self, name: str):
            self._name = name
            self._cpu_cores = None
            self._task_heap_memory = None
            self._task_off_heap_memory = None
            self._managed_memory = None
            self._external_resources: Dict[str, float] = {}

        def set_cpu_cores(self, cpu_cores: float) -> "SlotSharingGroup.Builder":
            if cpu_cores <= 0:
                raise ValueError("The cpu cores should be positive.")
            self._cpu_cores = float(cpu_cores)
            return self

        def set_task_heap_memory(self, task_heap_memory: MemorySize) -> "SlotSharingGroup.Builder":
            if task_heap_memory.get_bytes() <= 0:
                raise ValueError("The task heap memory should be positive.")
            self._task_heap_memory = task_heap_memory
            return self

        def set_task_heap_memory_mb(self, task_heap_memory_mb: int) -> "SlotSharingGroup.Builder":
            return self.set_task_heap_memory(MemorySize.of_mebi_bytes(task_heap_memory_mb))

        def set_task_off_heap_memory(self, task_off_heap_memory: MemorySize) \
                -> "SlotSharingGroup.Builder":
            self._task_off_heap_memory = task_off_heap_memory
            return self

        def set_task_off_heap_memory_mb(self, task_off_heap_memory_mb: int) \
                -> "SlotSharingGroup.Builder":
            return self.set_task_off_heap_memory(MemorySize.of_mebi_bytes(task_off_heap_memory_mb))

        def set_managed_memory(self, managed_memory: MemorySize) -> "SlotSharingGroup.Builder":
            self._managed_memory = managed_memory
            return self

        def set_managed_memory_mb(self, managed_memory_mb: int) -> "SlotSharingGroup.Builder":
            return self.set_managed_memory(MemorySize.of_mebi_bytes(managed_memory_mb))

        def set_external_resource(self, name: str, value: float) -> "SlotSharingGroup.Builder":
            self._external_resources[name] = float(value)
            return self

        def build(self) -> "SlotSharingGroup":
            declared = (self._cpu_cores, self._task_heap_memory, self._task_off_heap_memory,
                        self._managed_memory)
            if (any(r is not None for r in declared) or self._external_resources) and (
                    self._cpu_cores is None or self._task_heap_memory is None):
                raise ValueError(
                    "The cpu cores and task heap memory are required when specifying the "
                    "resource of a slot sharing group. You need to explicitly configure them "
                    "with positive value.")
            zero = MemorySize(0)
            resourced = self._cpu_cores is not None
            return SlotSharingGroup(
                self._name, self._cpu_cores, self._task_heap_memory,
                self._task_off_heap_memory or (zero if resourced else None),
                self._managed_memory or (zero if resourced else None), self._external_resources)
