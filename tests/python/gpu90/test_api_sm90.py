"""tilecraft.api on an SM90 GPU: the best-ranked kernels of several argument sets run correctly
(random data, poisoned outputs, every element against float64), artifacts survive a save and a
load in a process without nvcc, and bad runtime inputs are refused before any launch."""

import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.gpu

# (A dtype, out dtype, A layout, B layout, batch, M, N, K); layouts "r" (row) or "c" (column).
CASES = [
    ("f16", "f32", "r", "r", 2, 128, 256, 64),     # the seed's arguments
    ("bf16", "bf16", "r", "c", 1, 300, 520, 264),  # TN, ragged
    ("f16", "f16", "c", "c", 3, 72, 136, 200),     # batched, column-major A
]
TOP = 2


def _torch_dtype(torch, name):
    return {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}[name]


def _matrix(torch, gen, batch, rows, cols, dtype, layout):
    shape = (batch, rows, cols) if batch > 1 else (rows, cols)
    t = torch.randn(shape, device="cuda", generator=gen)
    if layout == "c":
        t = t.transpose(-1, -2).contiguous().transpose(-1, -2)
    return t.to(dtype)


def _args_for(case, gen):
    import torch

    import tilecraft.api as cutlass_api

    a_name, out_name, la, lb, batch, m, n, k = case
    A = _matrix(torch, gen, batch, m, k, _torch_dtype(torch, a_name), la)
    B = _matrix(torch, gen, batch, k, n, _torch_dtype(torch, a_name), lb)
    out = torch.full((batch, m, n) if batch > 1 else (m, n), float("nan"), device="cuda",
                     dtype=_torch_dtype(torch, out_name))
    args = cutlass_api.arguments.GemmArguments(A=A, B=B, out=out, accumulator_type=torch.float32)
    return args, A, B, out


def _check(out, A, B, note):
    ref = A.double() @ B.double()
    err = (out.double() - ref).abs()
    bound = 2 ** -7 * ref.abs() + 1e-2 * ref.abs().mean()
    bad = ~(err <= bound)
    assert not bad.any(), f"{note}: {int(bad.sum())} of {bad.numel()} elements off"


@pytest.fixture(scope="module")
def ranked(request):
    """The top kernels of every case, compiled together."""
    import torch

    import tilecraft.api as cutlass_api

    gen = torch.Generator(device="cuda")
    gen.manual_seed(1234)
    chosen = {}
    for case in CASES:
        args, *_ = _args_for(case, gen)
        chosen[case] = cutlass_api.get_kernels(args)[:TOP]
    cutlass_api.compile_kernels([k for kernels in chosen.values() for k in kernels])
    return chosen


@pytest.mark.parametrize("case", CASES, ids=lambda c: "_".join(map(str, c)))
def test_top_ranked_kernels_are_correct(ranked, gen, case):
    import torch

    assert len(ranked[case]) == TOP
    for kernel in ranked[case]:
        args, A, B, out = _args_for(case, gen)
        assert kernel.supports(args)
        assert kernel.metadata.score > 0
        kernel.run(args)
        torch.cuda.synchronize()
        _check(out, A, B, kernel.metadata.kernel_name)


def test_supports_text_on_device_tensors(ranked, gen):
    import torch

    import tilecraft.api as cutlass_api

    args, A, B, out = _args_for(CASES[0], gen)
    kernel = ranked[CASES[0]][0]
    wrong = cutlass_api.arguments.GemmArguments(A=A.to(torch.bfloat16), B=B, out=out,
                                                accumulator_type=torch.float32)
    status = kernel.supports(wrong)
    assert not status
    assert status.error == "Operand `A` is unsupported: Expected element type Float16, got BFloat16"
    with pytest.raises(ValueError, match="Expected element type Float16, got BFloat16"):
        kernel.run(wrong)
    assert torch.isnan(out).all(), "a refused run wrote to out"


def test_artifact_for_another_kernel_is_refused(ranked, gen):
    import torch

    first, second = ranked[CASES[0]]
    args, _, _, out = _args_for(CASES[0], gen)
    artifact = second.compile(args)
    with pytest.raises(ValueError, match="^compiled_artifact: compiled for .*, not for this kernel"):
        first.run(args, compiled_artifact=artifact)
    torch.cuda.synchronize()
    assert torch.isnan(out).all(), "a refused run wrote to out"


def test_workspace_too_small_is_refused(gen):
    import torch

    import tilecraft as cutlass
    import tilecraft.api as cutlass_api

    args, _, _, out = _args_for(("bf16", "bf16", "r", "c", 1, 256, 256, 4096), gen)
    stream_k = cutlass_api.get_kernels(
        args, metadata_filter=lambda m: getattr(m.design, "tile_scheduler", None)
        == cutlass.TileSchedulerType.StreamK)[0]
    size = stream_k.get_workspace_size(args)
    assert size > 0, stream_k.metadata.kernel_name
    small = torch.empty(size - 1, device="cuda", dtype=torch.int8)
    with pytest.raises(ValueError, match=f"^workspace: expected at least {size} bytes"):
        stream_k.run(args, workspace=small)
    torch.cuda.synchronize()
    assert torch.isnan(out).all(), "a refused run wrote to out"
    stream_k.run(args, workspace=torch.empty(size, device="cuda", dtype=torch.int8))
    torch.cuda.synchronize()
    assert not torch.isnan(out).any()


def test_artifact_runs_in_a_process_without_nvcc(ranked, gen, tmp_path):
    import torch

    case = CASES[1]
    kernel = ranked[case][0]
    args, _, _, _ = _args_for(case, gen)
    path = tmp_path / "kernel.tca"
    kernel.compile(args).save(path)
    child = textwrap.dedent(f"""
        import shutil, sys, torch
        import tilecraft.api as cutlass_api
        assert shutil.which("nvcc") is None, "nvcc is reachable"
        artifact = cutlass_api.CompiledArtifact.load({str(path)!r})
        a_name, out_name, la, lb, batch, m, n, k = {case!r}
        torch.manual_seed(7)
        A = torch.randn(m, k, device="cuda").to(torch.bfloat16)
        B = torch.randn(n, k, device="cuda").to(torch.bfloat16).t()
        out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        args = cutlass_api.arguments.GemmArguments(A=A, B=B, out=out,
                                                   accumulator_type=torch.float32)
        kernel = [k for k in cutlass_api.get_kernels(args)
                  if k.metadata.kernel_name == artifact.kernel_name][0]
        kernel.run(args, compiled_artifact=artifact)
        torch.cuda.synchronize()
        ref = A.double() @ B.double()
        bad = ~((out.double() - ref).abs() <= 2 ** -7 * ref.abs() + 1e-2 * ref.abs().mean())
        assert not bad.any(), int(bad.sum())
        print("child ok", artifact.kernel_name)
    """)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                  if not os.path.exists(os.path.join(p, "nvcc")))
    env["TILECRAFT_NVCC"] = "/nonexistent/nvcc"
    env.pop("CUDA_HOME", None)
    env.pop("CUDA_PATH", None)
    result = subprocess.run([sys.executable, "-c", child], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"child ok {kernel.metadata.kernel_name}" in result.stdout
    del torch


@pytest.mark.parametrize("dtype, simt", [("float32", True), ("float64", True),
                                         ("float64", False)],
                         ids=["f32_simt", "f64_simt", "f64_tensor_op"])
def test_cuda_core_and_f64_kernels_are_correct(gen, dtype, simt):
    import torch

    import tilecraft.api as cutlass_api

    t = getattr(torch, dtype)
    m, n, k = 136, 200, 72
    A = torch.randn(m, k, device="cuda", generator=gen, dtype=torch.float64).to(t)
    B = torch.randn(k, n, device="cuda", generator=gen, dtype=torch.float64).to(t)
    out = torch.full((m, n), float("nan"), device="cuda", dtype=t)
    args = cutlass_api.arguments.GemmArguments(A=A, B=B, out=out, accumulator_type=t)
    kernels = cutlass_api.get_kernels(
        args, metadata_filter=lambda md: (tuple(md.design.instruction_shape) == (1, 1, 1)) == simt
        and md.operands.A.dtype.name == ("f32" if dtype == "float32" else "f64"))
    assert kernels, "no kernel listed"
    kernels[0].run(args)
    torch.cuda.synchronize()
    ref = A.double() @ B.double()
    eps = 2.0 ** -23 if dtype == "float32" else 2.0 ** -52
    bound = 4 * k * eps * (A.double().abs() @ B.double().abs())
    bad = ~((out.double() - ref).abs() <= bound)
    assert not bad.any(), f"{kernels[0].metadata.kernel_name}: {int(bad.sum())} elements off"
