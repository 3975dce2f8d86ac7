"""Autotuning and the tuning cache (``<cache dir>/tuning``): what ``tilecraft.gemm`` and the
``tilecraft`` command measure and remember.

A tuning run compiles the top-ranked candidates for a problem in parallel, checks each once
against a float64 reference on fresh random data shaped like the problem, times the ones that
pass (cold L2, warmed, median of repeats, clocks noted) and stores the fastest under the device
model and the problem's signature. A candidate that fails to compile, to run or to verify, or
that the budget cuts off, is reported with its reason and never chosen.
"""

import numbers

from tilecraft import _core

TUNING_MODES = ("auto", "blocking", "off", "force")


def check_tuning_options(tuning, max_candidates, max_seconds, allow_tf32):
    """Refuses, by name, tuning options the one-call ops and ``tune`` do not take."""
    if tuning is not None and tuning not in TUNING_MODES:
        raise ValueError(f"tuning: expected None or one of {list(TUNING_MODES)}, got {tuning!r}")
    if max_candidates is not None and (isinstance(max_candidates, bool)
                                       or not isinstance(max_candidates, numbers.Integral)):
        raise TypeError(f"max_candidates: expected None or an integer from 1 to 64, got "
                        f"{_core.given(max_candidates)}")
    if max_candidates is not None and not 1 <= max_candidates <= 64:
        raise ValueError(f"max_candidates: expected an integer from 1 to 64, got {max_candidates}")
    if max_seconds is not None and (isinstance(max_seconds, bool)
                                    or not isinstance(max_seconds, numbers.Real)):
        raise TypeError(f"max_seconds: expected None or a number of seconds >= 0, got "
                        f"{_core.given(max_seconds)}")
    if max_seconds is not None and not max_seconds >= 0:
        raise ValueError(f"max_seconds: expected a number of seconds >= 0 (0: no limit), got "
                         f"{max_seconds}")
    if allow_tf32 is not None and not isinstance(allow_tf32, bool):
        raise TypeError(f"allow_tf32: expected None, True or False, got {_core.given(allow_tf32)}")


def tune(args, max_candidates=None, max_seconds=None, repeats=25, allow_tf32=None):
    """Tunes ``args`` (tilecraft.api.arguments GemmArguments, GroupedGemmArguments,
    Conv2dArguments or Conv3dArguments: one tuner for every family; the tensors are only looked
    at) now and stores the winner. Returns a dict: device, signature, candidates (kernel_name,
    outcome, median_us, tflops, repeats, reason), winner, clocks, seconds, stored."""
    check_tuning_options(None, max_candidates, max_seconds, allow_tf32)
    if isinstance(repeats, bool) or not isinstance(repeats, numbers.Integral) or not 1 <= repeats <= 1000:
        raise ValueError(f"repeats: expected an integer from 1 to 1000, got {repeats!r}")
    return _core.tune.tune(args, max_candidates,
                                None if max_seconds is None else float(max_seconds), int(repeats),
                                allow_tf32)


def find_tuned(args, allow_tf32=True):
    """The stored winner for ``args``' signature (a dict), or None."""
    return _core.tune.find_tuned(args, bool(allow_tf32))


def signature(args, allow_tf32=True):
    """(device model, signature text, key) of ``args``."""
    return _core.tune.signature(args, allow_tf32)


def shape_bucket(extent):
    """The bucket of an extent: four steps per octave (..., 4096, 5120, 6144, 7168, 8192, ...)."""
    return _core.tune.shape_bucket(int(extent))


def cache_stats():
    """folder, entries, bytes, invalid (files that do not verify and are ignored)."""
    return _core.tune.cache_stats()


def list_cache():
    """One dict per stored winner: path, device, signature, kernel_name, tflops, bytes, tuned_at."""
    return _core.tune.list_cache()


def clear_cache():
    """Removes every stored winner; returns how many files were removed."""
    return _core.tune.clear_cache()


# The largest size limit: 2**63 - 1 bytes (8 EiB), more than any disk holds.
MAX_BYTES = 2**63 - 1


def _max_bytes(max_bytes):
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, numbers.Integral):
        raise TypeError(f"max_bytes: expected an int from 0 to 2**63 - 1 (a size in bytes), got "
                        f"{_core.given(max_bytes)}")
    if not 0 <= max_bytes <= MAX_BYTES:
        value = int(max_bytes)
        shown = str(value) if abs(value) < 10**30 else f"a {abs(value).bit_length()}-bit number"
        raise ValueError(f"max_bytes: expected a size from 0 to 2**63 - 1 bytes (0 keeps "
                         f"nothing), got {shown}")
    return int(max_bytes)


def prune_cache(max_bytes):
    """Removes the oldest entries until the tuning cache holds at most ``max_bytes`` (an int from
    0, which keeps nothing, to 2**63 - 1)."""
    return _core.tune.prune_cache(_max_bytes(max_bytes))


def kernel_cache_stats():
    """The compiled-kernel cache: folder, entries (modules), kernels, bytes, invalid."""
    return _core.tune.kernel_cache_stats()


def list_kernel_cache():
    """One dict per module, least recently used first: key, path, kernels, bytes, last_used,
    valid, invalid_reason."""
    return _core.tune.list_kernel_cache()


def clear_kernel_cache():
    """Removes every compiled module (each under its key's lock); returns how many."""
    return _core.tune.clear_kernel_cache()


def prune_kernel_cache(max_bytes):
    """Removes modules that do not verify, then the least recently used, until the kernel cache
    holds at most ``max_bytes`` (an int from 0, which keeps nothing, to 2**63 - 1); returns how
    many were removed."""
    return _core.tune.prune_kernel_cache(_max_bytes(max_bytes))


__all__ = ["cache_stats", "clear_cache", "clear_kernel_cache", "find_tuned", "kernel_cache_stats",
           "list_cache", "list_kernel_cache", "prune_cache", "prune_kernel_cache", "shape_bucket",
           "signature", "tune"]
