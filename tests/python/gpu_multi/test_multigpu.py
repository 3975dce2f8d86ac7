"""Operands on cuda:1 while cuda:0 is current (issue 16), through the seed's operation-first
spelling: the run goes to the operands' device and to a stream of that device, whichever device
is current; operands on two devices are refused before any launch; two threads launch on the two
devices at once. Integer-valued f16 data keep every product and sum exact in float32: results
must equal the float64 reference in every element, outputs poisoned (NaN) first."""

import threading

import pytest

import tilecraft as cutlass

torch = pytest.importorskip("torch")
M, N, K = 200, 136, 96


def _data(device, seed):
    g = torch.Generator(device="cpu").manual_seed(seed)
    a = torch.randint(-3, 4, (M, K), generator=g).to(torch.float16).to(device)
    b = torch.randint(-3, 4, (K, N), generator=g).to(torch.float16).to(device)
    c = torch.randint(-3, 4, (M, N), generator=g).to(torch.float32).to(device)
    return a, b, c


def _mismatches(op, device, seed, stream=None):
    a, b, c = _data(device, seed)
    d = torch.full((M, N), float("nan"), device=device)
    args = cutlass.GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(M, N, K),
                                 A=a, B=b, C=c, D=d, output_op=op.epilogue_type(1.5, -0.5))
    if stream is None:
        op.run(args)
    else:
        with torch.cuda.stream(stream):
            op.run(args)
    args.sync()
    want = 1.5 * (a.double() @ b.double()) - 0.5 * c.double()
    return int((d.double() != want).sum())


@pytest.mark.sanitizer
def test_operation_first_runs_on_the_operands_device(kernels):
    assert _mismatches(kernels.seed, torch.device("cuda", 1), 1) == 0
    assert torch.cuda.current_device() == 0
    with torch.cuda.device(1):
        assert _mismatches(kernels.seed, torch.device("cuda", 0), 2) == 0
        assert torch.cuda.current_device() == 1


@pytest.mark.sanitizer
def test_a_callers_stream_on_the_operands_device(kernels):
    stream = torch.cuda.Stream(device=1)
    assert _mismatches(kernels.seed, torch.device("cuda", 1), 3, stream) == 0


def test_operands_on_two_devices_are_refused_by_name(kernels):
    op = kernels.seed
    a, b, c = _data(torch.device("cuda", 0), 4)
    d = torch.full((M, N), float("nan"), device="cuda:1")
    with pytest.raises(ValueError, match=r"^D: expected a tensor on cuda:0 .*got cuda:1"):
        cutlass.GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(M, N, K),
                              A=a, B=b, C=c, D=d, output_op=op.epilogue_type(1.0, 0.0))
    torch.cuda.synchronize(1)
    assert torch.isnan(d).all()  # nothing launched


def _alternate(index, op, start, failures):
    """20 rounds on cuda:<index>: the operation, then the one call. Module-level (no closure
    over the fixture): compute-sanitizer keeps frames of threads that launched work alive, and
    conftest's check of live objects after the session must not find the kernels held there."""
    device = torch.device("cuda", index)
    try:
        start.wait()
        for i in range(20):
            bad = _mismatches(op, device, 100 * index + i)
            a, b, _ = _data(device, 1000 + 100 * index + i)
            out = cutlass.gemm(a, b, tuning="off")
            torch.cuda.synchronize(device)
            bad += int((out.double() != a.double() @ b.double()).sum())
            if bad:
                failures.append(f"cuda:{index} round {i}: {bad} mismatches")
    except Exception as error:  # noqa: BLE001
        failures.append(f"cuda:{index}: {type(error).__name__}: {error}")


@pytest.mark.sanitizer
def test_two_threads_launch_on_two_devices_at_once(kernels):
    """Each thread alternates the operation and the one call on its own device."""
    failures = []
    start = threading.Barrier(2)
    threads = [threading.Thread(target=_alternate, args=(i, kernels.seed, start, failures))
               for i in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
