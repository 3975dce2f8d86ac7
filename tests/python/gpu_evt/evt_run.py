"""One epilogue graph end to end: fresh random operands (never zeros), every output poisoned
(NaN), the seed's visitor flow (``op.epilogue_type(**operands)``, GemmArguments, ``op.run``,
``output_op.sync()``), then every element of every output against the case's function called
on float64 ``R`` values (evt_ref.py).

Data: "int" runs use small integers for A, B and the tensors and multiples of 1/4 for the
scalars, so that the accumulator and most of the epilogue are exact in float32 and the check is
equality with the reference rounded once; "float" runs use uniform values and the error bounds.
Values are made in float64 and converted ONCE to their element; the reference reads the
converted values back.
"""

import struct

from evt_cases import ELEMENT_NAMES
from evt_ref import FP8_MAX, R, check_output, evaluation, to64, torch_dtype

DEVICE = "cuda"


def _torch():
    import torch

    return torch


def f32(x):
    """x rounded to float32 (a scalar the kernel reads exactly)."""
    return struct.unpack("f", struct.pack("f", x))[0]


def convert(x, element):
    """float64 ``x`` to ``element`` (fp8 through float32, the conversion torch has everywhere)."""
    torch = _torch()
    if element in FP8_MAX:
        x = x.clamp(-FP8_MAX[element], FP8_MAX[element]).to(torch.float32)
    return x.to(torch_dtype(element))


def values(shape, element, data, gen, lo=-1.0, hi=1.0, ints=(-4, 4), fill="signed"):
    torch = _torch()
    if fill == "mask":
        x = torch.randint(0, 2, shape, generator=gen, device=DEVICE).to(torch.float64)
    elif data == "int":
        x = torch.randint(ints[0], ints[1] + 1, shape, generator=gen,
                          device=DEVICE).to(torch.float64)
    else:
        x = torch.rand(shape, generator=gen, device=DEVICE, dtype=torch.float64) * (hi - lo) + lo
    return convert(x, element)


def poisoned(shape, element):
    torch = _torch()
    return convert(torch.full(shape, float("nan"), dtype=torch.float64, device=DEVICE), element)


def place(x, layout):
    """``x`` stored RowMajor or ColumnMajor (column-major strides, the same logical shape)."""
    if layout == "ColumnMajor":
        return x.transpose(-1, -2).contiguous().transpose(-1, -2)
    return x.contiguous()


def pick_scalar(spec, data, rng):
    """A runtime scalar, a float32 number: "int" runs a non-zero multiple of 1/4 in
    [lo, hi], "float" runs uniform in [lo, hi]."""
    if data == "int":
        lo, hi = int(-(-spec.lo * 4 // 1)), int(spec.hi * 4 // 1)
        choices = [k / 4 for k in range(lo, hi + 1) if k != 0]
        return rng.choice(choices)
    return f32(rng.uniform(spec.lo, spec.hi))


def accumulator(a64, b64, kernel):
    """The accumulator as an R: exact where its terms are integers whose magnitudes add up below
    the accumulator's exact range (2^24; 2^13 for fp8 operands, whose wgmma adds in 13 mantissa
    bits), else (K + 8) 2^-23 (|A| @ |B|) (one truncating float32 addition per term), plus
    2^-10 for fp8 (one promotion block; the SM90 suite's bound)."""
    torch = _torch()
    v = a64 @ b64
    magnitude = a64.abs() @ b64.abs()
    K = a64.shape[-1]
    fp8 = kernel.ab in FP8_MAX
    integers = bool((a64 == torch.round(a64)).all()) and bool((b64 == torch.round(b64)).all())
    if integers and float(magnitude.max()) < 2.0 ** (13 if fp8 else 24):
        return R(v)
    rtol = (K + 8) * 2.0 ** -23 + (2.0 ** -10 if fp8 else 0.0)
    return R(v, rtol * magnitude)


def shapes(case, kernel, rng):
    """(M, N, K, data) runs of one item: a ragged 200 x 136-ish problem (2 x 2 tiles of 128,
    neither extent a multiple) with "int" and "float" data, a random small one, and a large one
    (a persistent CTA takes several tiles) - D's contiguous extent rounded up to what its full
    tensors need (16 bytes), K to a multiple of A's and B's 16 bytes."""
    cm, km = case.contiguous_multiple(), kernel.k_multiple

    def legal(m, n, k):
        up = lambda x, q: max(q, -(-x // q) * q)  # noqa: E731
        if case.layout == "ColumnMajor":
            m = up(m, cm)
        else:
            n = up(n, cm)
        return m, n, up(k, km)

    return [legal(200, 136, 72) + ("int",), legal(200, 136, 72) + ("float",),
            legal(rng.randint(1, 300), rng.randint(1, 300), km * rng.randint(1, 24)) + ("int",),
            legal(1800, 1096, 40) + ("float",)]


class Run:
    """The tensors of one launch and the reference's inputs."""

    def __init__(self, case, kernel, M, N, K, data, gen, rng, batch=0, shared=()):
        """``batch``: Batched mode with that many problems; full and row inputs then have one
        tensor per batch, except those named in ``shared`` (one for every batch); column inputs
        are always shared."""
        torch = _torch()
        self.case, self.M, self.N, self.K, self.batch = case, M, N, K, batch
        self.shared = set(shared)
        lead = (batch,) if batch else ()
        ab_lo = -1.0
        self.a = values(lead + (M, K), kernel.ab, data, gen, ab_lo, 1.0,
                        (-case.ab_ints, case.ab_ints))
        self.b = place(values(lead + (K, N), kernel.ab, data, gen, ab_lo, 1.0,
                              (-case.ab_ints, case.ab_ints)), "ColumnMajor")
        self.inputs, self.ref_inputs = {}, {}
        for name, spec in case.inputs.items():
            if spec.kind == "scalar":
                value = pick_scalar(spec, data, rng)
                self.inputs[name] = value
                self.ref_inputs[name] = R(torch.tensor(value, dtype=torch.float64,
                                                       device=DEVICE))
                continue
            kw = dict(lo=spec.lo, hi=spec.hi, ints=spec.ints, fill=spec.fill)
            own = () if name in self.shared else lead
            if spec.kind == "full":
                t = place(values(own + (M, N), spec.dtype, data, gen, **kw), case.layout)
                self.inputs[name], self.ref_inputs[name] = t, R.exact(t)
            elif spec.kind in ("row", "row2d"):   # one vector per batch: (batch, M)
                t = values(own + (M,), spec.dtype, data, gen, **kw)
                self.inputs[name] = t.unsqueeze(-1) if spec.kind == "row2d" else t
                self.ref_inputs[name] = R.exact(t.unsqueeze(-1))
            else:                                 # one vector shared by every batch: (N,)
                t = values((N,), spec.dtype, data, gen, **kw)
                self.inputs[name] = t.unsqueeze(0) if spec.kind == "col2d" else t
                self.ref_inputs[name] = R.exact(t.unsqueeze(0))
        self.outputs = {}
        for o in case.outputs:
            extent = {"store": (M, N), "row": (M,), "col": (N,), "all": ()}[o.kind]
            if o.kind == "all":
                shape = (batch,) if batch else (1,)
            else:
                shape = lead + extent
            t = poisoned(shape, o.dtype)
            self.outputs[o.name] = place(t, case.layout) if o.kind == "store" else t

    @property
    def D(self):
        return self.outputs[self.case.d_name]

    def operands(self, with_d=False):
        """epilogue_type's keyword arguments: every input and output by name (D too if asked)."""
        out = dict(self.inputs)
        out.update({n: t for n, t in self.outputs.items() if with_d or n != self.case.d_name})
        return out

    def arguments(self, op, output_op, d=True):
        import tilecraft as cutlass

        kw = {}
        if self.batch:
            kw = dict(gemm_mode=cutlass.gemm.Mode.Batched, batch=self.batch)
        if d:
            kw["D"] = self.D
        return cutlass.GemmArguments(operation=op,
                                     problem_size=cutlass.gemm.GemmCoord(self.M, self.N, self.K),
                                     A=self.a, B=self.b, output_op=output_op, **kw)

    def launch(self, op, times=1):
        """The seed's flow; returns the GemmArguments."""
        output_op = op.epilogue_type(**self.operands())
        args = self.arguments(op, output_op)
        for _ in range(times):
            op.run(args)
            output_op.sync()
        return args

    def check(self, kernel, what, outputs=None):
        """Every element of every output against the float64 reference."""
        outputs = self.outputs if outputs is None else outputs
        a64, b64 = to64(self.a), to64(self.b)
        acc = accumulator(a64, b64, kernel)
        for index in range(self.batch or 1):
            def pick(x, per_batch, index=index):
                return x if not (self.batch and per_batch) else x[index]

            ref_in = {}
            for name, value in self.ref_inputs.items():
                spec = self.case.inputs[name]
                per_batch = spec.kind in ("full", "row", "row2d") and name not in self.shared
                ref_in[name] = R(pick(value.v, per_batch), pick(value.e, per_batch))
            acc_b = R(pick(acc.v, True), pick(acc.e, True))
            with evaluation((self.M, self.N), self.case.fast_math):
                results = self.case.fn(acc_b, **ref_in)
            results = results if isinstance(results, tuple) else (results,)
            assert len(results) == len(self.case.outputs), "test bug: outputs and returns differ"
            for o, want in zip(self.case.outputs, results):
                got = outputs[o.name]
                if self.batch:
                    got = got[index:index + 1] if o.kind == "all" else got[index]
                where = f" (batch {index})" if self.batch else ""
                check_output(got, want, o.dtype,
                             f"{o.name} ({ELEMENT_NAMES[o.dtype]}, {o.kind}){where} of {what}")
