"""Custom epilogues (issue 15) on the CPU: every bad input gets a clear error at trace,
description or argument time, and nothing compiles or launches; names and cache keys are equal
for equal graphs and differ for different ones; the GPU suite's graphs (tests/python/gpu_evt)
trace, validate and describe.

Argument-time errors use numpy host arrays: GemmArguments checks the epilogue graph's operands
before it looks for a GPU (without one, good arguments end at "no usable CUDA device"). This
module points TILECRAFT_NVCC at a path that does not exist (a compile would fail with another
error) and checks after each refusal that the operation is not compiled and that the cache holds
no new module.
"""

import inspect
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import tilecraft as cutlass
from tilecraft import *  # noqa: F401,F403
from tilecraft.epilogue import trace

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu_evt"))

import evt_cases  # noqa: E402  (the GPU suite's graphs; imports neither torch nor CUDA)
import evt_kernels  # noqa: E402
from evt_cases import Example  # noqa: E402

pytestmark = pytest.mark.usefixtures("no_compiler")

F16, BF16, F32, E4M3 = cutlass.float16, cutlass.bfloat16, cutlass.float32, cutlass.e4m3
TC, MA = cutlass.OpClass.TensorOp, MathOperation.multiply_add
KS, TS = cutlass.KernelScheduleType, cutlass.TileSchedulerType
ROW, COL = cutlass.RowMajor, cutlass.ColumnMajor
Unsupported = cutlass.UnsupportedError
M, N, K = 200, 136, 72


def relu(x):  # names the tracer reads; never called by these tests
    return x


gelu_tanh = clamp = gelu = relu


def ex(*shape, dtype="f16"):
    return Example(shape, dtype)


def acc():
    return ex(M, N, dtype="f32")


# ---- helpers ----------------------------------------------------------------------------------

def line_of(fn, text):
    """The file line of ``fn`` whose source contains ``text``."""
    lines, first = inspect.getsourcelines(fn)
    hits = [first + i for i, line in enumerate(lines) if text in line]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def sm90_tile(ab=F16):
    math = MathInstruction([64, 128, 16], ab, ab, F32, TC, MA)
    return TileDescription([128, 128, 64], 0, None, math, cluster_shape=[1, 1, 1],
                           kernel_schedule=KS.TmaWarpSpecializedCooperative,
                           epilogue_schedule=cutlass.EpilogueScheduleType.Auto,
                           tile_scheduler=TS.Persistent)


def sm80_tile(ab=F16):
    return TileDescription([128, 128, 32], 3, [2, 2, 1],
                           MathInstruction([16, 8, 16], ab, ab, F32, TC, MA))


def graph_op(graph, arch=90, out=F16, layout=ROW, ab=F16):
    tile = sm90_tile(ab) if arch == 90 else sm80_tile(ab)
    bits = {F16: 16, BF16: 16, F32: 32, E4M3: 8}
    return GemmOperationUniversal(arch=arch, tile_description=tile,
                                  A=TensorDescription(ab, ROW, 8),
                                  B=TensorDescription(ab, COL, 8),
                                  C=TensorDescription(out, layout, 128 // bits[out]),
                                  epilogue_functor=graph, visitor=True)


def describe80(graph, **kw):
    """graph_op at arch 80, or None while arch-80 kernels cannot take a graph yet (the
    description's refusal names exactly that; any other error is raised)."""
    try:
        return graph_op(graph, arch=80, **kw)
    except Unsupported as error:
        if evt_kernels.SM80_PENDING in str(error):
            return None
        raise


def seed_epi(accum, alpha, C, beta, bias):
    D = relu(alpha * accum + beta * C + bias)
    return D, D.abs().max()


def seed_graph(**overrides):
    examples = dict(accum=acc(), alpha=1.0, C=ex(M, N), beta=0.5, bias=ex(N), D=ex(M, N))
    examples.update(overrides)
    return trace(seed_epi, **examples)


def host(m=M, n=N, k=K):
    a = np.ones((m, k), np.float16)
    b = np.asfortranarray(np.ones((k, n), np.float16))
    return a, b


def seed_operands(m=M, n=N, **overrides):
    operands = dict(alpha=1.0, C=np.ones((m, n), np.float16), beta=0.5,
                    bias=np.ones(n, np.float16), out1=np.zeros(1, np.float32))
    operands.update(overrides)
    return {k: v for k, v in operands.items() if v is not None}


def arguments(op, operands, m=M, n=N, k=K, d=None, **kw):
    a, b = host(m, n, k)
    d = np.zeros((m, n), np.float16) if d is None else d
    return GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(m, n, k), A=a, B=b,
                         D=d, output_op=op.epilogue_type(**operands), **kw)


def refused(op, error, pattern, operands, **kw):
    with pytest.raises(error, match=pattern):
        arguments(op, operands, **kw)
    assert not op.is_compiled()


# ---- trace time ---------------------------------------------------------------------------------

def loop_epi(accum):
    D = accum
    for _ in range(2):  # refused: a loop
        D = D + 1.0
    return D


def if_epi(accum, C):
    if C:  # refused: an if
        return accum
    return accum


def power_epi(accum):
    D = accum ** 2  # refused: a power
    return D


def subscript_epi(accum):
    D = accum[0] + accum  # refused: a subscript
    return D


def square_epi(accum):
    D = square(accum)  # noqa: F821  refused: square has no Python spelling
    return D


def keyword_epi(accum):
    D = relu(accum, inplace=True)  # refused: keyword arguments
    return D


def dim_epi(accum):
    D = accum
    return D, D.sum(dim=2)  # refused: no dim 2


def reduction_use_epi(accum):
    m = accum.max()
    D = accum - m  # refused: a reduction read in the epilogue
    return D


def lambda_epi(accum):
    D = (lambda x: x)(accum)  # refused: a lambda
    return D


def method_epi(accum):
    D = accum.exp()  # refused: an unknown method
    return D


def activation_arity_epi(accum):
    D = clamp(accum, 0.0)  # refused: clamp takes bounds
    return D


@pytest.mark.parametrize("fn,match", [
    (loop_epi, "For statements are not epilogue code"),
    (if_epi, "If statements are not epilogue code"),
    (power_epi, "BinOp is not an epilogue expression"),
    (subscript_epi, "Subscript is not an epilogue expression"),
    (square_epi, "'square' with 1 argument"),
    (keyword_epi, "keyword arguments are taken by the reduction methods only"),
    (dim_epi, r"dim: expected 0 \(one value per column\) or 1"),
    (reduction_use_epi, "a reduction's result can only be returned"),
    (lambda_epi, "calls are to the epilogue's functions and methods by name"),
    (method_epi, r"the method '.exp\(\)' is not an epilogue operation"),
    (activation_arity_epi, r"clamp takes 3 argument\(s\), got 2"),
], ids=lambda x: getattr(x, "__name__", "match"))
def test_unsupported_construct_names_the_function_and_its_line(fn, match, nothing_compiles):
    line = line_of(fn, "refused")
    examples = {"accum": acc()}
    if "C" in inspect.signature(fn).parameters:
        examples["C"] = ex(M, N)
    with pytest.raises(ValueError, match=rf"^epilogue {fn.__name__}, line {line}: .*{match}"):
        trace(fn, **examples)


def test_broadcast_of_the_wrong_length_is_refused_at_trace():
    for shape in [(N + 8,), (1, N - 8), (M + 1, 1), (M, N + 8), (M, 2)]:
        with pytest.raises(ValueError, match=rf"^bias: expected \({M}, {N}\) like the "
                                             rf"accumulator, \({M}, 1\) for one value per row, "
                                             rf"or \({N},\) / \(1, {N}\) for one per column; got "
                                             + re.escape(str(shape))):
            seed_graph(bias=ex(*shape))


def test_an_output_the_function_does_not_produce_is_refused_at_trace():
    with pytest.raises(ValueError, match=r"^amax: an example output seed_epi does not return "
                                         r"\(it returns D, out1\)"):
        seed_graph(amax=ex(1, dtype="f32"))


def test_reductions_over_fp8_are_refused():
    def stored(accum):
        D = relu(accum).to(torch.float8_e4m3fn)  # noqa: F821
        return D, D.abs().max()

    with pytest.raises(ValueError, match=rf"^epilogue stored, line {line_of(stored, 'return')}: "
                                         "reduces 'D', an fp8 output: reduce the value before it "
                                         "is rounded to fp8"):
        trace(stored, accum=acc(), D=ex(M, N, dtype="e4m3"))

    def converted(accum):
        q = relu(accum).to(torch.float8_e5m2)  # noqa: F821
        D = accum
        return D, q.sum(dim=1)

    with pytest.raises(ValueError, match=rf"^epilogue converted, line "
                                         rf"{line_of(converted, 'return')}: node \d+ \(reduce "
                                         r"'out1'\): "
                                         r"reduces node \d+ \(convert\), an fp8 value "
                                         r"\(float8_e5m2\): reduce the value before its "
                                         "conversion"):
        trace(converted, accum=acc(), D=ex(M, N))


def test_examples_of_the_wrong_type_or_shape_are_refused():
    with pytest.raises(TypeError, match=r"^C: expected a tensor of a GEMM element type, got "
                                        r"dtype 'int64'"):
        seed_graph(C=np.zeros((M, N), np.int64))
    with pytest.raises(TypeError, match=r"^alpha: expected a number or a tensor, got '1' \(str\)"):
        seed_graph(alpha="1")
    with pytest.raises(TypeError, match=r"^beta: expected a number or a tensor, got True"):
        seed_graph(beta=True)
    with pytest.raises(ValueError, match=r"^accum: expected a 2-D tensor \(M, N\)"):
        seed_graph(accum=ex(M, N, 2, dtype="f32"))
    with pytest.raises(ValueError, match=r"^D: expected an output of \(200, 136\), got \(200, 1\)"):
        seed_graph(D=ex(M, 1))
    with pytest.raises(ValueError, match=r"^out1: expected an output of one value, got \(2,\)"):
        seed_graph(out1=ex(2, dtype="f32"))
    with pytest.raises(ValueError, match=r"^bias: an example value for this parameter of seed_epi "
                                         "is required"):
        trace(seed_epi, accum=acc(), alpha=1.0, C=ex(M, N), beta=0.5, D=ex(M, N))


# ---- description time ---------------------------------------------------------------------------

def test_visitor_takes_graphs_and_only_graphs(nothing_compiles):
    lc = LinearCombination(F16, 8, F32, F32)
    with pytest.raises(TypeError, match=r"^epilogue_functor: expected an epilogue graph "
                                        r"\(tilecraft.epilogue.trace\(fn, ...\)\), got "):
        graph_op(lc)
    with pytest.raises(TypeError, match=r"^epilogue_functor: expected an epilogue functor "
                                        r"\(LinearCombination\(...\), .*got EpilogueGraph\("):
        GemmOperationUniversal(arch=90, tile_description=sm90_tile(),
                               A=TensorDescription(F16, ROW, 8), B=TensorDescription(F16, COL, 8),
                               C=TensorDescription(F16, ROW, 8), epilogue_functor=seed_graph(),
                               visitor=False)
    with pytest.raises(TypeError, match=r"^visitor: expected True or False, got 1 \(int\)"):
        GemmOperationUniversal(90, sm90_tile(), TensorDescription(F16, ROW, 8),
                               TensorDescription(F16, COL, 8), TensorDescription(F16, ROW, 8),
                               seed_graph(), visitor=1)


def test_grouped_operations_take_no_graph_and_conv_ones_take_it_on_sm90_only(nothing_compiles):
    A, B, C = (TensorDescription(F16, ROW, 8), TensorDescription(F16, COL, 8),
               TensorDescription(F16, ROW, 8))
    graph = seed_graph()
    for arch, tile in ((90, sm90_tile()), (80, sm80_tile())):
        with pytest.raises(TypeError, match=r"^epilogue_functor: expected an epilogue functor"):
            GemmOperationGrouped(arch, tile, A, B, C, graph)
        with pytest.raises(TypeError, match="unexpected keyword argument 'visitor'"):
            GemmOperationGrouped(arch, tile, A, B, C, graph, visitor=True)
    nhwc = TensorDescription(F16, cutlass.TensorNHWC, 8)
    with pytest.raises(Unsupported, match=r"^epilogue graph: convolutions take custom epilogues "
                                          r"on persistent SM90 kernels .* got arch=80"):
        Conv2dOperation(cutlass.conv.Operator.fprop, cutlass.conv.IteratorAlgorithm.optimized, 80,
                        sm80_tile(), nhwc, nhwc, nhwc, cutlass.conv.StrideSupport.Strided, graph,
                        cutlass.IdentitySwizzle1)


def test_d_type_must_be_c_type(nothing_compiles):
    with pytest.raises(ValueError, match=r"^epilogue graph: its D output 'D' is float32, but C "
                                         r"\(the kernel's D\) is float16"):
        graph_op(seed_graph(D=ex(M, N, dtype="f32")))
    graph_op(seed_graph(D=ex(M, N, dtype="f32")), out=F32)   # described
    describe80(seed_graph(D=ex(M, N, dtype="f32")), out=F32)
    with pytest.raises(ValueError, match=r"its D output 'D' is bfloat16, but C .* is float16"):
        graph_op(seed_graph(D=ex(M, N, dtype="bf16")))
    if describe80(seed_graph()) is not None:   # once arch 80 takes graphs, the same rule
        with pytest.raises(ValueError, match=r"its D output 'D' is bfloat16, but C .* is "
                                             "float16"):
            graph_op(seed_graph(D=ex(M, N, dtype="bf16")), arch=80)


def gelu_tanh_epi(accum, bias):
    D = gelu_tanh(accum + bias)
    return D


def clamp_epi(accum, lo):
    D = clamp(accum, lo, 6.0)
    return D


def fp8_aux_epi(accum, amax_prev):
    D = relu(accum)
    q = (D * (448.0 / amax_prev)).to(torch.float8_e4m3fn)  # noqa: F821
    return D, q, D.abs().max()


def test_arch_80_refuses_sm90_only_epilogues(nothing_compiles):
    cases = [
        (trace(gelu_tanh_epi, accum=acc(), bias=ex(N), D=ex(M, N)), r"node \d+ \(activation\): gelu_tanh is "
                                                        r"an arch=90 activation"),
        (trace(clamp_epi, accum=acc(), lo=-1.0, D=ex(M, N)), r"node \d+ \(activation\): clamp is an arch=90 "
                                                 r"activation"),
        (trace(fp8_aux_epi, accum=acc(), amax_prev=2.0, D=ex(M, N), q=ex(M, N, dtype="e4m3")),
         r"node \d+ \(convert\): float8_e4m3 values are arch=90 epilogues \(SM80 kernels have "
         r"no fp8\)"),
    ]
    for graph, message in cases:
        graph.validate_for(90)
        graph_op(graph)                                   # arch 90 describes it
        with pytest.raises(Unsupported, match=message):
            graph.validate_for(80)
        with pytest.raises(Unsupported, match=message):
            graph_op(graph, arch=80)


def test_fp8_input_tensors_are_arch_90_only(nothing_compiles):
    def scaled(accum, s):
        D = accum * s
        return D

    graph = trace(scaled, accum=acc(), s=ex(M, N, dtype="e4m3"), D=ex(M, N))
    graph_op(graph)
    with pytest.raises(Unsupported, match=r"node 1 \(tensor 's'\): float8_e4m3 values are "
                                          "arch=90 epilogues"):
        graph_op(graph, arch=80)


def test_graphs_the_kernels_cannot_fuse(nothing_compiles):
    def only_reductions(accum):
        return accum.sum(dim=1)

    graph = trace(only_reductions, accum=acc())
    with pytest.raises(Unsupported, match="^epilogue graph: a GEMM kernel writes D; store a value"):
        graph_op(graph)

    def half_reduction(accum):
        D = accum
        return D, D.sum(dim=0)

    graph = trace(half_reduction, accum=acc(), D=ex(M, N), out1=ex(N))
    with pytest.raises(Unsupported, match=r"node \d+ \(reduce 'out1'\): reductions accumulate "
                                          "across tiles with float32 atomics; expected a Float32 "
                                          "output, got float16"):
        graph_op(graph)
    with pytest.raises(ValueError, match="^arch: expected 80 .* or 90 .*, got 70"):
        graph.validate_for(70)


def test_fp8_d_and_fp8_operands_take_a_graph(nothing_compiles):
    """fp8 D from 16-bit operands (the graph scales and converts it), and an e4m3 GEMM without
    the scales fusion (the graph multiplies by the scales it reads); integer operands keep
    their output types."""
    def fp8_out(accum, scale):
        y = relu(accum * scale)
        D = y.to(torch.float8_e4m3fn)  # noqa: F821
        return D, y.abs().max()

    graph = trace(fp8_out, accum=acc(), scale=1.0, D=ex(M, N, dtype="e4m3"))
    assert "_evt" in graph_op(graph, out=E4M3).procedural_name()
    math = MathInstruction([64, 128, 32], E4M3, E4M3, F32, TC, MA)
    tile = TileDescription([128, 128, 128], 0, None, math, cluster_shape=[1, 1, 1],
                           kernel_schedule=KS.TmaWarpSpecializedCooperative,
                           tile_scheduler=TS.Persistent)
    op = GemmOperationUniversal(arch=90, tile_description=tile,
                                A=TensorDescription(E4M3, ROW, 16),
                                B=TensorDescription(E4M3, COL, 16),
                                C=TensorDescription(E4M3, ROW, 16), epilogue_functor=graph,
                                visitor=True)
    assert not op.is_compiled()
    with pytest.raises(Unsupported, match="fp8 outputs are SM90 epilogue fusions"):
        graph_op(graph, arch=80, out=E4M3)


# ---- argument time ------------------------------------------------------------------------------

@pytest.fixture(params=[90, 80], ids=["sm90", "sm80"])
def seed_op(request):
    op = graph_op(seed_graph(), arch=90) if request.param == 90 else describe80(seed_graph())
    if op is None:
        pytest.skip("arch=80 kernels cannot take an epilogue graph yet (the description says so)")
    return op


def test_good_arguments_reach_the_device_check(gpu_reason, seed_op, nothing_compiles):
    """The operands the cases below start from pass every check: without a GPU the first error
    is the device's (skipped where a GPU is present: the next step would compile)."""
    if gpu_reason is None:
        pytest.skip("a GPU is present")
    refused(seed_op, Unsupported, "^no usable CUDA device", seed_operands())
    # D given through output_op, by its name in the function.
    with pytest.raises(Unsupported, match="^no usable CUDA device"):
        a, b = host()
        GemmArguments(operation=seed_op, problem_size=cutlass.gemm.GemmCoord(M, N, K), A=a, B=b,
                      output_op=seed_op.epilogue_type(**seed_operands(),
                                                      D=np.zeros((M, N), np.float16)))
    # (M, 1) / (1, N) broadcast operands as the traced function spells them.
    refused(seed_op, Unsupported, "^no usable CUDA device",
            seed_operands(bias=np.ones((1, N), np.float16)))
    assert not seed_op.is_compiled()


def test_broadcast_of_the_wrong_length_is_refused_at_arguments(seed_op, nothing_compiles):
    for bias in (np.ones(N + 8, np.float16), np.ones(M, np.float16)):
        refused(seed_op, ValueError, rf"^epilogue.bias: expected a contiguous vector of N={N} "
                                     rf"elements, got float16\[{bias.shape[0]}\]",
                seed_operands(bias=bias))
    refused(seed_op, ValueError, rf"^epilogue.bias: expected a vector of N={N} or \(batch=1, "
                                 rf"N={N}\) with contiguous rows, got float16\[2, {N}\]",
            seed_operands(bias=np.ones((2, N), np.float16)))
    refused(seed_op, ValueError, r"^epilogue.bias: expected a contiguous vector of N=136 elements, "
                                 r"got float16\[136\] strides \(2,\)",
            seed_operands(bias=np.ones(2 * N, np.float16)[::2]))
    refused(seed_op, ValueError, r"^epilogue.bias: the vector .* must start 16-byte aligned",
            seed_operands(bias=np.ones(N + 1, np.float16)[1:]))

    def row_epi(accum, rs):
        D = accum * rs
        return D, D.sum(dim=1)

    op = graph_op(trace(row_epi, accum=acc(), rs=ex(M, 1, dtype="f32"), D=ex(M, N)))
    good = dict(rs=np.ones(M, np.float32), out1=np.zeros(M, np.float32))
    refused(op, ValueError, rf"^epilogue.rs: expected a contiguous vector of M={M} elements, got "
                            rf"float32\[{M + 8}\]", dict(good, rs=np.ones(M + 8, np.float32)))
    refused(op, ValueError, rf"^epilogue.out1: expected a contiguous vector of M={M} elements, got "
                            rf"float32\[{N}\]", dict(good, out1=np.zeros(N, np.float32)))


def test_an_operand_the_graph_does_not_have_is_refused(seed_op, nothing_compiles):
    refused(seed_op, ValueError, r"^epilogue.E: the epilogue graph has no tensor of that name \(it "
                                 r"takes C, bias, out1; its D output 'D' is the GEMM's D\)",
            seed_operands(E=np.zeros((M, N), np.float16)))
    refused(seed_op, ValueError, r"^epilogue.amax: the epilogue graph has no tensor of that name",
            seed_operands(out1=None, amax=np.zeros(1, np.float32)))
    refused(seed_op, ValueError, r"^epilogue.gamma: the epilogue graph has no scalar of that name "
                                 r"\(it takes alpha, beta\)", seed_operands(gamma=2.0))
    refused(seed_op, ValueError, r"^epilogue.alpha: the epilogue graph has no tensor of that name",
            seed_operands(alpha=np.ones(1, np.float32)))
    refused(seed_op, ValueError, r"^epilogue.C: the epilogue graph has no scalar of that name",
            seed_operands(C=1.0))


def test_a_missing_operand_is_refused(seed_op, nothing_compiles):
    refused(seed_op, ValueError, r"^epilogue.C: the epilogue graph needs an input tensor shaped "
                                 "like D of float16; none was given", seed_operands(C=None))
    refused(seed_op, ValueError, r"^epilogue.bias: the epilogue graph needs an input of N values "
                                 "of float16; none was given", seed_operands(bias=None))
    refused(seed_op, ValueError, r"^epilogue.out1: the epilogue graph needs a reduction's output "
                                 r"\(one value\) of float32; none was given",
            seed_operands(out1=None))
    refused(seed_op, ValueError, r"^epilogue.beta: the epilogue graph reads this scalar; none was "
                                 "given", seed_operands(beta=None))
    with pytest.raises(ValueError, match=r"^epilogue.C: the epilogue graph needs an input"):
        a, b = host()
        GemmArguments(operation=seed_op, problem_size=cutlass.gemm.GemmCoord(M, N, K), A=a, B=b,
                      D=np.zeros((M, N), np.float16))   # no output_op at all
    with pytest.raises(TypeError, match="^GemmArguments\\(\\) missing required argument 'D'"):
        a, b = host()
        GemmArguments(operation=seed_op, problem_size=cutlass.gemm.GemmCoord(M, N, K), A=a, B=b,
                      output_op=seed_op.epilogue_type(**seed_operands()))
    assert not seed_op.is_compiled()


def test_operands_of_the_wrong_type_or_shape_are_refused(seed_op, nothing_compiles):
    refused(seed_op, ValueError, r"^epilogue.C: expected float16 \(the epilogue graph's type\), "
                                 "got float32", seed_operands(C=np.ones((M, N), np.float32)))
    refused(seed_op, ValueError, r"^epilogue.bias: expected float16 \(the epilogue graph's type\), "
                                 "got float32", seed_operands(bias=np.ones(N, np.float32)))
    refused(seed_op, ValueError, r"^epilogue.out1: expected float32 \(the epilogue graph's type\), "
                                 "got float16", seed_operands(out1=np.zeros(1, np.float16)))
    refused(seed_op, ValueError, rf"^epilogue.C: expected shape \({M}, {N}\), got float16\[{M}, "
                                 rf"{N - 8}\]", seed_operands(C=np.ones((M, N - 8), np.float16)))
    refused(seed_op, ValueError, r"^epilogue.C: RowMajor needs unit stride along columns",
            seed_operands(C=np.asfortranarray(np.ones((M, N), np.float16))))
    refused(seed_op, ValueError, r"^epilogue.out1: expected one value, got float32\[2\]",
            seed_operands(out1=np.zeros(2, np.float32)))
    refused(seed_op, ValueError, r"^epilogue.alpha: expected a finite number, got nan",
            seed_operands(alpha=float("nan")))
    with pytest.raises(TypeError, match=r"^epilogue\[beta\]: expected a tensor \(torch, cupy, "
                                        r"numpy\) or a number, got '0.5' \(str\)"):
        arguments(seed_op, seed_operands(beta="0.5"))
    refused(seed_op, ValueError, r"^D: expected float16 \(from its TensorDescription\), got "
                                 "float32", seed_operands(), d=np.zeros((M, N), np.float32))
    assert not seed_op.is_compiled()


def test_c_d_and_output_op_mistakes(seed_op, nothing_compiles):
    a, b = host()
    d = np.zeros((M, N), np.float16)
    size = cutlass.gemm.GemmCoord(M, N, K)
    with pytest.raises(ValueError, match=r"^C: the operation's epilogue graph reads its own "
                                         "inputs; pass C as one of its operands"):
        GemmArguments(operation=seed_op, problem_size=size, A=a, B=b, C=np.ones((M, N), np.float16),
                      D=d, output_op=seed_op.epilogue_type(**seed_operands()))
    with pytest.raises(ValueError, match=r"^output_op.D: the epilogue's D output is GemmArguments' "
                                         "D; got two different tensors for it"):
        GemmArguments(operation=seed_op, problem_size=size, A=a, B=b, D=d,
                      output_op=seed_op.epilogue_type(**seed_operands(), D=d.copy()))
    with pytest.raises(TypeError, match=r"^epilogue_type: an epilogue visitor tree takes its "
                                        "values by name"):
        seed_op.epilogue_type(1.0, 0.5)
    # A graph's operands given to an operation without a graph.
    plain = GemmOperationUniversal(arch=90, tile_description=sm90_tile(),
                                   A=TensorDescription(F16, ROW, 8),
                                   B=TensorDescription(F16, COL, 8),
                                   C=TensorDescription(F16, ROW, 8),
                                   epilogue_functor=LinearCombination(F16, 8, F32, F32))
    with pytest.raises(ValueError, match=r"^epilogue\.\w+: the operation has no epilogue graph; it "
                                         "takes no epilogue operands"):
        GemmArguments(operation=plain, problem_size=size, A=a, B=b, D=d,
                      output_op=seed_op.epilogue_type(**seed_operands()))
    assert not seed_op.is_compiled() and not plain.is_compiled()


def test_fp8_output_extent_and_batched_outputs(nothing_compiles):
    op = graph_op(trace(fp8_aux_epi, accum=acc(), amax_prev=2.0, D=ex(M, N),
                        q=ex(M, N, dtype="e4m3")))
    torch = pytest.importorskip("torch")   # numpy has no fp8 (torch CPU tensors are host arrays)
    q = torch.zeros((M, N), dtype=torch.float8_e4m3fn)
    refused(op, ValueError, rf"^epilogue.q: leading dimension {N} is not a multiple of the "
                            "16-element alignment", dict(amax_prev=2.0, q=q,
                                                         out2=np.zeros(1, np.float32)))

    def batched(accum, C):
        D = accum + C
        return D, D.sum(dim=1), D.max()

    op = graph_op(trace(batched, accum=acc(), C=ex(M, N), D=ex(M, N)))
    a, b = (np.stack([x] * 3) for x in host())
    d = np.zeros((3, M, N), np.float16)
    size = cutlass.gemm.GemmCoord(M, N, K)
    good = dict(C=np.ones((3, M, N), np.float16), out1=np.zeros((3, M), np.float32),
                out2=np.zeros(3, np.float32))

    def batched_args(**operands):
        return GemmArguments(operation=op, problem_size=size, A=a, B=b, D=d,
                             output_op=op.epilogue_type(**dict(good, **operands)),
                             gemm_mode=cutlass.gemm.Mode.Batched, batch=3)

    with pytest.raises(ValueError, match=rf"^epilogue.out1: expected \(batch=3, M={M}\), one "
                                         rf"vector per batch, got float32\[{M}\]"):
        batched_args(out1=np.zeros(M, np.float32))
    with pytest.raises(ValueError, match=r"^epilogue.out2: expected one value per batch \(3,\), "
                                         r"got float32\[1\]"):
        batched_args(out2=np.zeros(1, np.float32))
    assert not op.is_compiled()


# ---- names and cache keys -----------------------------------------------------------------------

def test_equal_graphs_have_equal_names_and_keys(nothing_compiles):
    small = seed_graph(accum=ex(6, 10, dtype="f32"), C=ex(6, 10), bias=ex(10), D=ex(6, 10))
    wide = seed_graph(bias=ex(1, N))
    for other in (seed_graph(), small, wide):
        assert str(other) == str(seed_graph())
        assert other.key == seed_graph().key
        assert other == seed_graph()
    for arch in (90, 80):
        ops = [graph_op(g) if arch == 90 else describe80(g) for g in (seed_graph(), small, wide)]
        if None in ops:
            continue   # arch 80 cannot take graphs yet
        names = {op.procedural_name() for op in ops}
        assert len(names) == 1, names
        (name,) = names
        assert name.endswith(f"_evt{seed_graph().key}") or f"_evt{seed_graph().key}_" in name
    assert re.fullmatch(r"[0-9a-f]{16}", seed_graph().key)


def silu(x):  # a name the tracer reads; never called
    return x


def swiglu_epi(accum, U):
    D = silu(accum) * U
    return D


@cutlass.epilogue.fast_math
def swiglu_fast_epi(accum, U):
    D = silu(accum) * U
    return D


def test_fast_math_is_part_of_the_graph_its_text_and_its_kernel(nothing_compiles):
    examples = dict(accum=acc(), U=ex(M, N), D=ex(M, N))
    precise = trace(swiglu_epi, **examples)
    fast = trace(swiglu_fast_epi, **examples)
    assert not precise.fast_math and fast.fast_math
    assert str(fast) == str(precise) + " fast_math"
    assert fast != precise and fast.key != precise.key
    assert graph_op(fast).procedural_name() != graph_op(precise).procedural_name()
    precise.fast_math = True   # the property, as the decorator sets it
    assert precise == fast
    for arch in (90, 80):      # both architectures take fast math
        fast.validate_for(arch)
    with pytest.raises(TypeError, match=r"^fn: expected a Python function, got 42 \(int\)"):
        cutlass.epilogue.fast_math(42)
    for wrong in (1, "yes", None):
        with pytest.raises(TypeError, match=r"^fast_math: expected True or False, got "):
            precise.fast_math = wrong
    assert precise.fast_math


def test_different_graphs_have_different_names_and_keys(nothing_compiles):
    def other_constant(accum, alpha, C, beta, bias):
        D = relu(alpha * accum + beta * C + bias * 2.0)
        return D, D.abs().max()

    def other_op(accum, alpha, C, beta, bias):
        D = relu(alpha * accum - beta * C + bias)
        return D, D.abs().max()

    def other_reduction(accum, alpha, C, beta, bias):
        D = relu(alpha * accum + beta * C + bias)
        return D, D.max()

    def other_axis(accum, alpha, C, beta, bias):
        D = relu(alpha * accum + beta * C + bias)
        return D, D.abs().max(dim=1)

    def other_activation(accum, alpha, C, beta, bias):
        D = gelu(alpha * accum + beta * C + bias)
        return D, D.abs().max()

    examples = dict(accum=acc(), alpha=1.0, C=ex(M, N), beta=0.5, bias=ex(N), D=ex(M, N))
    graphs = {
        "seed": seed_graph(),
        "bias per row": seed_graph(bias=ex(M, 1)),
        "C bf16": seed_graph(C=ex(M, N, dtype="bf16")),
        "named amax": trace(seed_epi, **examples),
        "constant": trace(other_constant, **examples),
        "op": trace(other_op, **examples),
        "reduction": trace(other_reduction, **examples),
        "axis": trace(other_axis, **dict(examples, out1=ex(M, dtype="f32"))),
        "activation": trace(other_activation, **examples),
    }
    del graphs["named amax"]   # the same graph as "seed" (out1 is its name either way)
    keys = {name: g.key for name, g in graphs.items()}
    assert len(set(keys.values())) == len(keys), keys
    assert len({str(g) for g in graphs.values()}) == len(graphs)
    names = {graph_op(g).procedural_name() for g in graphs.values()}
    assert len(names) == len(graphs)
    # The kernel's own parts are in the name too.
    sm80 = describe80(seed_graph())
    if sm80 is not None:
        assert sm80.procedural_name() != graph_op(seed_graph()).procedural_name()


def test_names_are_stable_across_processes():
    """The key is a hash of the canonical text, not of memory: a fresh interpreter agrees."""
    import subprocess

    code = ("import sys; sys.path.insert(0, %r); import test_epilogue_graph_cpu as t; "
            "print(t.seed_graph().key, str(t.seed_graph()))") % str(Path(__file__).parent)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split(" ", 1)
    assert out[0] == seed_graph().key
    assert out[1].strip() == str(seed_graph())


# ---- the GPU suite's graphs ---------------------------------------------------------------------

def test_the_gpu_suite_has_25_distinct_graphs_covering_every_node_kind():
    graphs = [evt_cases.make_graph(case) for case in evt_cases.CASES]
    keys = {g.key for g in graphs}
    assert len(evt_cases.CASES) >= 25 and len(keys) == len(graphs)
    text = " ".join(str(g) for g in graphs)
    vocabulary = ["acc", "scalar(", "constant(", ",full,", ",row,", ",column,", "negate(", "abs(",
                  "square(", "reciprocal(", "relu(", "leaky_relu(", "tanh(", "sigmoid(", "silu(",
                  "hardswish(", "gelu(", "gelu_tanh(", "clamp(", "add(", "sub(", "mul(", "div(",
                  "max(", "min(", "less(", "less_equal(", "greater(", "greater_equal(", "equal(",
                  "not_equal(", "select(", "convert(", ",e4m3)", ",e5m2)", "store("]
    missing = [word for word in vocabulary if word not in text]
    assert not missing, missing
    for op in ("sum", "max", "abs_max"):
        for axis in ("row", "column", "all"):
            assert f",{op},{axis},f32)" in text, (op, axis)


@pytest.mark.parametrize("case", evt_cases.CASES, ids=lambda c: c.name)
def test_the_gpu_suite_graphs_trace_validate_and_describe(case, nothing_compiles):
    """Each case's graph validates for arch 90, and for arch 80 exactly where the table says;
    its operations are described (not compiled) on its kernels; its outputs are the table's."""
    import evt_kernels

    graph = evt_cases.make_graph(case)
    graph.validate_for(90)
    assert sorted(graph.output_names) == sorted(o.name for o in case.outputs)
    assert graph.d_output == case.d_name
    if case.refused80:
        with pytest.raises(Unsupported, match=case.refused80):
            graph.validate_for(80)
    else:
        graph.validate_for(80)
    keys = [f"sm90-{k}" for k in case.sm90] + \
        ([] if case.refused80 else [f"sm80-{k}" for k in case.sm80])
    for key in keys:
        kernel = evt_kernels.KERNELS[key]
        try:
            op = evt_kernels.describe(kernel, case, graph)
        except Unsupported as error:
            if kernel.arch == 80 and evt_kernels.SM80_PENDING in str(error):
                continue   # arch 80 cannot take graphs yet: the GPU items skip, saying so
            raise
        assert f"_evt{graph.key}" in op.procedural_name()
        assert not op.is_compiled()


@pytest.mark.parametrize("case", evt_cases.CASES, ids=lambda c: c.name)
def test_the_gpu_suite_checks_pass_float32_and_fail_wrong_outputs(case, monkeypatch):
    """The GPU suite's data, float64 reference and tolerances, on the CPU: a float32 emulation of
    the kernel (evt_emulate.py) passes every check on the suite's problems; one output element
    moved by a few units in its last place fails an "int" run, and so do outputs left poisoned."""
    torch = pytest.importorskip("torch")
    import random

    import evt_emulate
    import evt_run

    monkeypatch.setattr(evt_run, "DEVICE", "cpu")
    kernel = evt_kernels.KERNELS[f"sm90-{case.sm90[0]}"]
    rng = random.Random(f"cpu/{case.name}")
    gen = torch.Generator().manual_seed(rng.getrandbits(62))
    for M, N, K, data in evt_run.shapes(case, kernel, rng)[:3]:   # not the large problem
        run = evt_run.Run(case, kernel, M, N, K, data, gen, rng)
        with pytest.raises(AssertionError, match="mismatch"):
            run.check(kernel, "poisoned outputs")
        out = evt_emulate.emulate(run)
        run.check(kernel, f"the float32 emulation at {M}x{N}x{K} ({data} data)", outputs=out)
        if data != "int":
            continue
        for o in case.outputs:
            wrong = dict(out, **{o.name: evt_emulate.corrupt_one(out[o.name], o.dtype)})
            with pytest.raises(AssertionError, match=rf"^{o.name} .*: 1 of \d+ elements mismatch"):
                run.check(kernel, "a corrupted output", outputs=wrong)


@pytest.mark.parametrize("key", evt_cases.run_keys(), ids=evt_cases.run_keys())
def test_the_gpu_suite_arguments_pass_every_check(key, gpu_reason, monkeypatch, nothing_compiles):
    """The GPU suite's operands (CPU torch tensors here: host arrays) for each of its items, its
    problems and the Batched flow pass every check of GemmArguments: without a GPU the first
    error is the device's."""
    torch = pytest.importorskip("torch")
    if gpu_reason is None:
        pytest.skip("a GPU is present (the next step would compile)")
    import random

    import evt_run

    monkeypatch.setattr(evt_run, "DEVICE", "cpu")
    kernel_key, case = evt_cases.split_key(key)
    kernel = evt_kernels.KERNELS[kernel_key]
    try:
        op = evt_kernels.describe(kernel, case, evt_cases.make_graph(case))
    except Unsupported as error:
        if kernel.arch == 80 and evt_kernels.SM80_PENDING in str(error):
            pytest.skip("arch=80 kernels cannot take an epilogue graph yet")
        raise
    rng = random.Random(f"cpu/{key}")
    gen = torch.Generator().manual_seed(rng.getrandbits(62))
    runs = [evt_run.Run(case, kernel, M, N, K, data, gen, rng)
            for M, N, K, data in evt_run.shapes(case, kernel, rng)]
    if case.name == "batched_mix":
        runs.append(evt_run.Run(case, kernel, 200, 136, 72, "int", gen, rng, batch=3))
        runs.append(evt_run.Run(case, kernel, 200, 136, 72, "int", gen, rng, batch=3,
                                shared=("rs",)))
    for run in runs:
        with pytest.raises(Unsupported, match="^no usable CUDA device"):
            run.arguments(op, op.epilogue_type(**run.operands()))
        with pytest.raises(Unsupported, match="^no usable CUDA device"):
            run.arguments(op, op.epilogue_type(**run.operands(with_d=True)), d=False)
    assert not op.is_compiled()




def shared_full_input_outcome():
    """What GemmArguments says of a Batched x3 problem given one (M, N) input for every batch
    (a text: no tilecraft object outlives this frame)."""
    def batched(accum, C):
        D = accum + C
        return D

    op = graph_op(trace(batched, accum=acc(), C=ex(M, N), D=ex(M, N)))
    a, b = (np.stack([x] * 3) for x in host())
    try:
        GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(M, N, K), A=a, B=b,
                      D=np.zeros((3, M, N), np.float16),
                      output_op=op.epilogue_type(C=np.ones((M, N), np.float16)),
                      gemm_mode=cutlass.gemm.Mode.Batched, batch=3)
    except Unsupported as error:
        return f"UnsupportedError: {error}"
    except ValueError as error:
        return f"ValueError: {error}"
    finally:
        assert not op.is_compiled()
    return "accepted"


def test_batched_full_input_shared_by_every_batch(gpu_reason, nothing_compiles):
    """EpilogueOperands' documentation: full inputs are M x N, (batch, M, N) 'or (M, N) shared by
    every batch': accepted (the first refusal is the missing device)."""
    if gpu_reason is None:
        pytest.skip("a GPU is present (the next step would compile)")
    outcome = shared_full_input_outcome()
    assert outcome.startswith("UnsupportedError: no usable CUDA device"), outcome


# ---- the one call: tilecraft.gemm(A, B, epilogue=..., epilogue_args=...) ---------------------------


def _one_call_operands():
    torch = pytest.importorskip("torch")
    a = torch.ones(8, 16, dtype=torch.float16)
    b = torch.ones(16, 8, dtype=torch.float16)
    return torch, a, b


def _one_call_epilogue(accum, alpha):
    D = alpha * accum
    return D


@pytest.mark.parametrize("extra, name", [
    ({"alpha": 2.0}, "alpha"), ({"beta": 1.0}, "beta"), ({"activation": "relu"}, "activation"),
    ({"scale_a": 2.0}, "scale_a")])
def test_one_call_refuses_linear_combination_arguments_beside_an_epilogue(extra, name):
    torch, a, b = _one_call_operands()
    with pytest.raises(ValueError, match=rf"^{name}: with a custom epilogue, pass the epilogue's "
                                         r"inputs in epilogue_args"):
        cutlass.gemm(a, b, epilogue=_one_call_epilogue, epilogue_args={"alpha": 1.0}, **extra)


def test_one_call_refuses_a_tensor_c_beside_an_epilogue():
    torch, a, b = _one_call_operands()
    with pytest.raises(ValueError, match=r"^C: with a custom epilogue"):
        cutlass.gemm(a, b, C=torch.ones(8, 8), epilogue=_one_call_epilogue,
                     epilogue_args={"alpha": 1.0})


def test_one_call_checks_the_epilogue_and_its_arguments():
    torch, a, b = _one_call_operands()
    with pytest.raises(ValueError, match=r"^epilogue_args: given without an epilogue"):
        cutlass.gemm(a, b, epilogue_args={"alpha": 1.0})
    with pytest.raises(TypeError, match=r"^epilogue_args: expected a dict of the epilogue's names"):
        cutlass.gemm(a, b, epilogue=_one_call_epilogue, epilogue_args=[1.0])
    with pytest.raises(TypeError, match=r"^epilogue: expected a Python function of the "
                                        r"accumulator or a graph"):
        cutlass.gemm(a, b, epilogue="relu", epilogue_args={})
    with pytest.raises(ValueError, match=r"^A, B: expected 2-D \(M, K\) and \(K, N\) tensors"):
        cutlass.gemm(a[0], b, epilogue=_one_call_epilogue, epilogue_args={"alpha": 1.0})
    # An operand of the wrong length is named at trace time.
    def with_bias(accum, bias):
        D = accum + bias
        return D

    with pytest.raises(ValueError, match=r"^bias: expected \(8, 8\) like the accumulator"):
        cutlass.gemm(a, b, epilogue=with_bias, epilogue_args={"bias": torch.ones(5)})
    # A numpy/cupy caller must give out (only torch outputs are made).
    with pytest.raises(ValueError, match=r"^out: required for cupy tensors"):
        cutlass.gemm(np.ones((8, 16), np.float16), np.ones((16, 8), np.float16),
                     epilogue=_one_call_epilogue, epilogue_args={"alpha": 1.0})


def test_listed_kernels_name_their_graph_in_the_metadata(nothing_compiles):
    """The arguments-first API: every kernel get_kernels lists for a custom epilogue carries the
    graph's key in its name and in metadata.epilogue.epilogue_graph; plain kernels carry ""."""
    from fakecuda import T
    from tilecraft import api

    a, b = T(M, K, dtype="float16"), T(K, N, dtype="float16")
    out = T(M, N, dtype="float16")
    operands = {"alpha": 1.0, "C": T(M, N, dtype="float16"), "beta": 0.5,
                "bias": T(N, dtype="float16"), "out1": T(1, dtype="float32")}
    graph = seed_graph()
    epilogue = api.arguments.EpilogueArguments(graph=graph, operands=operands)
    args = api.arguments.GemmArguments(a, b, out, np.float32, epilogue=epilogue)
    kernels = api.get_kernels(args, cc=90)
    assert kernels
    for k in kernels:
        assert k.metadata.epilogue.epilogue_graph == graph.key, k.metadata.kernel_name
        assert f"_evt{graph.key}" in k.metadata.kernel_name
    plain = api.get_kernels(api.arguments.GemmArguments(a, b, out, np.float32), cc=90)
    assert plain and all(k.metadata.epilogue.epilogue_graph == "" for k in plain)
