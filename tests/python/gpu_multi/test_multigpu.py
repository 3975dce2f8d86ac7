"""Operands on cuda:1 while cuda:0 is current (issue 16): every path runs on the operands'
device and on a stream of that device, results checked element by element against float64 with
outputs poisoned first; operands on two devices are refused before any launch.

Integer-valued f16 data keep every product and sum exact in float32: results must match exactly.
"""

import threading

import numpy as np
import pytest

import tilecraft as cutlass

M, N, K = 200, 136, 96


def _data(torch, device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    a = torch.randint(-3, 4, (M, K), generator=g).to(torch.float16).to(device)
    b = torch.randint(-3, 4, (K, N), generator=g).to(torch.float16).to(device)
    c = torch.randint(-3, 4, (M, N), generator=g).to(torch.float32).to(device)
    return a, b, c


def _reference(a, b, c, alpha, beta):
    return alpha * (a.double() @ b.double()) + beta * c.double()


def _sm80_operation():
    math = cutlass.MathInstruction([16, 8, 16], cutlass.float16, cutlass.float16, cutlass.float32,
                                   cutlass.OpClass.TensorOp, cutlass.MathOperation.multiply_add)
    tile = cutlass.TileDescription([128, 128, 32], 3, [2, 2, 1], math)
    A = cutlass.TensorDescription(cutlass.float16, cutlass.RowMajor, 8)
    B = cutlass.TensorDescription(cutlass.float16, cutlass.RowMajor, 8)
    C = cutlass.TensorDescription(cutlass.float32, cutlass.RowMajor, 4)
    epilogue = cutlass.LinearCombination(cutlass.float32, 4, cutlass.float32, cutlass.float32)
    return cutlass.GemmOperationUniversal(80, tile, A, B, C, epilogue, cutlass.IdentitySwizzle1)


@pytest.fixture(scope="module")
def operation():
    op = _sm80_operation()
    cutlass.compiler.add_module([op])
    return op


def _run_operation(torch, op, device, stream=None):
    a, b, c = _data(torch, device, seed=device.index + 7)
    d = torch.full((M, N), float("nan"), device=device)
    args = cutlass.GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(M, N, K),
                                 A=a, B=b, C=c, D=d, output_op=op.epilogue_type(1.5, -0.5))
    if stream is None:
        op.run(args)
    else:
        with torch.cuda.stream(stream):
            op.run(args)
    args.sync()
    return int((d.double() != _reference(a, b, c, 1.5, -0.5)).sum())


def test_operation_first_runs_on_the_operands_device(operation):
    import torch

    with torch.cuda.device(0):
        assert _run_operation(torch, operation, torch.device("cuda", 1)) == 0
        assert torch.cuda.current_device() == 0
    with torch.cuda.device(1):
        assert _run_operation(torch, operation, torch.device("cuda", 0)) == 0
        assert torch.cuda.current_device() == 1


def test_a_callers_stream_on_the_operands_device(operation):
    import torch

    with torch.cuda.device(0):
        stream = torch.cuda.Stream(device=1)
        assert _run_operation(torch, operation, torch.device("cuda", 1), stream) == 0


def test_operands_on_two_devices_are_refused_by_name(operation):
    import torch

    a, b, c = _data(torch, torch.device("cuda", 0), seed=1)
    d = torch.full((M, N), float("nan"), device="cuda:1")
    with pytest.raises(ValueError, match=r"^D: expected a tensor on cuda:0 .*got cuda:1"):
        cutlass.GemmArguments(operation=operation, problem_size=cutlass.gemm.GemmCoord(M, N, K),
                              A=a, B=b, C=c, D=d, output_op=operation.epilogue_type(1.0, 0.0))
    assert torch.isnan(d).all()  # nothing launched


def test_two_threads_launch_on_two_devices_at_once(operation):
    import torch

    failures = []

    def work(index):
        try:
            for _ in range(20):
                bad = _run_operation(torch, operation, torch.device("cuda", index))
                if bad:
                    failures.append(f"cuda:{index}: {bad} mismatches")
        except Exception as error:  # noqa: BLE001
            failures.append(f"cuda:{index}: {type(error).__name__}: {error}")

    threads = [threading.Thread(target=work, args=(i,)) for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_one_call_and_arguments_first_on_the_second_device():
    import torch

    from tilecraft import api

    device = torch.device("cuda", 1)
    with torch.cuda.device(0):
        a, b, c = _data(torch, device, seed=3)
        out = cutlass.gemm(a, b, C=c.to(torch.float16), beta=1.0, tuning="off")
        reference = a.double() @ b.double() + c.to(torch.float16).double()
        torch.cuda.synchronize(device)
        assert out.device == device
        assert np.abs((out.double() - reference).cpu().numpy()).max() <= 2e-3 * max(
            1.0, float(reference.abs().max()))
        out2 = torch.full((M, N), float("nan"), device=device, dtype=torch.float16)
        args = api.arguments.GemmArguments(a, b, out2, cutlass._core.DataType.f32)
        kernels = api.get_kernels(args)
        stream = torch.cuda.Stream(device=1)
        kernels[0].run(args, stream=stream)
        stream.synchronize()
        assert int(torch.isnan(out2).sum()) == 0
        assert np.abs((out2.double() - a.double() @ b.double()).cpu().numpy()).max() <= 2e-3 * max(
            1.0, float((a.double() @ b.double()).abs().max()))
