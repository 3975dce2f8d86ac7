"""SM90 GPU numerical suite (harness: tests/python/gpu_harness.py): skips with a printed reason
unless a compute capability 9.0 device, torch (with float8 dtypes) and tilecraft are usable;
seeds the random data per run (TILECRAFT_GPU_TEST_SEED); compiles every kernel the selected
tests use in ONE add_module call (session fixture ``ops``).

Markers: ``sanitizer`` (the compute-sanitizer subset), ``fp8`` (items using fp8 kernels, set
automatically), ``sm90_kernels(*keys)`` (kernels a test uses besides its parameters).
"""

import pytest

from gpu_harness import Suite, on_path

on_path(__file__)
from sm90_build import Operations  # noqa: E402
from sm90_kernels import KERNELS  # noqa: E402


def _fp8(keys):
    return ["fp8"] if any(KERNELS[k].fp8_in or KERNELS[k].fp8_out for k in keys) else []


SUITE = Suite(__file__, "tilecraft SM90 GPU suite", sm90=True, float8=True,
              is_key=KERNELS.__contains__, key_marker="sm90_kernels", item_marks=_fp8,
              header=f"{len(KERNELS)} kernels in the table",
              markers=["fp8: uses an SM90 kernel with fp8 operands or output",
                       "sm90_kernels(*keys): SM90 kernels a test needs compiled"])
globals().update(SUITE.hooks())


@pytest.fixture(scope="session")
def ops():
    """Every SM90 operation the selected tests use, compiled together (one nvcc job each)."""
    return SUITE.compile(Operations())
