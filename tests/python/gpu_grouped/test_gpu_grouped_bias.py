"""SM90 grouped kernels that add a bias per problem (a bias per expert), fused with an
activation: the mixture-of-experts form through tilecraft.api and tilecraft.grouped_gemm, and the
list form through the seed's GemmOperationGrouped. Outputs are poisoned first and every element
is checked against float64 (the bound of test_gpu_grouped_api.assert_close_bf16)."""

import pytest

import sm90_data
from test_gpu_grouped import _torch, poisoned, still_poisoned
from test_gpu_grouped_api import assert_close_bf16, moe_arguments, moe_problem

pytestmark = pytest.mark.sm90


def bias_of(gen, p, dtype="bf16"):
    torch = _torch()
    G, N = len(p.ends), p.out.shape[1]
    values = torch.rand(G, N, generator=gen, device="cuda", dtype=torch.float32) * 2 - 1
    return values.to(getattr(torch, {"bf16": "bfloat16", "f16": "float16", "f32": "float32"}[dtype]))


def check_moe_bias(p, out, bias, what, activation=None):
    for g, (s, e) in enumerate(zip(p.starts, p.ends)):
        if e == s:
            continue
        rows = e - s
        term = sm90_data.to64(bias[g]).expand(rows, -1)
        assert_close_bf16(out[s:e], sm90_data.to64(p.x[s:e]), sm90_data.to64(p.b[g]), 1.0, term,
                          f"{what}: group {g} (rows {s}:{e})", activation)
    assert still_poisoned(out[p.ends[-1]:]), f"{what}: rows past the last group were written"


@pytest.mark.parametrize("orientation,activation,offsets_on",
                         [("col", "relu", "cuda"), ("row", None, "cpu")])
def test_moe_bias_per_expert(gen, seed_note, orientation, activation, offsets_on):
    """api.GroupedGemmArguments with a (groups, N) bias: get_kernels lists only kernels that
    fuse it, the first runs it; the same problem through tilecraft.grouped_gemm."""
    import tilecraft
    from tilecraft import api

    p = moe_problem(gen, orientation, offsets_on)
    bias = bias_of(gen, p)
    args = moe_arguments(p, bias=bias, activation=activation)
    kernels = api.get_kernels(args)
    assert kernels, "no grouped kernel fuses a per-expert bias"
    for kernel in kernels[:20]:
        assert kernel.metadata.epilogue.bias.name == "per_column", kernel.metadata.kernel_name
    kernels[0].run(args)
    _torch().cuda.synchronize()
    check_moe_bias(p, p.out, bias, f"api {orientation} {activation} {seed_note}", activation)

    out = poisoned(tuple(p.out.shape), "bf16")
    tilecraft.grouped_gemm(p.x, p.b, offsets=p.offsets, out=out, bias=bias, activation=activation)
    _torch().cuda.synchronize()
    check_moe_bias(p, out, bias, f"grouped_gemm {orientation} {activation} {seed_note}",
                   activation)

    plain = moe_arguments(p)
    assert not kernels[0].supports(plain), "a bias kernel claims arguments without a bias"
    wrong = bias[:, :-8].contiguous()
    with pytest.raises(ValueError, match=r"bias"):
        moe_arguments(p, bias=wrong)
    assert still_poisoned(p.out[p.ends[-1]:])


def test_seed_surface_bias_and_c(gen, seed_note):
    """GemmOperationGrouped(90, ...) with LinearCombinationGeneric(gelu, bias='column'), lists of
    tensors with C and beta != 0, one bias vector per problem; a missing or short bias is refused
    naming the problem, and nothing is launched."""
    import tilecraft as cutlass
    from tilecraft import (GemmGroupedArguments, GemmOperationGrouped, LinearCombinationGeneric,
                           MathInstruction, MathOperation, SchedulerMode, TensorDescription,
                           TileDescription, gelu)

    torch = _torch()
    math = MathInstruction([64, 128, 16], cutlass.bfloat16, cutlass.bfloat16, cutlass.float32,
                           cutlass.OpClass.TensorOp, MathOperation.multiply_add)
    tile = TileDescription([128, 128, 64], 0, [1, 1, 1], math, cluster_shape=[2, 1, 1])
    A = TensorDescription(cutlass.bfloat16, cutlass.RowMajor, 8)
    B = TensorDescription(cutlass.bfloat16, cutlass.ColumnMajor, 8)
    C = TensorDescription(cutlass.bfloat16, cutlass.RowMajor, 8)
    epilogue = LinearCombinationGeneric(gelu(cutlass.float32), cutlass.bfloat16, 8,
                                        cutlass.float32, cutlass.float32, bias="column")
    op = GemmOperationGrouped(90, tile, A, B, C, epilogue, cutlass.IdentitySwizzle1,
                              SchedulerMode.Device)
    cutlass.compiler.add_module([op])
    sizes = [(96, 136, 64), (0, 64, 64), (1, 256, 128), (300, 72, 200)]

    def rand(*shape):
        return (torch.rand(*shape, generator=gen, device="cuda") * 2 - 1).bfloat16()

    As = [rand(m, k) for m, n, k in sizes]
    Bs = [rand(n, k).t() for m, n, k in sizes]
    Cs = [rand(m, n) for m, n, k in sizes]
    bias = [rand(n) for m, n, k in sizes]
    Ds = [poisoned((m, n), "bf16") for m, n, k in sizes]
    coords = [cutlass.gemm.GemmCoord(*s) for s in sizes]
    alpha, beta = 0.75, 0.5
    args = GemmGroupedArguments(op, coords, As, Bs, Cs, Ds, output_op=op.epilogue_type(alpha, beta),
                                bias=bias)
    op.run(args)
    args.sync()
    for g, (m, n, k) in enumerate(sizes):
        if m == 0:
            continue
        term = beta * sm90_data.to64(Cs[g]) + sm90_data.to64(bias[g]).expand(m, -1)
        assert_close_bf16(Ds[g], sm90_data.to64(As[g]), sm90_data.to64(Bs[g]), alpha, term,
                          f"seed surface bias+gelu problem {g} {seed_note}", "gelu")

    fresh = [poisoned((m, n), "bf16") for m, n, k in sizes]
    with pytest.raises(ValueError, match=r"bias: .* adds a bias of N values per problem"):
        GemmGroupedArguments(op, coords, As, Bs, Cs, fresh, output_op=op.epilogue_type(1.0, 0.5))
    short = list(bias)
    short[3] = bias[3][:64]
    with pytest.raises(ValueError, match=r"bias\[3\]: expected a contiguous vector of N=72"):
        GemmGroupedArguments(op, coords, As, Bs, Cs, fresh, output_op=op.epilogue_type(1.0, 0.5),
                             bias=short)
    assert all(still_poisoned(d) for d in fresh), "a refused launch wrote an output"
