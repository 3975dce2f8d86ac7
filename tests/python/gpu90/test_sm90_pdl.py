"""Programmatic dependent launch (the SM90 default): chains of kernels on one stream with no
synchronization between them, where each launch reads what the launch before it wrote (ours or
torch's) and overwrites what the launch before it read. Every element of every link is checked
against a float64 reference built from the link's actual inputs, and the PDL chain must equal,
bit for bit, the same chain launched plainly."""

import pytest

pytestmark = pytest.mark.gpu

KEYS = ("bf16_rcr", "coop_streamk", "pp_64x128", "coop_128x256_c1x2")
LINKS = 6


def _chain(op, a0, bs, launch_with_pdl):
    """Runs len(bs) GEMMs back to back: link i reads link i-1's D as A, which torch halves in
    place right before the launch; right after each launch torch copies D, and each link's D is
    the buffer of link i-2, which the link before it read. Returns (A of each link, D of each
    link) as copies."""
    import torch

    import tilecraft as cutlass

    m, k = a0.shape
    n = bs[0].shape[1]
    assert n == k
    buffers = [torch.full((m, n), float("nan"), device="cuda", dtype=a0.dtype) for _ in range(2)]
    a = a0.clone()
    inputs, outputs = [], []
    for i, b in enumerate(bs):
        inputs.append(a.clone())
        a.mul_(0.5)  # torch writes A right before the launch that reads it (exactly: a half)
        d = buffers[i % 2]  # the D of link i-2, which torch read into its snapshot
        arguments = cutlass.GemmArguments(
            operation=op, problem_size=cutlass.gemm.GemmCoord(m, n, k), A=a, B=b, C=None, D=d,
            output_op=op.epilogue_type(1.0, 0.0), launch_with_pdl=launch_with_pdl)
        op.run(arguments)
        outputs.append(d.clone())  # torch reads D right after the launch that writes it
        a = d
    torch.cuda.synchronize()
    return [0.5 * x.double() for x in inputs], outputs


@pytest.mark.parametrize("key", KEYS)
def test_dependent_chain(ops, gen, seed_note, key):
    import torch

    from sm90_kernels import KERNELS

    spec = KERNELS[key]
    op = ops.get(key)
    m = 3 * spec.tile[0] * spec.cluster[0] + 17
    k = n = 2 * spec.tile[1] * spec.cluster[1] + 24
    a0 = torch.randn(m, k, device="cuda", generator=gen).to(torch.bfloat16)
    # Columns of B scaled by 1/sqrt(k) keep every link's values near 1.
    bs = [(torch.randn(k, n, device="cuda", generator=gen) / k ** 0.5).to(torch.bfloat16)
          .t().contiguous().t() for _ in range(LINKS)]
    results = {}
    for pdl in (True, False):
        inputs, outputs = _chain(op, a0, bs, pdl)
        for i, (a, b, d) in enumerate(zip(inputs, bs, outputs)):
            ref = a @ b.double()
            error = (d.double() - ref).abs()
            # bf16 rounding of D (2^-9 relative) with room for the f32 accumulation.
            bound = 2 ** -8 * ref.abs() + 1e-3 * ref.abs().mean()
            bad = ~(error <= bound)
            assert not bad.any(), (
                f"{key} launch_with_pdl={pdl} link {i} ({m}x{n}x{k}): {int(bad.sum())} of "
                f"{bad.numel()} elements off, first at {bad.nonzero()[:4].tolist()} {seed_note}")
        results[pdl] = outputs
    for i, (with_pdl, plain) in enumerate(zip(results[True], results[False])):
        same = with_pdl.view(torch.int16) == plain.view(torch.int16)
        assert bool(same.all()), (f"{key} link {i}: the PDL chain differs from the plain one in "
                                  f"{int((~same).sum())} elements {seed_note}")
