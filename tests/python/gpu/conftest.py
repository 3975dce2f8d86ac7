"""SM80 GPU numerical suite (harness: tests/python/gpu_harness.py): skips with a printed reason
without a usable compute capability >= 8.0 device or torch; seeds the random data per run
(TILECRAFT_GPU_TEST_SEED); compiles every kernel the selected tests use in ONE add_module call
(session fixture ``ops``). Marker ``uses_kernels(*keys)``: kernels a test uses besides its
parameters."""

import pytest

from gpu_harness import Operations, Suite, on_path

on_path(__file__)
from gpu_helpers import build_operation  # noqa: E402
from gpu_kernels import KERNELS  # noqa: E402

SUITE = Suite(__file__, "tilecraft GPU suite", is_key=KERNELS.__contains__,
              key_marker="uses_kernels", header=f"{len(KERNELS)} kernels in the table",
              markers=["uses_kernels(*keys): kernels a test needs compiled"])
globals().update(SUITE.hooks())


@pytest.fixture(scope="session")
def ops():
    """Every operation the selected tests use, compiled together (one process per kernel)."""
    return SUITE.compile(Operations(lambda key: build_operation(KERNELS[key])))
