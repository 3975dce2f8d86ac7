"""The device memory pool (seed 002, "Memory management"), on CUDA's stream-ordered allocator."""

from tilecraft import _core


def get_memory_pool(init_pool_size, max_pool_size=0):
    """Reserves ``init_pool_size`` bytes and caps the pool at ``max_pool_size`` (0: no cap)."""
    _core.get_memory_pool(init_pool_size, max_pool_size)  # byte counts, checked by name


def get_allocated_size():
    """Bytes currently allocated from tilecraft's pool on the current device."""
    return _core.get_allocated_size()
