"""SM90 GPU numerical suite: skips with a printed reason unless a compute capability 9.0 device,
torch (with float8 dtypes) and tilecraft are usable; seeds the random data per run; compiles
every kernel the selected tests use in ONE add_module call.

Reproduce a run with TILECRAFT_GPU_TEST_SEED=<the seed printed in the header>.
Markers: ``sanitizer`` (the compute-sanitizer subset), ``fp8`` (items using fp8 kernels, set
automatically), ``sm90_kernels(*keys)`` (kernels a test uses besides its parameters).
"""

import os
import random
import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:  # the sm90_* helpers are plain modules next to the tests
    sys.path.insert(0, str(_HERE))

from sm90_build import Operations  # noqa: E402
from sm90_kernels import KERNELS  # noqa: E402

SEED = int(os.environ.get("TILECRAFT_GPU_TEST_SEED") or random.SystemRandom().randrange(2 ** 31))
_USED_KEYS = set()
_REASON = []
_REPORT = []


def _skip_reason():
    """None when the suite can run, else why not."""
    try:
        import tilecraft
    except Exception as error:
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
    if not hasattr(torch, "float8_e4m3fn"):
        return f"torch {torch.__version__} has no float8 dtypes (needs torch >= 2.1)"
    capability = tilecraft._core.device_compute_capability()
    if capability != 90:
        return (f"the device has compute capability {capability}; arch=90 kernels are built "
                f"for sm_90a (wgmma, TMA), which runs only on compute capability 9.0")
    return None


def _reason():
    if not _REASON:
        _REASON.append(_skip_reason())
    return _REASON[0]


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU")
    config.addinivalue_line("markers", "sanitizer: small SM90 subset for compute-sanitizer")
    config.addinivalue_line("markers", "fp8: uses an SM90 kernel with fp8 operands or output")
    config.addinivalue_line("markers", "sm90_kernels(*keys): SM90 kernels a test needs compiled")


def pytest_report_header(config):
    reason = _reason()
    status = f"SKIPPED: {reason}" if reason else "running"
    return [f"tilecraft SM90 GPU suite: {status}; seed {SEED} (TILECRAFT_GPU_TEST_SEED={SEED}); "
            f"{len(KERNELS)} kernels in the table"]


def _in_this_dir(item):
    path = getattr(item, "path", None) or getattr(item, "fspath", None)
    try:
        return Path(str(path)).resolve().is_relative_to(_HERE)
    except (TypeError, ValueError, OSError):
        return False


def kernel_keys_of(item):
    """The kernel keys an item uses: parameters naming a kernel (or tuples of them) and its
    sm90_kernels marker."""
    keys = set()
    callspec = getattr(item, "callspec", None)
    for value in (callspec.params.values() if callspec else ()):
        values = value if isinstance(value, (tuple, list)) else (value,)
        keys.update(v for v in values if isinstance(v, str) and v in KERNELS)
    for marker in item.iter_markers("sm90_kernels"):
        keys.update(marker.args)
    return keys


def pytest_collection_modifyitems(config, items):
    reason = _reason()
    for item in items:
        if not _in_this_dir(item):
            continue
        item.add_marker(pytest.mark.gpu)
        if any(KERNELS[k].fp8_in or KERNELS[k].fp8_out for k in kernel_keys_of(item)):
            item.add_marker(pytest.mark.fp8)
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"tilecraft SM90 GPU suite: {reason}"))


def pytest_collection_finish(session):
    # After deselection (-k, -m): compile only what will run.
    for item in session.items:
        if _in_this_dir(item):
            _USED_KEYS.update(kernel_keys_of(item))


@pytest.fixture(scope="session")
def ops():
    """Every SM90 operation the selected tests use, compiled together (one nvcc job each)."""
    operations = Operations()
    keys = sorted(_USED_KEYS)
    operations.compile(keys)
    report = (f"tilecraft SM90 GPU suite: add_module of {len(keys)} kernels took "
              f"{operations.compile_seconds:.1f} s")
    if operations.build_errors:
        report += f"; {len(operations.build_errors)} descriptions rejected: " + "; ".join(
            f"{k} ({e})" for k, e in operations.build_errors.items())
    if operations.compile_error:
        report += f"; add_module raised: {operations.compile_error}"
    _REPORT.append(report)
    sys.stderr.write("\n" + report + "\n")
    return operations


def pytest_terminal_summary(terminalreporter):
    for line in _REPORT:
        terminalreporter.write_line(line)
    if _REPORT:
        terminalreporter.write_line(f"tilecraft SM90 GPU suite: seed {SEED}")


@pytest.fixture
def rng(request):
    """A random.Random seeded by the run's seed and the test's id."""
    return random.Random(f"{SEED}/{request.node.nodeid}")


@pytest.fixture
def gen(rng):
    import torch

    import sm90_data

    g = torch.Generator(device=sm90_data.DEVICE)
    g.manual_seed(rng.getrandbits(62))
    return g


@pytest.fixture
def seed_note(request):
    return (f"[seed {SEED}: rerun with TILECRAFT_GPU_TEST_SEED={SEED} python -m pytest "
            f"'{request.node.nodeid}']")
