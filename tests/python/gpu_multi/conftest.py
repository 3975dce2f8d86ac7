"""Two-GPU suite (issue 16; harness: tests/python/gpu_harness.py): skips every item, with the
reason printed, unless two compute capability 9.0 CUDA devices are usable. Items carry the
``multigpu`` marker (``pytest -m multigpu``).

Every item runs with cuda:0 current and its tensors on cuda:1 (or on both, where it says so):
the GEMM, grouped GEMM and convolution suites' own case runners put their data on
``DEVICE = "cuda:1"`` here, and each item checks afterwards that cuda:0 is still current.
Every operation and first-ranked kernel the items use is compiled once, in one ``add_module``
and one ``api.compile_kernels`` (fixture ``kernels``).

The one-call ops run with TILECRAFT_TUNING=off unless the environment says otherwise (the
first-ranked kernels above serve; tuning is tested in tests/python/gpu_ops).

Reproduce a run with TILECRAFT_GPU_TEST_SEED=<the seed printed in the header>.
"""

import os

import pytest

from gpu_harness import Suite, on_path

on_path(__file__, "gpu", "gpu90", "gpu_grouped", "gpu_conv")

OPERANDS = "cuda:1"  # where the items' tensors live while cuda:0 is current
SUITE = Suite(__file__, "tilecraft two-GPU suite", sm90=True, devices=2, marker="multigpu",
              device=OPERANDS,  # test_gpu_grouped, imported for its case runner, marks with:
              markers=["grouped_kernels(*keys): grouped kernels an item uses"])
globals().update(SUITE.hooks())
os.environ.setdefault("TILECRAFT_TUNING", "off")


@pytest.fixture(autouse=True)
def operands_on_the_second_device(request, monkeypatch):
    """The suites' runners make data on cuda:1 while cuda:0 is current; afterwards cuda:0 must
    still be current (for torch and for the CUDA runtime tilecraft sets devices through)."""
    if not SUITE.owns(request.node):
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
    SUITE.report(compiled.report)
    return compiled
