"""Grouped GEMM GPU suite (harness: tests/python/gpu_harness.py): skips with a printed reason
without a usable device, torch or tilecraft; skips the SM90 items (kernel keys ``g90_*`` and the
``sm90`` marker) on a device that is not compute capability 9.0; seeds the random data per run
(TILECRAFT_GPU_TEST_SEED, shared with the other GPU suites).

The kernel table, the operations and the checks live in test_gpu_grouped.py (its module-scope
fixture ``ops`` compiles every operation the selected items use in ONE compiler.add_module call);
the float64 reference's last steps and the element-wise tolerances are imported from the SM80
and SM90 suites (tests/python/gpu/gpu_check.py, tests/python/gpu90/sm90_check.py), which this
file puts on sys.path.

The one-call ops run with TILECRAFT_TUNING=off unless the environment says otherwise: this suite
checks kernels, and background tuning of every new shape would only add compiles to it (the
tuning of the family is tested in tests/python/gpu_ops/test_family_tuning_gpu.py).

Markers: ``sanitizer`` (the compute-sanitizer subset), ``sm90`` (needs compute capability 9.0),
``grouped_kernels(*keys)`` (kernel keys an item uses besides its parameters).
"""

import os

import pytest

from gpu_harness import Suite, on_path

on_path(__file__, "gpu", "gpu90")

SUITE = Suite(__file__, "tilecraft grouped GEMM suite", sm90_prefix="g90_",
              is_key=lambda key: key.startswith(("g80_", "g90_")), key_marker="grouped_kernels",
              markers=["sm90: needs a compute capability 9.0 device",
                       "grouped_kernels(*keys): grouped kernels a test needs compiled"])
globals().update(SUITE.hooks())
os.environ.setdefault("TILECRAFT_TUNING", "off")


@pytest.fixture(scope="module")
def selected_kernel_keys(request):
    """The kernel keys the selected, not skipped items of the requesting module use."""
    return sorted(SUITE.used_keys(request.module.__file__))


@pytest.fixture(scope="session")
def grouped_report():
    """Lines (compile times, rejected descriptions) printed at the end of the run."""
    return SUITE.reports
