"""Compiles, in one parallel batch, the first-ranked kernels that test_gpu_conv_api.py's calls
pick one at a time (each of its tests would otherwise wait for its own nvcc run in turn).

    python tests/python/gpu_conv/prewarm_api_kernels.py

Not a test: it checks nothing and only fills the kernel cache. Needs a GPU (the api's
arguments take CUDA tensors) and uses the shapes of test_gpu_conv_api.py; a pick it misses is
compiled by the test itself.
"""

import time

import torch

import tilecraft.api as api
from tilecraft.api.arguments import EpilogueArguments, GemmArguments


def cl(shape, dtype):
    t = torch.zeros(shape, dtype=dtype, device="cuda")
    if len(shape) < 4:  # a bias
        return t
    fmt = torch.channels_last_3d if len(shape) == 5 else torch.channels_last
    return t.contiguous(memory_format=fmt)


def conv_args():
    f16, bf16, f32 = torch.float16, torch.bfloat16, torch.float32
    out = []
    for dtype in (f16, bf16):  # test_conv2d_one_call
        for activation in (None, "relu"):
            out.append(api.Conv2dArguments(
                cl((4, 64, 17, 15), dtype), cl((72, 64, 3, 3), dtype), cl((4, 72, 9, 8), dtype),
                f32, stride=2, padding=1,
                epilogue=EpilogueArguments(activation=activation, bias=cl((72,), dtype))))
    x, w, dy = cl((2, 48, 12, 10), f16), cl((40, 48, 3, 3), f16), cl((2, 40, 12, 10), f16)
    out += [api.Conv2dArguments(x, w, cl((2, 40, 12, 10), f16), f32, padding=1),
            api.Conv2dArguments(dy, w, cl((2, 48, 12, 10), f16), f32, kind="dgrad", padding=1),
            api.Conv2dArguments(dy, x, cl((40, 48, 3, 3), f16), f32, kind="wgrad", padding=1)]
    for name, groups, c, k in (("float16", 4, 128, 256), ("float16", 8, 64, 64),
                               ("bfloat16", 2, 96, 64), ("float32", 32, 32, 32),
                               ("float32", 6, 48, 48)):
        dtype = getattr(torch, name)
        out.append(api.Conv2dArguments(
            cl((2, c, 13, 11), dtype), cl((k, c // groups, 3, 3), dtype), cl((2, k, 7, 6), dtype),
            f32, stride=2, padding=1, groups=groups,
            epilogue=EpilogueArguments(bias=cl((k,), dtype))))
    for dtype in (f16, bf16):  # test_conv3d_one_call
        out.append(api.Conv3dArguments(
            cl((2, 24, 7, 9, 8), dtype), cl((40, 24, 3, 3, 3), dtype),
            cl((2, 40, 4, 5, 4), dtype), f32, stride=2, padding=1,
            epilogue=EpilogueArguments(activation="relu", bias=cl((40,), dtype))))
    x3, w3, dy3 = cl((2, 16, 6, 7, 5), f16), cl((24, 16, 3, 3, 3), f16), cl((2, 24, 6, 7, 5), f16)
    out += [api.Conv3dArguments(dy3, w3, cl((2, 16, 6, 7, 5), f16), f32, kind="dgrad", padding=1),
            api.Conv3dArguments(dy3, x3, cl((24, 16, 3, 3, 3), f16), f32, kind="wgrad",
                                padding=1)]
    return out


def gemm_args():  # test_conv2d_one_by_one_runs_as_a_gemm: x[N*H*W, C] @ w[K, C]^T
    a = torch.zeros(3 * 11 * 13, 64, dtype=torch.float16, device="cuda")
    b = torch.zeros(72, 64, dtype=torch.float16, device="cuda").t()
    d = torch.zeros(3 * 11 * 13, 72, dtype=torch.float16, device="cuda")
    bias = torch.zeros(72, dtype=torch.float16, device="cuda")
    return [GemmArguments(a, b, d, torch.float32,
                              EpilogueArguments(activation=activation, bias=bias))
            for activation in (None, "relu")]


def main():
    picks = {}
    for args in conv_args() + gemm_args():
        kernels = api.get_kernels(args)
        if kernels:
            picks[kernels[0].metadata.kernel_name] = kernels[0]
    start = time.time()
    api.compile_kernels(list(picks.values()))
    print(f"prewarm: {len(picks)} first-ranked kernels compiled in {time.time() - start:.0f} s")


if __name__ == "__main__":
    main()
