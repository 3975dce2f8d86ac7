"""GPU numerical suite: skips with a printed reason without a usable device or torch, seeds the
random data per run, and compiles every kernel the selected tests use in ONE add_module call.

Reproduce a run with TILECRAFT_GPU_TEST_SEED=<the seed printed in the header>.
"""

import os
import random
import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:  # the helpers are plain modules next to the tests
    sys.path.insert(0, str(_HERE))

from gpu_helpers import Operations  # noqa: E402
from gpu_kernels import KERNELS  # noqa: E402
from gpu_seeding import seeded_fixtures  # noqa: E402

SEED = int(os.environ.get("TILECRAFT_GPU_TEST_SEED") or random.SystemRandom().randrange(2 ** 31))
_USED_KEYS = set()
_SKIP_REASON = []
_COMPILE_REPORT = []


def _skip_reason():
    """None when the suite can run, else why not."""
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
        return f"the device has compute capability {capability}; these SM80 kernels need >= 80"
    return None


def _reason():
    if not _SKIP_REASON:
        _SKIP_REASON.append(_skip_reason())
    return _SKIP_REASON[0]


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU")
    config.addinivalue_line("markers", "uses_kernels(*keys): kernels a test needs compiled")


def pytest_report_header(config):
    reason = _reason()
    status = f"SKIPPED: {reason}" if reason else "running"
    return [f"tilecraft GPU suite: {status}; seed {SEED} (TILECRAFT_GPU_TEST_SEED={SEED}); "
            f"{len(KERNELS)} kernels in the table"]


def _in_this_dir(item):
    path = getattr(item, "path", None) or getattr(item, "fspath", None)
    try:
        return Path(str(path)).resolve().is_relative_to(_HERE)
    except (TypeError, ValueError, OSError):
        return False


def pytest_collection_modifyitems(config, items):
    reason = _reason()
    for item in items:
        if not _in_this_dir(item):
            continue
        item.add_marker(pytest.mark.gpu)
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"tilecraft GPU suite: {reason}"))


def kernel_keys_of(item):
    """The kernel keys a test item uses: its parameters that name a kernel (strings, or
    sequences of strings) and its uses_kernels marker."""
    keys = set()
    callspec = getattr(item, "callspec", None)
    for value in (callspec.params.values() if callspec else ()):
        values = value if isinstance(value, (tuple, list)) else (value,)
        keys.update(v for v in values if isinstance(v, str) and v in KERNELS)
    for marker in item.iter_markers("uses_kernels"):
        keys.update(marker.args)
    return keys


def pytest_collection_finish(session):
    # After deselection (-k, -m): compile only what will run.
    for item in session.items:
        if _in_this_dir(item):
            _USED_KEYS.update(kernel_keys_of(item))


@pytest.fixture(scope="session")
def ops():
    """Every operation the selected tests use, compiled together (one process per kernel)."""
    operations = Operations()
    keys = sorted(_USED_KEYS)
    operations.compile(keys)
    report = (f"tilecraft GPU suite: add_module of {len(keys)} kernels took "
              f"{operations.compile_seconds:.1f} s")
    if operations.build_errors:
        report += f"; {len(operations.build_errors)} descriptions rejected: " + ", ".join(
            f"{k} ({e})" for k, e in operations.build_errors.items())
    if operations.compile_error:
        report += f"; add_module raised: {operations.compile_error}"
    _COMPILE_REPORT.append(report)
    sys.stderr.write("\n" + report + "\n")
    return operations


def pytest_terminal_summary(terminalreporter):
    for line in _COMPILE_REPORT:
        terminalreporter.write_line(line)
    if _COMPILE_REPORT:
        terminalreporter.write_line(f"tilecraft GPU suite: seed {SEED}")


rng, gen, seed_note = seeded_fixtures(SEED)
