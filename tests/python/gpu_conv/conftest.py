"""Convolution GPU suite (harness: tests/python/gpu_harness.py): skips with a printed reason
without a usable compute capability >= 8.0 device, torch or tilecraft; seeds the random data per
run (TILECRAFT_GPU_TEST_SEED); compiles every kernel the selected items use in ONE
``compiler.add_module`` (session fixture ``ops``).

The float64 reference's last steps and the element-wise checks are imported from the SM80 GEMM
suite (tests/python/gpu/gpu_check.py), which this file puts on sys.path.

The one-call ops run with TILECRAFT_TUNING=off unless the environment says otherwise: this suite
checks kernels, and background tuning of every new shape would only add compiles to it (the
tuning of the family is tested in tests/python/gpu_ops/test_family_tuning_gpu.py).

Markers: ``sanitizer`` (the compute-sanitizer subset), ``conv_kernels(*keys)`` (kernel keys an
item uses besides its parameters).
"""

import os

import pytest

from gpu_harness import Operations, Suite, on_path

on_path(__file__, "gpu", "gpu_evt")
from conv_kernels import KERNELS  # noqa: E402

SUITE = Suite(__file__, "tilecraft convolution suite", is_key=KERNELS.__contains__,
              key_marker="conv_kernels", header=f"{len(KERNELS)} kernels in the table",
              markers=["conv_kernels(*keys): conv kernels a test needs compiled"])
globals().update(SUITE.hooks())
os.environ.setdefault("TILECRAFT_TUNING", "off")


@pytest.fixture(scope="session")
def ops():
    from conv_case import build_operation

    return SUITE.compile(Operations(lambda key: build_operation(KERNELS[key])))
