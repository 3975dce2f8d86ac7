"""Kernel variants get_kernels derives for the arguments, each run and checked element by element
against float64 with the output poisoned first: fp8 GEMMs with f32 promotion at longer promotion
intervals (design.mma_promotion_interval; the error stays that of the default interval within a
factor), and SM90 tiles fitted to an N no tile of the space divides."""

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
    # The best-ranked SM90 design offered at all three intervals (CUTLASS's default is 0).
    designs = {}
    for kernel in api.get_kernels(args):
        design = kernel.metadata.design
        name = kernel.metadata.kernel_name.replace(f"_promo{design.mma_promotion_interval}", "")
        if kernel.metadata.min_cc == 90:
            designs.setdefault(name, {}).setdefault(design.mma_promotion_interval, kernel)
    complete = [d for d in designs.values() if set(d) == {0, 8, 16}]
    assert complete, f"no design at intervals 0, 8 and 16: {sorted(map(sorted, designs.values()))}"
    by_interval = complete[0]
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


def test_tiles_fitted_to_n_match_float64_in_every_element():
    from tilecraft import api
    from tilecraft.api.arguments import GemmArguments

    g = torch.Generator(device="cuda").manual_seed(29)
    m, n, k = 4000, 1000, 520
    A = torch.rand(m, k, generator=g, device="cuda").sub(0.5).bfloat16()
    B = torch.rand(n, k, generator=g, device="cuda").sub(0.5).bfloat16().t()
    out = torch.empty(m, n, dtype=torch.bfloat16, device="cuda")
    args = GemmArguments(A, B, out, torch.float32)
    space_n = {16, 32, 64, 128, 192, 256}
    fitted, widths = [], set()
    for kernel in api.get_kernels(args):
        d = kernel.metadata.design
        if kernel.metadata.min_cc == 90 and d.tile_shape[1] not in space_n \
                and d.tile_shape[1] not in widths:
            widths.add(d.tile_shape[1])
            fitted.append(kernel)
    assert fitted, "no fitted tile offered"
    want = A.double() @ B.double()
    bound = 2 ** -8 * want.abs() + 1e-5 * (A.double().abs() @ B.double().abs()) + 1e-6
    for kernel in fitted[:2]:
        out.fill_(float("nan"))
        kernel.run(args)
        torch.cuda.synchronize()
        name = kernel.metadata.kernel_name
        assert not torch.isnan(out).any(), f"{name}: elements never written"
        bad = (out.double() - want).abs() > bound
        assert not bad.any(), (f"{name}: {int(bad.sum())} elements off, first at "
                               f"{tuple(bad.nonzero()[0].tolist())}")
