"""``pycutlass.compiler``: compile operations (nvcc, in parallel, through the artifact cache)."""

from tilecraft import _core


def add_module(operations, split_k_parallel=False):
    """Compiles the operations' kernels, or loads them from the cache. Progress goes to stderr.

    ``split_k_parallel=True`` also builds, at the same time, each operation's parallel split-K
    form (its partials kernel and the reduction kernel behind ``GemmSplitKParallel`` /
    ``conv.SplitKMode.Parallel``), which is otherwise compiled on first use, one at a time."""
    if not isinstance(operations, (list, tuple)):
        operations = [operations]
    if not isinstance(split_k_parallel, bool):
        raise TypeError(f"split_k_parallel: expected a bool, got {split_k_parallel!r} "
                        f"({type(split_k_parallel).__name__})")
    _core.compile_operations(operations)  # operations[i]: each a GemmOperationUniversal
    if split_k_parallel:
        _core.compile_split_k_parallel(operations)


def nvrtc():
    """PyCUTLASS's switch to NVRTC. tilecraft builds each module in two halves at once (kernels
    with nvcc -fatbin, CUTLASS's host code with nvcc -c); NVRTC for the device half is not built
    yet, so this says so rather than silently compiling with nvcc."""
    raise _core.UnsupportedError(
        "compiler.nvrtc(): tilecraft does not compile with NVRTC yet; every kernel is built with "
        "nvcc (device and host halves at once). Remove the call, or call compiler.nvcc().")


def nvcc():
    """Selects the nvcc backend, the one tilecraft has (kept for symmetry with nvrtc())."""
    return None


def cache_dir():
    """Where compiled modules are kept (TILECRAFT_CACHE_DIR)."""
    return _core.cache_dir()


def export_cache(path):
    """Writes every compiled module of the cache into one archive file at ``path``: each module
    with its source and key, a SHA-256 per file and one over the whole archive. Returns a dict:
    ``entries`` written, ``skipped`` (entries that do not verify here) and ``notes``. Keys name
    no path of this machine: another machine with the same CUDA toolkit and CUTLASS headers
    finds the imported modules without compiling."""
    return _core.export_cache(path)


def import_cache(path):
    """Verifies an archive from ``export_cache`` completely (digests, file names, ELF modules, and
    that each entry's key is the key of its source) and only then stores its modules, signed for
    this machine; a damaged or modified archive is refused whole, with a ValueError naming the
    entry and the fault. Returns a dict: ``entries`` imported, ``already_present``."""
    return _core.import_cache(path)
