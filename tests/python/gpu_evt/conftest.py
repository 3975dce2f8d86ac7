"""Custom epilogue (epilogue graph / EVT) GPU suite (harness: tests/python/gpu_harness.py):
skips with a printed reason without a usable device, torch (with float8 dtypes) or tilecraft;
skips the SM90 items (ids ``sm90-...``) on a device that is not compute capability 9.0; seeds
the random data per run (TILECRAFT_GPU_TEST_SEED); compiles every operation the selected items
use in ONE compiler.add_module call (session fixture ``evt_ops``) and prints how long it took at
the end.

Markers: ``sanitizer`` (the compute-sanitizer subset), ``evt_ops(*keys)`` (op keys an item uses
besides its ``op_key`` parameter).
"""

import pytest

from gpu_harness import Suite, on_path

on_path(__file__, "gpu")

SUITE = Suite(__file__, "tilecraft EVT suite", float8=True, sm90_prefix="sm90",
              is_key=lambda key: True, key_params=("op_key",), key_marker="evt_ops",
              markers=["evt_ops(*keys): epilogue-graph operations an item uses"])
globals().update(SUITE.hooks())


@pytest.fixture(scope="session")
def evt_ops():
    """Every operation the selected items use, compiled in ONE add_module call."""
    from evt_kernels import SM80_PENDING, EvtOps

    operations = EvtOps()
    operations.compile(sorted(SUITE.used_keys()))
    count = {arch: sum(k.startswith(arch) for k in operations.compiled_keys)
             for arch in ("sm90", "sm80")}
    report = (f"tilecraft EVT suite: add_module of {len(operations.compiled_keys)} kernels "
              f"({count['sm90']} SM90, {count['sm80']} SM80) took "
              f"{operations.compile_seconds:.1f} s")
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
    SUITE.report(report)
    return operations


@pytest.fixture
def suite_report():
    """A line for the end of the run (measured figures an item reports)."""
    return SUITE.report
