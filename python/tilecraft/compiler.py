"""``pycutlass.compiler``: compile operations (nvcc, in parallel, through the artifact cache)."""

from tilecraft import _core


def add_module(operations):
    """Compiles the operations' kernels, or loads them from the cache. Progress goes to stderr."""
    if not isinstance(operations, (list, tuple)):
        operations = [operations]
    _core.compile_operations(operations)  # operations[i]: each a GemmOperationUniversal


def nvrtc():
    """PyCUTLASS's switch to NVRTC. tilecraft builds shared objects with nvcc (CUTLASS's host-side
    argument preparation is template code that NVRTC cannot compile), so this says so."""
    raise _core.UnsupportedError(
        "compiler.nvrtc(): tilecraft compiles kernels with nvcc only; NVRTC cannot build the "
        "host-side half of a module. Remove the call; the nvcc backend is always used.")


def cache_dir():
    """Where compiled modules are kept (TILECRAFT_CACHE_DIR)."""
    return _core.cache_dir()
