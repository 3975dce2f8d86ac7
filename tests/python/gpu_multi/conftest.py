"""Two-GPU suite (issue 16): skips every item, with the reason printed, unless two CUDA devices
are usable. Items carry the ``multigpu`` marker (``pytest -m multigpu``).

Every item runs with cuda:0 current and its tensors on cuda:1 (or on both, where it says so):
the GEMM, grouped GEMM and convolution suites' own case runners put their data on
``DEVICE = "cuda:1"`` here, and each item checks afterwards that cuda:0 is still current.
Every operation and first-ranked kernel the items use is compiled once, in one ``add_module``
and one ``api.compile_kernels`` (fixture ``kernels``).

Reproduce a run with TILECRAFT_GPU_TEST_SEED=<the seed printed in the header>.
"""

import os
import random
import sys
from pathlib import Path

import pytest

_TESTS = Path(__file__).resolve().parent.parent
for _suite in ("gpu", "gpu90", "gpu_grouped", "gpu_conv", "gpu_multi"):
    if str(_TESTS / _suite) not in sys.path:  # the suites' helpers are plain modules
        sys.path.insert(0, str(_TESTS / _suite))

from gpu_seeding import seeded_fixtures  # noqa: E402

SEED = int(os.environ.get("TILECRAFT_GPU_TEST_SEED") or random.SystemRandom().randrange(2 ** 31))
OPERANDS = "cuda:1"  # where the items' tensors live while cuda:0 is current
_REPORT = []


def _reason():
    try:
        import torch
    except Exception as error:  # noqa: BLE001
        return f"torch is not importable ({type(error).__name__}: {error})"
    try:
        import tilecraft
    except Exception as error:  # noqa: BLE001
        return f"tilecraft is not importable ({type(error).__name__}: {error})"
    reason = tilecraft._core.cuda_device_available()
    if reason is not None:
        return reason
    count = torch.cuda.device_count()
    if count < 2:
        return f"needs two CUDA devices, this machine has {count}"
    names = {torch.cuda.get_device_name(i) for i in (0, 1)}
    capabilities = {torch.cuda.get_device_capability(i) for i in (0, 1)}
    if capabilities != {(9, 0)}:
        return f"needs two compute capability 9.0 devices (SM90 kernels), got {sorted(names)}"
    return None


REASON = _reason()


def _in_this_dir(item):
    return Path(str(getattr(item, "path", None) or item.fspath)).resolve().parent == Path(
        __file__).resolve().parent


def pytest_configure(config):
    config.addinivalue_line("markers", "multigpu: needs two CUDA devices")
    config.addinivalue_line("markers", "sanitizer: the two-GPU compute-sanitizer subset")
    # test_gpu_grouped (imported for its case runner) marks its own items with this.
    config.addinivalue_line("markers", "grouped_kernels(*keys): grouped kernels an item uses")


def pytest_report_header(config):
    return (f"tilecraft two-GPU suite: {REASON or 'two devices usable'}; seed {SEED} "
            f"(TILECRAFT_GPU_TEST_SEED={SEED})")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _in_this_dir(item):
            item.add_marker(pytest.mark.multigpu)
            if REASON is not None:
                item.add_marker(pytest.mark.skip(reason=f"tilecraft two-GPU suite: {REASON}"))


def pytest_terminal_summary(terminalreporter):
    for line in _REPORT:
        terminalreporter.write_line(line)


rng, gen, seed_note = seeded_fixtures(SEED, device=OPERANDS)


@pytest.fixture(autouse=True)
def operands_on_the_second_device(request, monkeypatch):
    """The suites' runners make data on cuda:1 while cuda:0 is current; afterwards cuda:0 must
    still be current (for torch and for the CUDA runtime tilecraft sets devices through)."""
    if not _in_this_dir(request.node):
        yield
        return
    import conv_case
    import gpu_helpers
    import sm90_data
    import torch

    for module in (gpu_helpers, sm90_data, conv_case):
        monkeypatch.setattr(module, "DEVICE", OPERANDS)
    torch.cuda.set_device(0)
    yield
    assert torch.cuda.current_device() == 0, "an item left another device current"


@pytest.fixture(scope="session")
def kernels():
    """Every operation of the items (all families) in one add_module, and the first-ranked
    kernels of their arguments-first calls in one api.compile_kernels."""
    import multi_kernels

    compiled = multi_kernels.compile_all(OPERANDS)
    _REPORT.append(compiled.report)
    sys.stderr.write("\n" + compiled.report + "\n")
    return compiled
