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


def export_cache(path, key_file=None):
    """Writes every compiled module of the cache into one archive file at ``path``, signed with
    your archive key pair (``key_file``, else ``TILECRAFT_ARCHIVE_KEY_FILE``, made on the first
    export; a note in the result gives its public key). ``path`` may name nothing or a regular
    file. Returns a dict: ``entries`` written, ``skipped`` (entries that do not verify here) and
    ``notes``. Keys name no path of this machine: another machine with the same CUDA toolkit and
    CUTLASS headers finds the imported modules without compiling."""
    return _core.export_cache(path, key_file)


def import_cache(path, trusted_keys=None):
    """Imports an archive from ``export_cache`` only when its signer is a key you trust: one of
    ``trusted_keys`` (public keys ``"tilecraft-ed25519:<hex>"`` or paths of files listing them),
    one of the file ``TILECRAFT_TRUSTED_KEYS`` names (default ``~/.config/tilecraft/trusted-keys``),
    or your own archive key. The signature, then every file (digests, ELF modules, each key
    against its source) is checked before anything is written; any fault refuses the whole archive
    with a ValueError naming it. Returns a dict: ``entries`` imported, ``already_present``."""
    return _core.import_cache(path, trusted_keys)


def make_archive_key(path=None):
    """Makes a new archive key pair at ``path`` (default ``TILECRAFT_ARCHIVE_KEY_FILE``; nothing may
    be there) and returns its public key, to give to those who import your archives."""
    return _core.make_archive_key(path)


def archive_public_key(path=None):
    """The public key of your archive key pair (``path``, default ``TILECRAFT_ARCHIVE_KEY_FILE``)."""
    return _core.archive_public_key(path)
