"""Convolution GPU suite: skips with a printed reason without a usable device, torch or
tilecraft; seeds the random data per run (TILECRAFT_GPU_TEST_SEED, shared with the other GPU
suites); compiles every kernel the selected items use in ONE ``compiler.add_module`` (session
fixture ``ops``).

The float64 reference's last steps and the element-wise checks are imported from the SM80 GEMM
suite (tests/python/gpu/gpu_check.py), which this file puts on sys.path.

Markers: ``sanitizer`` (the compute-sanitizer subset), ``conv_kernels(*keys)`` (kernel keys an
item uses besides its parameters).
"""

import os
import random
import sys
import time
import warnings
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
for _dir in (_HERE, _HERE.parent / "gpu"):
    if str(_dir) not in sys.path:
        sys.path.insert(0, str(_dir))

from conv_kernels import KERNELS  # noqa: E402
from gpu_seeding import seeded_fixtures  # noqa: E402

SEED = int(os.environ.get("TILECRAFT_GPU_TEST_SEED") or random.SystemRandom().randrange(2 ** 31))
_STATE = {}
_REPORT = []
_USED_KEYS = set()


def _reason():
    if "reason" not in _STATE:
        _STATE["reason"] = _probe()
    return _STATE["reason"]


def _probe():
    try:
        import tilecraft
    except Exception as error:  # not built / not installed
        return f"tilecraft is not importable ({type(error).__name__}: {error})"
    reason = tilecraft._core.cuda_device_available()
    if reason is not None:
        return reason if "CUDA" in reason else f"no usable CUDA device: {reason}"
    try:
        import torch
    except Exception as error:
        return f"torch is not importable ({type(error).__name__}: {error})"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    capability = tilecraft._core.device_compute_capability()
    if capability < 80:
        return f"the device has compute capability {capability}; these kernels need >= 80"
    return None


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU")
    config.addinivalue_line("markers", "sanitizer: small subset for compute-sanitizer")
    config.addinivalue_line("markers", "conv_kernels(*keys): conv kernels a test needs compiled")


def pytest_report_header(config):
    reason = _reason()
    status = f"SKIPPED: {reason}" if reason else "running"
    return [f"tilecraft convolution suite: {status}; seed {SEED} (TILECRAFT_GPU_TEST_SEED={SEED}); "
            f"{len(KERNELS)} kernels in the table"]


def _in_this_dir(item):
    path = getattr(item, "path", None) or getattr(item, "fspath", None)
    try:
        return Path(str(path)).resolve().is_relative_to(_HERE)
    except (TypeError, ValueError, OSError):
        return False


def kernel_keys_of(item):
    keys = set()
    callspec = getattr(item, "callspec", None)
    for value in (callspec.params.values() if callspec else ()):
        values = value if isinstance(value, (tuple, list)) else (value,)
        keys.update(v for v in values if isinstance(v, str) and v in KERNELS)
        keys.update(v.key for v in values if getattr(v, "key", None) in KERNELS)
    for marker in item.iter_markers("conv_kernels"):
        keys.update(marker.args)
    return keys


def pytest_collection_modifyitems(config, items):
    reason = _reason()
    for item in items:
        if not _in_this_dir(item):
            continue
        item.add_marker(pytest.mark.gpu)
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"tilecraft convolution suite: {reason}"))


def pytest_collection_finish(session):
    for item in session.items:  # after -k / -m deselection: compile only what will run
        if _in_this_dir(item) and item.get_closest_marker("skip") is None:
            _USED_KEYS.update(kernel_keys_of(item))


class Operations:
    """Operations by kernel key; ``compile`` runs ONE add_module over all of them."""

    def __init__(self, build):
        self._build = build
        self._ops = {}
        self.build_errors = {}
        self.compile_error = None
        self.compile_seconds = 0.0

    def get(self, key):
        if key in self.build_errors:
            raise AssertionError(f"{key}: the description was refused: {self.build_errors[key]}")
        if key not in self._ops:
            self._ops[key] = self._build(KERNELS[key])
        return self._ops[key]

    def compile(self, keys):
        import tilecraft

        ops = []
        for key in keys:
            try:
                ops.append(self.get(key))
            except Exception as error:
                self.build_errors[key] = f"{type(error).__name__}: {error}"
        start = time.monotonic()
        try:
            tilecraft.compiler.add_module(ops)
        except Exception as error:  # the failing kernels fail their tests
            self.compile_error = f"{type(error).__name__}: {error}"
            warnings.warn(f"compiler.add_module failed for some kernels: {error}")
        self.compile_seconds = time.monotonic() - start


@pytest.fixture(scope="session")
def ops():
    from conv_case import build_operation

    operations = Operations(build_operation)
    keys = sorted(_USED_KEYS)
    operations.compile(keys)
    report = (f"tilecraft convolution suite: add_module of {len(keys)} kernels took "
              f"{operations.compile_seconds:.1f} s")
    if operations.build_errors:
        report += f"; {len(operations.build_errors)} descriptions refused: " + ", ".join(
            f"{k} ({e})" for k, e in operations.build_errors.items())
    if operations.compile_error:
        report += f"; add_module raised: {operations.compile_error[:4000]}"
    _REPORT.append(report)
    sys.stderr.write("\n" + report + "\n")
    return operations


def pytest_terminal_summary(terminalreporter):
    for line in _REPORT:
        terminalreporter.write_line(line)
    if _REPORT:
        terminalreporter.write_line(f"tilecraft convolution suite: seed {SEED}")


rng, gen, seed_note = seeded_fixtures(SEED)
