"""Not a tilecraft test: the reproducer of what made nanobind report leaked tilecraft objects at
the end of the SM90 suite's compute-sanitizer run (issue 10, defect 12). It imports no tilecraft.

Under compute-sanitizer, and only there, a function that calls another Python function which
launches CUDA work (a torch op) keeps its frame alive after it returns: something outside
Python holds the frame (gc finds no referrer), and with it the function's locals and, through
f_back, its callers'. The suite's helpers hold tilecraft operations and arguments in such
frames, so those outlive the session and nanobind counts them at exit. Without the sanitizer
nothing is retained (the GPU runs check that with TILECRAFT_TEST_CHECK_LIVE=1). Run:

    python -m pytest tests/python/gpu90/frame_retention_repro.py -s -q
    compute-sanitizer --tool memcheck python -m pytest tests/python/gpu90/frame_retention_repro.py -s -q

Seen on an H100 with torch 2.11+cu130, Python 3.12, CUDA 13.0 (2026-11-24): plain, every
variant freed; under compute-sanitizer, cuda_no_gen and lazy_import_return_call RETAINED.
"""
import gc, sys, weakref
import pytest

RESULTS = {}
refs = {}

class Sentinel:
    pass

def _torch():
    import torch
    return torch

def convert(x):
    torch = _torch()
    return x.to(torch.float16)

def v_lazy_import_return_call(gen):
    s = Sentinel(); refs["lazy_import_return_call"] = weakref.ref(s)
    torch = _torch()
    x = torch.rand((64, 64), generator=gen, device="cuda", dtype=torch.float64)
    return convert(x)

def v_toplevel_torch(gen):
    import torch
    s = Sentinel(); refs["toplevel_torch"] = weakref.ref(s)
    x = torch.rand((64, 64), generator=gen, device="cuda", dtype=torch.float64)
    return x.to(torch.float16)

def v_cpu_only(gen):
    s = Sentinel(); refs["cpu_only"] = weakref.ref(s)
    torch = _torch()
    return convert(torch.zeros(64, dtype=torch.float64))

def v_no_torch(gen):
    s = Sentinel(); refs["no_torch"] = weakref.ref(s)
    return sum(range(10))

def v_cuda_no_gen(gen):
    s = Sentinel(); refs["cuda_no_gen"] = weakref.ref(s)
    torch = _torch()
    return convert(torch.rand((64, 64), device="cuda", dtype=torch.float64))

@pytest.fixture
def gen():
    import torch
    g = torch.Generator(device="cuda")
    g.manual_seed(3)
    return g

@pytest.mark.parametrize("variant", [v_no_torch, v_cpu_only, v_cuda_no_gen, v_toplevel_torch, v_lazy_import_return_call])
def test_variant(variant, gen):
    for _ in range(3):
        variant(gen)

def test_zz_report():
    gc.collect()
    for name, ref in refs.items():
        print(f"VARIANT {name}: {'RETAINED' if ref() is not None else 'freed'}", file=sys.stderr)
