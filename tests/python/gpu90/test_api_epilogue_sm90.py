"""tilecraft.api epilogue options on an SM90 GPU: alpha / beta / C on plain kernels, a fused
bias + activation on SM90 and SM80 kernels derived from the arguments, and fp8 per-tensor scales
(a float and a device tensor). Random data, outputs poisoned first, every element against a
float64 reference."""

import math

import pytest

pytestmark = pytest.mark.gpu

M, N, K = 264, 520, 192


def _tn(gen, dtype="bfloat16"):
    import torch

    A = torch.randn(M, K, device="cuda", generator=gen)
    W = torch.randn(N, K, device="cuda", generator=gen)
    if dtype.startswith("float8"):
        return A.to(getattr(torch, dtype)), W.to(getattr(torch, dtype)).t()
    return A.to(getattr(torch, dtype)), W.to(getattr(torch, dtype)).t()


def _poisoned():
    import torch

    return torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)


def _check(out, ref, note):
    err = (out.double() - ref).abs()
    bound = 2 ** -7 * ref.abs() + 1e-2 * ref.abs().mean() + 1e-6
    bad = ~(err <= bound)
    assert not bad.any(), f"{note}: {int(bad.sum())} of {bad.numel()} elements off"


def _gelu(x):
    import torch

    return 0.5 * x * (1.0 + torch.special.erf(x / math.sqrt(2.0)))


def _cases(gen):
    """(name, arguments, reference, metadata filter) for each epilogue under test."""
    import torch

    import tilecraft.api as cutlass_api

    E = cutlass_api.arguments.EpilogueArguments
    GA = cutlass_api.arguments.GemmArguments
    cases = []
    A, B = _tn(gen)
    acc = A.double() @ B.double()
    C = torch.randn(M, N, device="cuda", generator=gen).to(torch.bfloat16)
    cases.append(("alpha_beta_c", GA(A, B, _poisoned(), torch.float32,
                                     E(alpha=0.5, beta=-2.0, C=C)),
                  0.5 * acc - 2.0 * C.double(), lambda m: m.min_cc == 90))
    bias = torch.randn(N, device="cuda", generator=gen).to(torch.bfloat16)
    cases.append(("bias_gelu_sm90", GA(A, B, _poisoned(), torch.float32,
                                       E(activation="gelu", bias=bias)),
                  _gelu(acc + bias.double()), lambda m: True))
    cases.append(("leaky_relu_sm80", GA(A, B, _poisoned(), torch.float32,
                                        E(alpha=2.0, activation="leaky_relu",
                                          activation_args=(0.25,))),
                  torch.where(2.0 * acc > 0, 2.0 * acc, 0.5 * acc), lambda m: m.min_cc == 80))
    A8, B8 = _tn(gen, "float8_e4m3fn")
    scale_b = torch.full((1,), 2.0, device="cuda", dtype=torch.float32)
    acc8 = A8.float().double() @ B8.float().double()
    cases.append(("fp8_scales", GA(A8, B8, _poisoned(), torch.float32,
                                   E(scale_a=0.5, scale_b=scale_b)),
                  acc8, lambda m: True))
    return cases


def test_epilogue_options_run_correctly(gen):
    import torch

    import tilecraft.api as cutlass_api

    chosen = []
    for name, args, ref, keep in _cases(gen):
        kernels = cutlass_api.get_kernels(args, metadata_filter=keep)
        assert kernels, f"{name}: no kernel listed"
        assert kernels[0].supports(args), kernels[0].supports(args).error
        chosen.append((name, args, ref, kernels[0]))
    cutlass_api.compile_kernels([kernel for *_, kernel in chosen])
    for name, args, ref, kernel in chosen:
        kernel.run(args)
        torch.cuda.synchronize()
        _check(args.out, ref, f"{name} ({kernel.metadata.kernel_name})")


def test_plain_kernel_refuses_a_fused_epilogue_without_writing(gen):
    import torch

    import tilecraft.api as cutlass_api

    A, B = _tn(gen)
    out = _poisoned()
    plain = cutlass_api.arguments.GemmArguments(A, B, out, torch.float32)
    relu = cutlass_api.arguments.GemmArguments(
        A, B, out, torch.float32, cutlass_api.arguments.EpilogueArguments(activation="relu"))
    kernel = cutlass_api.get_kernels(plain)[0]
    status = kernel.supports(relu)
    assert status.error == "Epilogue is unsupported: Expected activation identity, got relu"
    with pytest.raises(ValueError, match="Expected activation identity, got relu"):
        kernel.run(relu)
    torch.cuda.synchronize()
    assert torch.isnan(out).all(), "a refused run wrote to out"
