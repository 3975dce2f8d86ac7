"""Fast math (EpilogueGraph.fast_math): the error of tanh.approx.f32, __expf and __fdividef as
the kernels compute tanh, sigmoid, silu and gelu_tanh, MEASURED on every finite float16 input and
checked against the bounds evt_ref.py states for them (PTX ISA and CUDA C Programming Guide);
the largest errors seen are reported at the end of the run.

The accumulator is A @ I: A holds the 63,488 finite float16 values (zeros elsewhere), B is the
16 x 16 identity, so that every accumulator element is exactly one of them; the graph
``fast_functions`` (evt_cases.py) stores each function of it in float32.
"""

import pytest

from evt_cases import BY_NAME, op_key
from evt_kernels import KERNELS
from evt_ref import R, check_output, evaluation, to64
from evt_run import DEVICE

CASE = BY_NAME["fast_functions"]
KEY = op_key("sm90-f16coop", CASE)


def every_finite_f16():
    """(M, 16) float16: each finite value once (sorted), zero-padded to whole rows."""
    import torch

    bits = torch.arange(0, 1 << 16, dtype=torch.int32, device=DEVICE).to(torch.int16)
    values = bits.view(torch.float16)
    values = values[torch.isfinite(values)].sort().values
    rows = -(-values.numel() // 16)
    out = torch.zeros(rows * 16, dtype=torch.float16, device=DEVICE)
    out[:values.numel()] = values
    return out.reshape(rows, 16)


@pytest.mark.parametrize("op_key", [KEY])
def test_fast_functions_on_every_float16(evt_ops, op_key, suite_report):
    import torch

    op = evt_ops.get(op_key)
    a = every_finite_f16()
    m, k = a.shape
    b = torch.eye(k, dtype=torch.float16, device=DEVICE).t().contiguous().t()  # column-major
    import tilecraft as cutlass

    outputs = {o.name: torch.full((m, k), float("nan"), dtype=torch.float32, device=DEVICE)
               for o in CASE.outputs}
    output_op = op.epilogue_type(**{n: t for n, t in outputs.items() if n != CASE.d_name})
    args = cutlass.GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(m, k, k),
                                 A=a, B=b, D=outputs[CASE.d_name], output_op=output_op)
    op.run(args)
    output_op.sync()

    accum = R(to64(a))   # exact: one product with 1, the others with 0
    with evaluation((m, k), fast_math=True):
        wants = CASE.fn(accum)
    measured, failures = [], []
    for o, want in zip(CASE.outputs, wants):
        got = outputs[o.name].double()
        error = (got - want.v).abs()
        relative = (error / want.v.abs().clamp(min=2.0 ** -126)).max()
        worst = int(error.argmax())
        measured.append(f"{o.name} max |error| {float(error.max()):.3g} at x = "
                        f"{float(a.reshape(-1)[worst]):.6g}, max relative {float(relative):.3g}")
        try:  # every function measured and checked before the test fails
            check_output(outputs[o.name], want, "f32", f"{o.name} (fast math) of every float16")
        except AssertionError as error:
            failures.append(str(error))
    suite_report(f"fast math measured on every finite float16 ({KERNELS['sm90-f16coop'].ab} "
                 f"inputs): " + "; ".join(measured))
    assert not failures, "\n".join(failures)
