"""tilecraft.epilogue.trace on the CPU (issue 15): a plain Python function of the accumulator read
into the core's epilogue graph, checked by text against the graph built by hand, and each
refusal: an unsupported construct (with the function's line), a broadcast tensor of the wrong
length, an example output the function does not return, a reduction over an fp8 output. Nothing
compiles or launches."""

import numpy as np
import pytest

import tilecraft
from tilecraft import _core
from tilecraft.epilogue import trace

M, N = 6, 10
F16, F32, E4M3 = np.float16, np.float32, "float8_e4m3fn"


def t(*shape, dtype=F16):
    return np.zeros(shape, dtype)


class Fp8Example:
    """numpy has no fp8: an example output carrying the dtype name torch gives."""

    def __init__(self, *shape):
        self.shape, self.dtype = shape, E4M3


def relu(x):  # the names the tracer reads; never called
    return x


def test_the_issues_example_is_the_graph_built_by_hand():
    def epi(accum, alpha, C, beta, bias):
        D = relu(alpha * accum + beta * C + bias)
        return D, D.abs().max()

    graph = trace(epi, accum=t(M, N, dtype=F32), alpha=1.0, C=t(M, N), beta=0.5, bias=t(N),
                  D=t(M, N))
    g = _core.EpilogueGraph()
    acc = g.accumulator()
    alpha = g.scalar("alpha")
    c = g.tensor("C", tilecraft.DataType.f16)
    beta = g.scalar("beta")
    bias = g.tensor("bias", tilecraft.DataType.f16, _core.Broadcast.column)
    z = g.binary(_core.BinaryOp.mul, alpha, acc)
    z = g.binary(_core.BinaryOp.add, z, g.binary(_core.BinaryOp.mul, beta, c))
    d = g.activation(_core.Activation.relu, g.binary(_core.BinaryOp.add, z, bias))
    g.store(d, "D", tilecraft.DataType.f16)
    g.reduce(d, _core.ReduceOp.abs_max, _core.ReduceAxis.all, "out1", tilecraft.DataType.f32)
    assert str(graph) == str(g)
    assert graph.key == g.key
    assert graph.output_names == ["D", "out1"]
    assert graph.scalar_names == ["alpha", "beta"]


def test_broadcasts_follow_torch_and_every_construct_traces():
    def epi(accum, row_scale, col_bias, slope, lo):
        x = accum * row_scale + col_bias
        y = where(x > 0, leaky_relu(x, slope), -x)  # noqa: F821
        z = maximum(clamp(y, lo, 6.0), abs(x)) / 2  # noqa: F821
        row_max = z.max(dim=1)
        col_sum = z.sum(dim=0)
        aux = y.to(torch.bfloat16)  # noqa: F821
        return z, aux, row_max, col_sum

    graph = trace(epi, accum=t(M, N, dtype=F32), row_scale=t(M, 1, dtype=F32),
                  col_bias=t(1, N), slope=0.1, lo=-1.0, z=t(M, N), row_max=t(M, dtype=F32),
                  col_sum=t(N, dtype=F32))
    text = str(graph)
    for part in ("tensor(row_scale,row,f32)", "tensor(col_bias,column,f16)", "greater(",
                 "leaky_relu(", "negate(", "select(", "clamp(", "abs(", "max(", "div(",
                 "convert(", "store(", "z,f16)", "row_max,max,row,f32", "col_sum,sum,column,f32",
                 "aux,f32"):
        assert part in text, (part, text)
    graph.validate_for(90)


@pytest.mark.parametrize("body,line,match", [
    ("    for i in range(3):\n        accum = accum\n    return accum", 2,
     "For statements are not epilogue code"),
    ("    D = accum if accum else accum\n    return D", 2, "IfExp is not an epilogue expression"),
    ("    D = exp(accum)\n    return D", 2, "'exp' with 1 argument"),
    ("    D = accum.mean()\n    return D", 2, r"the method '.mean\(\)'"),
    ("    D = 0 < accum < 1\n    return D", 2, "one comparison"),
    ("    m = accum.max()\n    D = accum - m\n    return D", 3,
     "a reduction's result can only be returned"),
    ("    D = undefined + accum\n    return D", 2, "'undefined' is not a parameter"),
    ("    D = accum\n    return", 1, "returns nothing"),
])
def test_unsupported_constructs_name_the_line(body, line, match):
    namespace = {}
    exec(compile(f"def epi(accum):\n{body}\n", "<epi>", "exec"), namespace)  # noqa: S102
    fn = namespace["epi"]
    import linecache

    source = f"def epi(accum):\n{body}\n"
    linecache.cache["<epi>"] = (len(source), None, source.splitlines(True), "<epi>")
    with pytest.raises(ValueError, match=f"epilogue epi, line {line}: .*{match}"):
        trace(fn, accum=t(M, N, dtype=F32))


def test_a_broadcast_of_the_wrong_length_is_refused():
    def epi(accum, bias):
        return accum + bias

    with pytest.raises(ValueError, match=r"bias: expected \(6, 10\) like the accumulator, "
                                         r"\(6, 1\) for one value per row, or \(10,\) / "
                                         r"\(1, 10\) for one per column; got \(7,\)"):
        trace(epi, accum=t(M, N, dtype=F32), bias=t(7))


def test_an_output_the_function_does_not_produce_is_refused():
    def epi(accum):
        D = accum * 2
        return D

    with pytest.raises(ValueError, match="E: an example output epi does not return "
                                         r"\(it returns D\)"):
        trace(epi, accum=t(M, N, dtype=F32), D=t(M, N), E=t(M, N))


def test_a_reduction_over_an_fp8_output_is_refused():
    def epi(accum):
        D = relu(accum)
        return D, D.abs().max()

    with pytest.raises(ValueError, match="line .*: reduces 'D', an fp8 output: reduce the value "
                                         "before it is rounded to fp8"):
        trace(epi, accum=t(M, N, dtype=F32), D=Fp8Example(M, N))


def test_inputs_and_examples_are_checked():
    def epi(accum, alpha):
        return accum * alpha

    with pytest.raises(ValueError, match="alpha: an example value for this parameter"):
        trace(epi, accum=t(M, N, dtype=F32))
    with pytest.raises(ValueError, match="accum: an example accumulator"):
        trace(epi, alpha=1.0)
    with pytest.raises(TypeError, match="fn: expected a Python function"):
        trace(42, accum=t(M, N))

    def unused(accum, beta):
        return accum * 2

    with pytest.raises(ValueError, match="epilogue unused, line \\d+: node 1 .scalar 'beta'.: "
                                         "feeds no store or reduction"):
        trace(unused, accum=t(M, N, dtype=F32), beta=0.5)


def test_numbers_and_zero_dimensional_tensors_are_scalars():
    def epi(accum, alpha, beta):
        D = alpha * accum + beta
        return D

    graph = trace(epi, accum=t(M, N, dtype=F32), alpha=np.float32(2.0), beta=3)
    assert graph.scalar_names == ["alpha", "beta"]
    with pytest.raises(TypeError, match="alpha: expected a number or a tensor, got 'two'"):
        trace(epi, accum=t(M, N, dtype=F32), alpha="two", beta=3)


def test_the_graph_is_checked_for_the_kernel_family():
    def epi(accum):
        return gelu_tanh(accum)  # noqa: F821

    graph = trace(epi, accum=t(M, N, dtype=F32))
    graph.validate_for(90)
    with pytest.raises(tilecraft.UnsupportedError, match="gelu_tanh is an arch=90 activation"):
        graph.validate_for(80)


def test_a_reduction_of_a_broadcast_value_is_refused():
    """torch sums a (N,) bias once; over the M x N tile grid it would count M times."""
    def epi(accum, bias):
        D = accum + bias
        return D, bias.sum()

    with pytest.raises(ValueError, match=r"^epilogue epi, line \d+: .*reduces a value that is "
                                         r"not M x N"):
        trace(epi, accum=t(M, N, dtype=F32), bias=t(N, dtype=F32))


def test_a_function_without_source_is_refused_by_name():
    namespace = {}
    exec("def made(accum):\n    return accum\n", namespace)
    with pytest.raises(ValueError, match=r"^epilogue made, line 1: its source code is not "
                                         r"available"):
        trace(namespace["made"], accum=t(M, N, dtype=F32))
