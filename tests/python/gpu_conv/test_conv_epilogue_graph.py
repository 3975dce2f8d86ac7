"""Custom epilogues (epilogue graphs) on tilecraft's persistent SM90 convolutions, through the
seed's flow: ``Conv2dOperation(..., epilogue_functor=<traced graph>)``,
``op.epilogue_type(**operands)``, ``Conv2dArguments(..., output_op=)``, ``op.run``,
``output_op.sync()``.

The graphs (conv_graphs.py) see the implicit GEMM's (M, N) output. Every element of every output
(D, a second store, reductions along rows, columns and everything) is checked against the same
function called on float64 ``R`` values (tests/python/gpu_evt/evt_ref.py: the value, and a bound
on the kernel's float32 error grown operation by operation) whose accumulator is torch's float64
convolution (dgrad, wgrad: its autograd gradients); every output is poisoned (NaN) first. "int"
data (small integers, scalars in quarters) keep the accumulator exact; "float" data are uniform.
Tensors shaped like the output are passed in torch's channels-last form, flat or as the (M, N)
matrix (D itself flat then: Conv2dArguments takes D 4-D or flat).
"""

import pytest

from conv_case import (DEVICE, ConvCase, Shape, extents, problem_size, reference, shape_k,
                       to_layout)
from conv_graphs import GRAPHS
from conv_kernels import GRAPH_KERNELS, KERNELS
from evt_ref import R, check_output, evaluation
from evt_run import pick_scalar, poisoned, values

pytestmark = pytest.mark.gpu

# (N, H, W, R, S, pad (top, bottom, left, right), stride, dilation); dgrad takes unit strides.
SHAPES = {
    "3x3": (2, 9, 11, 3, 3, (1, 1, 1, 1), (1, 1), (1, 1)),
    "asym_stride_dil": (1, 13, 10, 3, 3, (2, 0, 1, 2), (2, 1), (1, 2)),
    "1x1_many_tiles": (4, 20, 18, 1, 1, (0, 0, 0, 0), (1, 1), (1, 1)),
}


def shape_of(spec, name):
    """Channels the 16-byte accesses take (C 40, K 72, neither a multiple of a tile); a persistent
    wgrad's C is its tile N (a tile never spans two filter taps)."""
    n, h, w, r, s, pad, stride, dil = SHAPES[name]
    c = spec.tile[1] if spec.kind == "wgrad" else 40
    if spec.kind == "dgrad":
        stride = (1, 1)
    return Shape(n, h, w, c, 72, r, s, pad, stride, dil)


def output_matrix(spec, t):
    """A logical output tensor (NHWC, or KRSC for wgrad) as the implicit GEMM's (M, N)."""
    return t.reshape(t.shape[0], -1) if spec.kind == "wgrad" else t.reshape(-1, t.shape[-1])


class GraphRun:
    """The operands of one launch, and the reference's inputs."""

    def __init__(self, key, shape, data, gen, rng, form="channels_last"):
        import torch

        self.spec, self.case, self.shape, self.data = KERNELS[key], GRAPHS[KERNELS[key].graph], \
            shape, data
        spec = self.spec
        a_ext, b_ext, self.d_ext = extents(spec, shape)
        ints = (-2, 2)
        self.a = values(a_ext, spec.element, data, gen, ints=ints)
        self.b = values(b_ext, spec.element, data, gen, ints=ints)
        out = output_matrix(spec, torch.empty(self.d_ext, device="meta"))
        self.m, self.n = out.shape
        self.inputs, self.ref_inputs = {}, {}
        for name, spec_in in self.case.inputs.items():
            kw = dict(lo=spec_in.lo, hi=spec_in.hi, ints=spec_in.ints, fill=spec_in.fill)
            if spec_in.kind == "scalar":
                value = pick_scalar(spec_in, data, rng)
                self.inputs[name] = value
                self.ref_inputs[name] = R(torch.tensor(value, dtype=torch.float64, device=DEVICE))
            elif spec_in.kind == "full":
                t = values(self.d_ext, spec_in.dtype, data, gen, **kw)
                self.inputs[name] = self.passed(t, form)
                self.ref_inputs[name] = R.exact(output_matrix(spec, t))
            elif spec_in.kind == "row":
                t = values((self.m,), spec_in.dtype, data, gen, **kw)
                self.inputs[name], self.ref_inputs[name] = t, R.exact(t.unsqueeze(-1))
            else:
                t = values((self.n,), spec_in.dtype, data, gen, **kw)
                self.inputs[name], self.ref_inputs[name] = t, R.exact(t.unsqueeze(0))
        self.outputs, self.passed_outputs = {}, {}
        for o in self.case.outputs:
            if o.kind == "store":
                t = poisoned(self.d_ext, o.dtype)
                # D itself is 4-D or flat (Conv2dArguments' rule); only the graph's operands
                # may be the (M, N) matrix.
                d_form = "flat" if form == "matrix" and o.name == self.case.d_name else form
                self.outputs[o.name], self.passed_outputs[o.name] = t, self.passed(t, d_form)
            else:
                t = poisoned({"row": (self.m,), "col": (self.n,), "all": (1,)}[o.kind], o.dtype)
                self.outputs[o.name] = self.passed_outputs[o.name] = t

    def passed(self, t, form):
        """A tensor shaped like the output as Conv2dArguments takes it (a view of ``t``)."""
        if form == "matrix":
            return output_matrix(self.spec, t)
        return to_layout(t, "output", self.spec, form)

    def launch(self, op, split_k=1, times=1):
        import tilecraft as cutlass

        d_name = self.case.d_name
        operands = dict(self.inputs)
        operands.update({n: t for n, t in self.passed_outputs.items() if n != d_name})
        output_op = op.epilogue_type(**operands)
        roles = {"fprop": ("act", "filter"), "dgrad": ("act", "filter"), "wgrad": ("act", "act")}
        role_a, role_b = roles[self.spec.kind]
        args = cutlass.Conv2dArguments(
            op, problem_size(ConvCase(self.spec.key, self.shape, split_k=split_k), self.shape),
            to_layout(self.a, role_a, self.spec, "flat"), to_layout(self.b, role_b, self.spec,
                                                                    "flat"),
            None, self.passed_outputs[d_name], output_op, split_k_slices=split_k)
        for _ in range(times):
            op.run(args)
            output_op.sync()
        return args

    def accumulator(self):
        """The implicit GEMM's accumulator as an R: exact for integer data whose magnitudes add
        up below 2^24, else (K + 8) 2^-23 (|operands| convolved)."""
        kind = self.spec.kind
        x, w, dy = {"fprop": (self.a, self.b, None), "dgrad": (None, self.b, self.a),
                    "wgrad": (self.b, None, self.a)}[kind]
        v = output_matrix(self.spec, reference(kind, x, w, dy, self.shape, "cross_correlation"))
        magnitude = output_matrix(self.spec, reference(
            kind, *(t if t is None else t.double().abs() for t in (x, w, dy)), self.shape,
            "cross_correlation"))
        if self.data == "int" and float(magnitude.max()) < 2.0 ** 24:
            return R(v)
        rtol = (shape_k(self.shape, kind) + 8) * 2.0 ** -23
        return R(v, rtol * magnitude)

    def check(self, what):
        with evaluation((self.m, self.n), self.case.fast_math):
            results = self.case.fn(self.accumulator(), **self.ref_inputs)
        results = results if isinstance(results, tuple) else (results,)
        assert len(results) == len(self.case.outputs), "test bug: outputs and returns differ"
        for o, want in zip(self.case.outputs, results):
            got = self.outputs[o.name]
            if o.kind == "store":
                got = output_matrix(self.spec, got)
            check_output(got, want, o.dtype, f"{o.name} ({o.dtype}, {o.kind}) of {what}")


@pytest.mark.parametrize("key", GRAPH_KERNELS)
@pytest.mark.parametrize("shape_name", list(SHAPES))
@pytest.mark.parametrize("data", ["int", "float"])
def test_graph(ops, gen, rng, seed_note, key, shape_name, data):
    shape = shape_of(KERNELS[key], shape_name)
    run = GraphRun(key, shape, data, gen, rng)
    run.launch(ops.get(key))
    run.check(f"{key} [{shape}] {data} {seed_note}")


@pytest.mark.parametrize("key", GRAPH_KERNELS)
@pytest.mark.parametrize("form", ["flat", "matrix", "nhwc"])
def test_graph_tensor_forms(ops, gen, rng, seed_note, key, form):
    """Outputs and full inputs flat, as the (M, N) matrix, or 4-D in layout order."""
    shape = shape_of(KERNELS[key], "3x3")
    run = GraphRun(key, shape, "int", gen, rng, form=form)
    run.launch(ops.get(key))
    run.check(f"{key} [{shape}] {form} {seed_note}")


@pytest.mark.parametrize("key", GRAPH_KERNELS)
def test_graph_relaunch_restarts_reductions(ops, gen, rng, seed_note, key):
    """Three launches of the same arguments: reductions start from their identity each time."""
    shape = shape_of(KERNELS[key], "3x3")
    run = GraphRun(key, shape, "int", gen, rng)
    run.launch(ops.get(key), times=3)
    run.check(f"{key} [{shape}] launched 3 times {seed_note}")


@pytest.mark.conv_kernels("s90_f16_wgrad_coop_sk_evt")
@pytest.mark.parametrize("split_k", [1, 3])
def test_graph_on_stream_k_wgrad_split_k(ops, gen, rng, seed_note, split_k):
    """The stream-K wgrad's partial sums meet before the epilogue; split_k_slices=1 leaves the
    decomposition to CUTLASS's heuristic."""
    key = "s90_f16_wgrad_coop_sk_evt"
    shape = shape_of(KERNELS[key], "1x1_many_tiles")
    run = GraphRun(key, shape, "float", gen, rng)
    run.launch(ops.get(key), split_k=split_k)
    run.check(f"{key} [{shape}] split_k {split_k} {seed_note}")


@pytest.mark.sanitizer
@pytest.mark.parametrize("key", GRAPH_KERNELS)
def test_graph_sanitizer_subset(ops, gen, rng, seed_note, key):
    """Ragged edges on a small problem: what compute-sanitizer memcheck runs."""
    shape = shape_of(KERNELS[key], "asym_stride_dil")
    run = GraphRun(key, shape, "int", gen, rng)
    run.launch(ops.get(key))
    run.check(f"{key} [{shape}] {seed_note}")
