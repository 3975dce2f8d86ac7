"""Custom epilogue (epilogue graph / EVT) GPU suite: skips with a printed reason without a usable
device, torch (with float8 dtypes) or tilecraft; skips the SM90 items (ids ``sm90-...``) on a
device that is not compute capability 9.0; seeds the random data per run
(TILECRAFT_GPU_TEST_SEED, shared with the other GPU suites); compiles every operation the
selected items use in ONE compiler.add_module call (session fixture ``evt_ops``) and prints how
long it took at the end.

Markers: ``sanitizer`` (the compute-sanitizer subset), ``evt_ops(*keys)`` (op keys an item uses
besides its ``op_key`` parameter).
"""

import os
import random
import sys
from pathlib import Path

import pytest

_HERE = Path(__file__).resolve().parent
for _dir in (_HERE, _HERE.parent / "gpu"):
    if str(_dir) not in sys.path:  # evt_* helpers; gpu_seeding from the SM80 suite
        sys.path.insert(0, str(_dir))

from gpu_seeding import seeded_fixtures  # noqa: E402

SEED = int(os.environ.get("TILECRAFT_GPU_TEST_SEED") or random.SystemRandom().randrange(2 ** 31))
_STATE = {}
_USED_KEYS = set()
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
    if not hasattr(torch, "float8_e4m3fn"):
        return f"torch {torch.__version__} has no float8 dtypes (needs torch >= 2.1)", None
    capability = tilecraft._core.device_compute_capability()
    if capability < 80:
        return (f"the device has compute capability {capability}; the suite's kernels need "
                f">= 80", capability)
    return None, capability


def _state():
    if not _STATE:
        _STATE["reason"], _STATE["cc"] = _probe()
    return _STATE["reason"], _STATE["cc"]


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA GPU")
    config.addinivalue_line("markers", "sanitizer: small subset for compute-sanitizer")
    config.addinivalue_line("markers", "evt_ops(*keys): epilogue-graph operations an item uses")


def pytest_report_header(config):
    reason, cc = _state()
    if reason:
        status = f"SKIPPED: {reason}"
    elif cc != 90:
        status = f"running the SM80 items (compute capability {cc}; SM90 items skipped)"
    else:
        status = "running"
    return [f"tilecraft EVT (epilogue graph) suite: {status}; seed {SEED} "
            f"(TILECRAFT_GPU_TEST_SEED={SEED})"]


def _in_this_dir(item):
    path = getattr(item, "path", None) or getattr(item, "fspath", None)
    try:
        return Path(str(path)).resolve().is_relative_to(_HERE)
    except (TypeError, ValueError, OSError):
        return False


def op_keys_of(item):
    """The op keys an item compiles: its ``op_key`` parameter and its evt_ops marker."""
    keys = set()
    callspec = getattr(item, "callspec", None)
    if callspec and "op_key" in callspec.params:
        keys.add(callspec.params["op_key"])
    for marker in item.iter_markers("evt_ops"):
        keys.update(marker.args)
    return keys


def _needs_sm90(item):
    keys = op_keys_of(item)
    callspec = getattr(item, "callspec", None)
    if callspec:
        keys.update(v for v in callspec.params.values() if isinstance(v, str))
    return any(k.startswith("sm90") for k in keys)


def pytest_collection_modifyitems(config, items):
    reason, cc = _state()
    for item in items:
        if not _in_this_dir(item):
            continue
        item.add_marker(pytest.mark.gpu)
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"tilecraft EVT suite: {reason}"))
        elif _needs_sm90(item) and cc != 90:
            item.add_marker(pytest.mark.skip(
                reason=f"tilecraft EVT suite: arch=90 kernels are built for sm_90a, which runs "
                       f"only on compute capability 9.0; this device has {cc}"))


def pytest_collection_finish(session):
    # After deselection (-k, -m) and without skipped items: compile only what will run.
    for item in session.items:
        if _in_this_dir(item) and item.get_closest_marker("skip") is None:
            _USED_KEYS.update(op_keys_of(item))


@pytest.fixture(scope="session")
def evt_ops():
    """Every operation the selected items use, compiled in ONE add_module call."""
    from evt_kernels import EvtOps

    operations = EvtOps()
    keys = sorted(_USED_KEYS)
    operations.compile(keys)
    count = {arch: sum(k.startswith(arch) for k in operations.compiled_keys)
             for arch in ("sm90", "sm80")}
    report = (f"tilecraft EVT suite: add_module of {len(operations.compiled_keys)} kernels "
              f"({count['sm90']} SM90, {count['sm80']} SM80) took "
              f"{operations.compile_seconds:.1f} s")
    from evt_kernels import SM80_PENDING

    pending = [k for k, e in operations.build_errors.items() if SM80_PENDING in e]
    refused = {k: e for k, e in operations.build_errors.items() if k not in pending}
    if pending:
        report += (f"; {len(pending)} SM80 operations skipped (arch=80 kernels cannot take an "
                   f"epilogue graph yet)")
    if refused:
        report += f"; {len(refused)} descriptions refused: " + "; ".join(
            f"{k} ({e})" for k, e in refused.items())
    if operations.compile_error:
        report += f"; add_module raised: {operations.compile_error}"
    _REPORT.append(report)
    sys.stderr.write("\n" + report + "\n")
    return operations


def pytest_terminal_summary(terminalreporter):
    for line in _REPORT:
        terminalreporter.write_line(line)
    if _REPORT:
        terminalreporter.write_line(f"tilecraft EVT suite: seed {SEED}")


rng, gen, seed_note = seeded_fixtures(SEED)
