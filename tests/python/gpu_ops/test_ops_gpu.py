"""tilecraft.gemm and plans on a GPU: every dtype the kernels support, checked element by
element against float64 on fresh random data with the output poisoned first; tuning that stores
a winner a new process uses without compiling; a family kernel that serves a new shape at once
while its own candidates tune; bad input that launches nothing."""

import os
import subprocess
import sys
import textwrap

import pytest

import tilecraft
from tilecraft import profiling

torch = pytest.importorskip("torch")

# (dtype, batch, M, N, K, epilogue): shapes that are not the usual powers of two.
CASES = [
    ("bf16", 1, 384, 520, 264, "none"),
    ("f16", 3, 128, 264, 72, "none"),
    ("tf32", 1, 256, 200, 136, "none"),
    ("f64", 1, 100, 90, 70, "none"),
    ("int8", 1, 256, 512, 128, "none"),
    ("e4m3", 1, 256, 384, 256, "none"),
    ("e4m3-fast", 1, 256, 384, 256, "none"),
    ("bf16", 1, 192, 256, 128, "bias_gelu"),
    # Odd extents (rows of an odd number of elements): what torch.matmul runs, we run.
    ("f16", 1, 1023, 1023, 1023, "none"),
    ("bf16", 2, 77, 301, 513, "none"),
    ("f16", 1, 1, 3, 5, "none"),
]
TOLERANCE = {"bf16": 2e-2, "f16": 4e-3, "tf32": 4e-3, "f64": 1e-12, "int8": 0.0,
             "e4m3": 2e-2, "e4m3-fast": 2e-2}


def problem_of(case):
    dtype, batch, m, n, k, epilogue = case
    return profiling.Problem(m, n, k, batch, dtype, epilogue)


@pytest.fixture(scope="module", autouse=True)
def first_picks_compiled():
    """The ranked first pick of every case, compiled at once (tuning off serves it)."""
    profiling.precompile([problem_of(c) for c in CASES], max_candidates=1)


def poisoned(problem, A, B):
    out = profiling.output(problem, A, B)
    if out.dtype.is_floating_point:
        out.fill_(float("nan"))
    else:
        out.fill_(-12345)
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}x{c[2]}x{c[3]}x{c[4]}-{c[5]}")
def test_gemm_matches_float64_in_every_element(case):
    problem = problem_of(case)
    A, B, extra = profiling.operands(problem)
    out = poisoned(problem, A, B)
    got = tilecraft.gemm(A, B, out, tuning="off", **profiling.gemm_kwargs(problem, extra))
    assert got is out
    torch.cuda.synchronize()
    want = profiling.reference(problem, A, B, extra)
    assert not torch.isnan(out.double()).any(), "elements left unwritten"
    assert (out != -12345).all() if not out.dtype.is_floating_point else True
    scale = want.abs().max().item()
    error = (out.double() - want).abs()
    tolerance = TOLERANCE[problem.dtype] * scale + (1e-3 if problem.dtype == "f64" else 0)
    bad = int((error > tolerance).sum())
    assert bad == 0, f"{bad} of {out.numel()} elements off (max error {error.max().item():.3g})"
    plan = tilecraft.plan_gemm(A, B, out, tuning="off", **profiling.gemm_kwargs(problem, extra))
    assert plan.state["kernel_name"] and "tuning off" in plan.state["reason"]


def test_gemm_makes_its_output_and_follows_torch_dtypes():
    A = torch.randn(64, 128, device="cuda", dtype=torch.bfloat16)
    B = torch.randn(96, 128, device="cuda", dtype=torch.bfloat16).t()
    out = tilecraft.gemm(A, B, tuning="off")
    assert out.shape == (64, 96) and out.dtype == torch.bfloat16
    want = A.double() @ B.double()
    assert ((out.double() - want).abs() <= 2e-2 * want.abs().max()).all()


@pytest.mark.parametrize("shape,out_dtype", [((777, 333, 4099), "float32"),
                                             ((777, 333, 4099), "float16"),
                                             ((64, 64, 8192), "float32"),
                                             ((512, 256, 8192), "float16")])
def test_split_k_kernels_match_float64_in_every_element(shape, out_dtype):
    """Each K-slice count get_kernels offers for a small output with a long K (SM80 serial split-K
    into an f32 output, SM80 parallel split-K into an f16 one, SM90 stream-K split-K reduced in an
    f32 workspace), on the kernel of the first split variant (one compile, and one for a parallel
    companion), run twice (semaphores and workspace must be left ready for the next launch)."""
    import tilecraft.api as api

    m, n, k = shape
    dtype = getattr(torch, out_dtype)
    A = torch.rand(m, k, device="cuda", dtype=torch.float16) - 0.5
    B = (torch.rand(n, k, device="cuda", dtype=torch.float16) - 0.5).t()
    want = A.double() @ B.double()
    # f32 accumulation, and for f16 outputs one rounding of the result.
    tolerance = 1e-5 * want.abs().max() * k ** 0.5 + (2.0 ** -10 if dtype == torch.float16
                                                      else 0.0) * want.abs()
    args = api.arguments.GemmArguments(A=A, B=B, out=torch.empty(m, n, device="cuda", dtype=dtype),
                                       accumulator_type=torch.float32)
    by_splits, base = {}, None
    for kernel in api.get_kernels(args):
        splits = getattr(kernel.metadata.design, "split_k_slices", 1)
        name = kernel.metadata.kernel_name.rsplit("_splitk", 1)[0]
        if splits > 1 and base in (None, name):
            base = name
            by_splits.setdefault(splits, kernel)
    assert by_splits, "no split-K kernel offered"
    for splits, kernel in sorted(by_splits.items()):
        parallel = "_parallel" if getattr(kernel.metadata.design, "split_k_parallel", False) else ""
        assert kernel.metadata.kernel_name.endswith(f"_splitk{splits}{parallel}")
        for _ in range(2):
            out = torch.full((m, n), float("nan"), device="cuda", dtype=dtype)
            kernel.run(api.arguments.GemmArguments(A=A, B=B, out=out,
                                                   accumulator_type=torch.float32))
            torch.cuda.synchronize()
            error = (out.double() - want).abs()
            bad = int((~(error <= tolerance)).sum())
            assert bad == 0, (f"{kernel.metadata.kernel_name}: {bad} of {out.numel()} elements "
                              f"off (max error {error.max().item():.3g})")


def test_bad_input_is_refused_and_nothing_runs():
    A = torch.randn(64, 32, device="cuda", dtype=torch.float16)
    B = torch.randn(48, 64, device="cuda", dtype=torch.float16)
    out = torch.full((64, 64), float("nan"), device="cuda", dtype=torch.float16)
    with pytest.raises(ValueError, match=r"B: .*48|K"):
        tilecraft.gemm(A, B, out, tuning="off")
    with pytest.raises((ValueError, RuntimeError), match="B|Float16|BFloat16|kernel"):
        tilecraft.gemm(A, torch.randn(32, 64, device="cuda", dtype=torch.bfloat16), out,
                       tuning="off")
    with pytest.raises(ValueError, match="A: expected a CUDA tensor"):
        tilecraft.gemm(A.cpu(), torch.randn(32, 64, device="cuda", dtype=torch.float16), out)
    with pytest.raises(ValueError, match="max_seconds"):
        tilecraft.gemm(A, torch.randn(32, 64, device="cuda", dtype=torch.float16), out,
                       max_seconds=-1)
    with pytest.raises(ValueError, match="use_fast_accum"):
        tilecraft.gemm(A, torch.randn(32, 64, device="cuda", dtype=torch.float16), out,
                       use_fast_accum=True)
    torch.cuda.synchronize()
    assert torch.isnan(out).all(), "a refused call wrote to out"


def run_child(code, **env):
    full = dict(os.environ, **env)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=full, timeout=600)


def test_tuned_winner_serves_a_new_process_without_compiling_or_timing(tmp_path):
    problem = profiling.Problem(512, 768, 256, 1, "bf16")
    A, B, extra = profiling.operands(problem)
    plan = tilecraft.plan_gemm(A, B, tuning="blocking", max_candidates=2)
    state = plan.state
    assert state["tuned"] and state["reason"].startswith("tuned now"), state
    code = f"""
        import torch, tilecraft
        from tilecraft import profiling
        p = profiling.Problem(512, 768, 256, 1, "bf16")
        A, B, extra = profiling.operands(p)
        plan = tilecraft.plan_gemm(A, B)
        out = plan(A, B)
        want = A.double() @ B.double()
        assert ((out.double() - want).abs() <= 2e-2 * want.abs().max()).all()
        print(plan.state["kernel_name"])
        print(plan.state["reason"])
    """
    child = run_child(code, TILECRAFT_QUIET="0")
    assert child.returncode == 0, child.stderr
    assert "compil" not in child.stderr and "tuning" not in child.stderr, child.stderr
    name, reason = child.stdout.strip().splitlines()[-2:]
    assert name == state["kernel_name"]
    assert reason.startswith("tuned winner from the tuning cache"), reason


def test_a_compiled_family_kernel_serves_a_new_shape_while_its_winner_tunes():
    first = profiling.Problem(256, 512, 128, 1, "f16")
    A, B, _ = profiling.operands(first)
    tilecraft.plan_gemm(A, B, tuning="blocking", max_candidates=2)  # the family has kernels now
    second = profiling.Problem(1536, 1280, 640, 1, "f16")  # another bucket of the same family
    A, B, _ = profiling.operands(second)
    plan = tilecraft.plan_gemm(A, B, tuning="auto", max_candidates=2)
    state = plan.state
    assert "compiled earlier for this problem family" in state["reason"], state
    out = plan(A, B)
    want = A.double() @ B.double()
    assert ((out.double() - want).abs() <= 4e-3 * want.abs().max()).all()
    assert plan.wait_for_tuning(600), "background tuning did not end"
    plan(A, B)  # adopts the stored winner
    state = plan.state
    assert state["tuned"] and not state["tuning"], state
    assert not state["tuning_error"], state
