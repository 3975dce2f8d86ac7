"""tilecraft's torch ops, layers, CUDA graphs and verify mode on a GPU (harness:
tests/python/gpu_harness.py): skipped, with the reason, unless a compute capability 9.0 device,
torch and tilecraft are usable."""

from gpu_harness import Suite

SUITE = Suite(__file__, "tilecraft torch ops suite", sm90=True, marker=None)
globals().update(SUITE.hooks())
