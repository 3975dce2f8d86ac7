"""Grouped GEMM GPU suite: skips with a printed reason without a usable device, torch or
tilecraft; skips the SM90 items (kernel keys ``g90_*`` and the ``sm90`` marker) on a device that
is not compute capability 9.0; seeds the random data per run (TILECRAFT_GPU_TEST_SEED, shared with
tests/python/gpu and gpu90).

The kernel table, the operations and the checks live in test_gpu_grouped.py (its module-scope
fixture ``ops`` compiles every operation the selected items use in ONE compiler.add_module call);
the float64 reference's last steps and the element-wise tolerances are imported from the SM80
and SM90 suites (tests/python/gpu/gpu_check.py, tests/python/gpu90/sm90_check.py), which this
file puts on sys.path.

Markers: ``sanitizer`` (the compute-sanitizer subset), ``sm90`` (needs compute capability 9.0),
``grouped_kernels(*keys)`` (kernel keys an item uses besides its parameters).
"""

import os
import random
import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
for _dir in (_HERE, _HERE.parent / "gpu", _HERE.parent / "gpu90"):
    if str(_dir) not in sys.path:  # plain helper modules of the SM80 / SM90 suites
        sys.path.insert(0, str(_dir))

from gpu_seeding import seeded_fixtures  # noqa: E402

SEED = int(os.environ.get("TILECRAFT_GPU_TEST_SEED") or random.SystemRandom().randrange(2 ** 31))
SM90_PREFIX = "g90_"   # kernel keys of arch=90 (CUTLASS 3.x pointer-array) grouped kernels
SM80_PREFIX = "g80_"   # kernel keys of arch=80 (CUTLASS 2.x GemmGrouped) kernels
_STATE = {}
_REPORT = []


def _probe():
    """(reason the suite cannot run or None, the device's compute capability or None)."""
    try:
        import tilecraft
    except Exception as error:  # not built / not installed
        return f"tilecraft is not importable ({type(error).__name__}: {error})", None
    reason = tilecraft._core.cuda_device_available()
    if reason is not None:
        return (reason if "CUDA" in reason else f"no usable CUDA device: {reason}"), None
    try:
        import torch
    except Exception as error:
        return f"torch is not importable ({type(error).__name__}: {error})", None
    if not torch.cuda.is_available():
        return "torch sees no CUDA device", None
    capability = tilecraft._core.device_compute_capability()
    if capability < 80:
        return (f"the device has compute capability {capability}; grouped kernels need >= 80",
                capability)
    return None, capability


def _state():
    if not _STATE:
        _STATE["reason"], _STATE["cc"] = _probe()
    return _STATE["reason"], _STATE["cc"]


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU")
    config.addinivalue_line("markers", "sanitizer: small subset for compute-sanitizer")
    config.addinivalue_line("markers", "sm90: needs a compute capability 9.0 device")
    config.addinivalue_line("markers",
                            "grouped_kernels(*keys): grouped kernels a test needs compiled")


def pytest_report_header(config):
    reason, cc = _state()
    if reason:
        status = f"SKIPPED: {reason}"
    elif cc != 90:
        status = f"running the SM80 items (compute capability {cc}; SM90 items skipped)"
    else:
        status = "running"
    return [f"tilecraft grouped GEMM suite: {status}; seed {SEED} "
            f"(TILECRAFT_GPU_TEST_SEED={SEED})"]


def _in_this_dir(item):
    path = getattr(item, "path", None) or getattr(item, "fspath", None)
    try:
        return Path(str(path)).resolve().is_relative_to(_HERE)
    except (TypeError, ValueError, OSError):
        return False


def kernel_keys_of(item):
    """The grouped kernel keys an item uses: its parameters that look like kernel keys (strings,
    or sequences of strings) and its grouped_kernels marker."""
    keys = set()
    callspec = getattr(item, "callspec", None)
    for value in (callspec.params.values() if callspec else ()):
        values = value if isinstance(value, (tuple, list)) else (value,)
        keys.update(v for v in values
                    if isinstance(v, str) and v.startswith((SM80_PREFIX, SM90_PREFIX)))
    for marker in item.iter_markers("grouped_kernels"):
        keys.update(marker.args)
    return keys


def needs_sm90(item):
    return (item.get_closest_marker("sm90") is not None
            or any(k.startswith(SM90_PREFIX) for k in kernel_keys_of(item)))


def pytest_collection_modifyitems(config, items):
    mine = [item for item in items if _in_this_dir(item)]
    if not mine:
        return
    reason, cc = _state()
    for item in mine:
        item.add_marker(pytest.mark.gpu)
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"tilecraft grouped GEMM suite: {reason}"))
        elif needs_sm90(item) and cc != 90:
            item.add_marker(pytest.mark.skip(
                reason=f"tilecraft grouped GEMM suite: arch=90 kernels are built for sm_90a, "
                       f"which runs only on compute capability 9.0; this device has {cc}"))


def selected_keys(session, path):
    """Kernel keys of the items of ``path`` that will run (after -k / -m deselection and
    without skipped items): what a module's fixture compiles."""
    keys = set()
    target = Path(str(path)).resolve()
    for item in session.items:
        item_path = getattr(item, "path", None) or getattr(item, "fspath", None)
        if Path(str(item_path)).resolve() != target:
            continue
        if item.get_closest_marker("skip") is not None:
            continue
        keys.update(kernel_keys_of(item))
    return keys


@pytest.fixture(scope="module")
def selected_kernel_keys(request):
    """The kernel keys the selected, not skipped items of the requesting module use."""
    return sorted(selected_keys(request.session, request.module.__file__))


@pytest.fixture(scope="session")
def grouped_report():
    """Lines (compile times, rejected descriptions) printed at the end of the run."""
    return _REPORT


def pytest_terminal_summary(terminalreporter):
    for line in _REPORT:
        terminalreporter.write_line(line)
    if _REPORT:
        terminalreporter.write_line(f"tilecraft grouped GEMM suite: seed {SEED}")


rng, gen, seed_note = seeded_fixtures(SEED)
