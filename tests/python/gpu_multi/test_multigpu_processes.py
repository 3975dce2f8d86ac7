"""One process per GPU (as torch.distributed runs them), sharing one cache folder: two processes
that need the same new kernel at the same moment compile it once (the other waits for it and
loads it) and both run it right; a winner tuned by the process on cuda:0 serves the process on
cuda:1 (the tuning cache is keyed by device model) without compiling or timing anything."""

import os
import re
import subprocess
import sys
import textwrap

import pytest

import tilecraft

torch = pytest.importorskip("torch")

_COMPILE_ONCE = """
    import pathlib, sys, time
    import torch
    import tilecraft as cutlass

    ready, me = pathlib.Path(sys.argv[1]), sys.argv[2]
    (ready / me).touch()
    deadline = time.monotonic() + 120
    while len(list(ready.iterdir())) < 2:  # both processes ask for the kernel at once
        assert time.monotonic() < deadline, "the other process never started"
        time.sleep(0.005)
    math = cutlass.MathInstruction([16, 8, 16], cutlass.float16, cutlass.float16,
                                   cutlass.float32, cutlass.OpClass.TensorOp,
                                   cutlass.MathOperation.multiply_add)
    tile = cutlass.TileDescription([64, 64, 64], 3, [2, 2, 1], math)
    op = cutlass.GemmOperationUniversal(
        80, tile, cutlass.TensorDescription(cutlass.float16, cutlass.RowMajor, 8),
        cutlass.TensorDescription(cutlass.float16, cutlass.ColumnMajor, 8),
        cutlass.TensorDescription(cutlass.float32, cutlass.RowMajor, 4),
        cutlass.LinearCombination(cutlass.float32, 4, cutlass.float32, cutlass.float32),
        cutlass.IdentitySwizzle1)
    cutlass.compiler.add_module([op])
    g = torch.Generator(device="cuda").manual_seed(int(me))
    M, N, K = 333, 200, 136
    a = torch.randint(-3, 4, (M, K), generator=g, device="cuda").half()
    b = torch.randint(-3, 4, (N, K), generator=g, device="cuda").half().t()
    c = torch.randint(-3, 4, (M, N), generator=g, device="cuda").float()
    d = torch.full((M, N), float("nan"), device="cuda")
    args = cutlass.GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(M, N, K),
                                 A=a, B=b, C=c, D=d, output_op=op.epilogue_type(0.5, 2.0))
    op.run(args)
    args.sync()
    bad = int((d.double() != 0.5 * (a.double() @ b.double()) + 2.0 * c.double()).sum())
    assert bad == 0, f"{bad} elements differ from float64"
    print(torch.cuda.get_device_name(), op.procedural_name())
"""

_TUNED = """
    import sys
    import torch, tilecraft
    g = torch.Generator(device="cuda").manual_seed(5)
    A = torch.randint(-2, 3, (384, 192), generator=g, device="cuda").bfloat16()
    B = torch.randint(-2, 3, (192, 640), generator=g, device="cuda").bfloat16()
    plan = tilecraft.plan_gemm(A, B, tuning=sys.argv[1], max_candidates=2)
    out = plan(A, B)
    torch.cuda.synchronize()
    assert bool((out.double() == A.double() @ B.double()).all()), "differs from float64"
    print(torch.cuda.get_device_name())
    print(plan.state["kernel_name"])
    print(plan.state["reason"])
"""


def _child(code, gpu, *argv, cache=None):
    env = dict(os.environ, CUDA_VISIBLE_DEVICES=str(gpu), TILECRAFT_QUIET="0")
    env.pop("TILECRAFT_TUNING", None)
    if cache is not None:
        env["TILECRAFT_CACHE_DIR"] = str(cache)
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _finish(process, what):
    try:
        out, err = process.communicate(timeout=900)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
    assert process.returncode == 0, f"{what} failed ({process.returncode}):\n{err[-4000:]}"
    return out, err


def test_two_processes_compile_a_new_kernel_once(tmp_path):
    cache, ready = tmp_path / "cache", tmp_path / "ready"
    ready.mkdir()
    children = [_child(_COMPILE_ONCE, gpu, str(ready), str(gpu), cache=cache) for gpu in (0, 1)]
    results = [_finish(p, f"the process on GPU {i}") for i, p in enumerate(children)]
    errs = "\n".join(err for _, err in results)
    compiled = [line for line in errs.splitlines() if " compiled " in line and " in " in line
                and "another process" not in line and "[" in line]
    assert len(compiled) == 1, f"expected one compile in both processes, got:\n{errs}"
    waited = [err for _, err in results if "was compiled by another process" in err]
    assert len(waited) == 1, f"expected the other process to wait for it:\n{errs}"
    names = {out.split()[-1] for out, _ in results}
    assert len(names) == 1, names
    assert len(list(cache.rglob("module.so"))) == 1, "the shared cache holds one module"


def test_a_winner_tuned_on_one_gpu_serves_the_other():
    first_out, first_err = _finish(_child(_TUNED, 0, "force"), "tuning on GPU 0")
    model, name, reason = first_out.strip().splitlines()[-3:]
    assert reason.startswith("tuned now"), (reason, first_err[-2000:])
    second_out, second_err = _finish(_child(_TUNED, 1, "auto"), "the process on GPU 1")
    model1, name1, reason1 = second_out.strip().splitlines()[-3:]
    assert model1 == model, "the suite's two GPUs are of one model"
    assert name1 == name and reason1.startswith("tuned winner from the tuning cache"), reason1
    assert "compil" not in second_err and "tuning" not in second_err, second_err[-2000:]
    # One entry per device model for the problem: a cache that GPUs of another model shared
    # before holds theirs beside it, in its own folder.
    entries = [e for e in tilecraft.tuning.list_cache()
               if e["signature"].endswith("mnkl=384x640x192x1") and e["device"] == model]
    assert len(entries) == 1 and entries[0]["kernel_name"] == name, entries
    folder = re.sub(r"[^A-Za-z0-9-]", "_", model)  # the store's folder name of a model
    assert f"/{folder}/" in entries[0]["path"], entries
