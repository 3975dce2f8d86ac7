"""fp8 GEMMs with f32 promotion at longer promotion intervals (design.mma_promotion_interval):
each interval get_kernels offers, on one tile, run and checked element by element against float64
(the output poisoned first); the error stays that of the default interval's kernel within a
factor, and far from fast accumulation's."""

import pytest

torch = pytest.importorskip("torch")


def test_longer_promotion_intervals_match_float64_in_every_element():
    from tilecraft import api
    from tilecraft.api.arguments import EpilogueArguments, GemmArguments

    g = torch.Generator(device="cuda").manual_seed(23)
    m, n, k = 256, 384, 4096
    A = (torch.rand(m, k, generator=g, device="cuda") * 2 - 1).to(torch.float8_e4m3fn)
    B = (torch.rand(n, k, generator=g, device="cuda") * 2 - 1).to(torch.float8_e4m3fn).t()
    scale = torch.tensor([0.5], device="cuda")
    out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    args = GemmArguments(A, B, out, torch.float32, EpilogueArguments(scale_a=scale,
                                                                     scale_b=scale))
    want = (A.double() @ B.double()) * 0.25
    magnitude = (A.double().abs() @ B.double().abs()) * 0.25
    by_interval, base = {}, None
    for kernel in api.get_kernels(args):
        design = kernel.metadata.design
        name = kernel.metadata.kernel_name.replace(f"_promo{design.mma_promotion_interval}", "")
        if base in (None, name) and design.arch == 90:
            base = name
            by_interval.setdefault(design.mma_promotion_interval, kernel)
    assert set(by_interval) == {0, 8, 16}, sorted(by_interval)
    errors = {}
    for interval, kernel in sorted(by_interval.items()):
        out.fill_(float("nan"))
        kernel.run(args)
        torch.cuda.synchronize()
        assert not torch.isnan(out).any(), f"interval {interval}: elements never written"
        error = (out.double() - want).abs()
        # bf16 output rounding, and the accumulation's within the fast bound the tuner uses.
        bad = error > 2 ** -8 * want.abs() + 2 ** -10 * magnitude / k ** 0.5 * 16 + 1e-6
        assert not bad.any(), (f"interval {interval}: {int(bad.sum())} elements off, first at "
                               f"{tuple(bad.nonzero()[0].tolist())}")
        errors[interval] = float(error.max())
    assert errors[16] <= 4 * errors[0] + 1e-3, errors
