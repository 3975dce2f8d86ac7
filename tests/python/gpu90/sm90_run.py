"""Running one Sm90Case end to end: fresh random inputs, poisoned D (and aux), GemmArguments in
the case's framework, launch, sync, and the float64 reference of the pre-activation value Z.
The last epilogue steps and the checks are in sm90_reference.py and sm90_check.py."""

from dataclasses import dataclass

import sm90_data as data
from sm90_data import place, poison_value, random_dyadic, random_values, to64


@dataclass
class Outcome:
    got: object        # D as float64 (batch..., M, N) on the reference device
    got_aux: object    # aux as float64, or None
    z: object          # float64 reference of Z = g*alpha*acc + sc*beta*C + bias, g = sa*sb
    mm_abs: object     # |g*alpha| * (|A| @ |B|): the scale of accumulation errors
    z_abs: object      # |g*alpha*acc| + |sc*beta*C| + |bias|: the scale of epilogue roundings
    d_scale: float     # scale_d where D is fp8, else 1


def make_inputs(case, gen):
    """The logical inputs (torch, on data.DEVICE): A (.., M, K), B (.., K, N), C (.., M, N) or
    None, and the bias values ((len,) or (batch, len)) or None."""
    spec = case.spec
    lead = (case.batch,) if case.batch else ()
    A = random_values(lead + (case.M, case.K), spec.a, case.data, case.amax, gen, case.span)
    B = random_values(lead + (case.K, case.N), spec.b, case.data, case.amax, gen, case.span)
    C = None
    if case.with_c:
        C = random_values(lead + (case.M, case.N), spec.out, case.data, case.cmax, gen)
    bias = None
    if spec.bias:
        length = case.M if spec.bias == "row" else case.N
        shape = (case.batch, length) if case.batch and case.bias_per_batch else (length,)
        if case.data == "int":
            bias = random_dyadic(shape, spec.bias_element, gen)
        else:
            bias = random_values(shape, spec.bias_element, "float", 0, gen, 2.0)
    return A, B, C, bias


def _scale_arguments(case):
    if not case.spec.scales:
        return {}
    names = ("scale_a", "scale_b", "scale_c", "scale_d")
    out = {}
    for i, (name, value) in enumerate(zip(names, case.scales)):
        if i >= 2 and value == 1.0 and not case.pass_unit_scales:
            continue  # scale_c / scale_d default to 1
        out[name] = data.scale_tensor(value) if case.scale_form == "tensor" else float(value)
    return out


def _to_framework(case, tensors):
    if case.framework == "numpy":
        return [None if t is None else t.cpu().numpy() for t in tensors]
    if case.framework == "cupy":
        import cupy

        return [None if t is None else cupy.from_dlpack(t) for t in tensors]
    return list(tensors)


def launch(op, case, A, B, C, D, bias, aux):
    """GemmArguments exactly as a user writes them; run; sync. Returns (D, aux) as passed."""
    import tilecraft as cutlass

    A, B, C, D, bias, aux = _to_framework(case, (A, B, C, D, bias, aux))
    kwargs = dict(operation=op, problem_size=cutlass.gemm.GemmCoord(case.M, case.N, case.K),
                  A=A, B=B, C=C, D=D,
                  output_op=op.epilogue_type(case.alpha, case.beta, *case.act_args),
                  gemm_mode=cutlass.gemm.Mode.Batched if case.batch else cutlass.gemm.Mode.Gemm,
                  split_k_slices=case.split)
    if case.batch:
        kwargs["batch"] = case.batch
    if not case.deterministic:
        kwargs["deterministic"] = False
    if bias is not None:
        kwargs["bias"] = bias
    if aux is not None:
        kwargs["aux"] = aux
    kwargs.update(_scale_arguments(case))
    arguments = cutlass.GemmArguments(**kwargs)
    op.run(arguments)
    arguments.sync()
    return D, aux


def _back(case, passed, original):
    """The output as a float64 tensor: numpy outputs were copied back by sync()."""
    if case.framework == "numpy":
        import torch

        return to64(torch.from_numpy(passed))
    return to64(original)   # torch, or cupy sharing the torch tensor's memory


def reference(case, A, B, C, bias):
    spec = case.spec
    sa, sb, sc, sd = case.scales or (1.0, 1.0, 1.0, 1.0)
    g = sa * sb * case.alpha
    A64, B64 = to64(A), to64(B)
    acc = A64 @ B64
    z = g * acc
    z_abs = z.abs()
    mm_abs = abs(g) * (A64.abs() @ B64.abs())
    if C is not None and case.beta != 0:
        c_term = (sc * case.beta) * to64(C)
        z = z + c_term
        z_abs = z_abs + c_term.abs()
    if bias is not None:
        b = to64(bias)
        b = b.unsqueeze(-1) if spec.bias == "row" else b.unsqueeze(-2)
        if b.dim() == 3 and not case.batch:
            raise AssertionError("test bug: a per-batch bias in Gemm mode")
        z = z + b
        z_abs = z_abs + b.abs()
    return z, mm_abs, z_abs, (sd if spec.fp8_out else 1.0)


def run_case(ops, case, gen):
    spec = case.spec
    op = ops.get(case.key)
    la, lb, lc = spec.layout_names
    A, B, C, bias_values = make_inputs(case, gen)
    lead = (case.batch,) if case.batch else ()
    shape = lead + (case.M, case.N)
    D = place(data.full(shape, poison_value(spec.out), spec.out), lc)
    aux = None
    if spec.aux:
        aux = place(data.full(shape, poison_value(spec.aux_element), spec.aux_element), lc)
    bias = None
    if bias_values is not None:
        per_batch = bias_values.dim() == 2
        bias = data.bias_vector(bias_values, per_batch, spec.bias_element)
    passed_D, passed_aux = launch(op, case, place(A, la), place(B, lb),
                                  None if C is None else place(C, lc), D, bias, aux)
    got = _back(case, passed_D, D)
    got_aux = None if aux is None else _back(case, passed_aux, aux)
    z, mm_abs, z_abs, d_scale = reference(case, A, B, C, bias_values)
    return Outcome(got, got_aux, z, mm_abs, z_abs, d_scale)
