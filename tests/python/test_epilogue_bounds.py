"""Custom epilogues of bounded cost (issue 27: CRASH-1, DOS-1, TRC-1), on the CPU.

Every tracer refusal names the function and its line: lambdas, ``async def``, generators,
numbers outside float32's range, expressions nested past the depth bound, graphs past the node
and depth bounds (``EpilogueGraph.max_nodes``, ``max_depth``), a source that is not the
function's, a definition past the line bound. The audit's CRASH-1 epilogue (100,000 chained
assignments) is refused before its source is read; a graph of that size built by hand is refused by the
description; the DOS-1 epilogue (x_i = x_{i-1} + x_{i-1}) is emitted in linear size and reaches
the compiler at once (which this module replaces by a path that does not exist).
"""

import functools
import importlib
import linecache
import sys
import time

import numpy as np
import pytest

import tilecraft as cutlass
from tilecraft import *  # noqa: F401,F403
from tilecraft import _core
from tilecraft.epilogue import trace

pytestmark = pytest.mark.usefixtures("no_compiler")

M, N = 6, 10
MAX_NODES, MAX_DEPTH = _core.EpilogueGraph.max_nodes, _core.EpilogueGraph.max_depth


def acc():
    return np.zeros((M, N), np.float32)


def relu(x):  # a name the tracer reads; never called
    return x


def line_of(fn, text):
    """The file line of ``fn`` whose source contains ``text``."""
    import inspect

    lines, first = inspect.getsourcelines(fn)
    hits = [first + i for i, line in enumerate(lines) if text in line]
    assert len(hits) == 1, (text, hits)
    return hits[0]


def imported_from_file(tmp_path, name, body):
    """``def epi(accum, alpha):`` + ``body``, written to a module of its own (as the audit's
    reproductions do) and imported."""
    (tmp_path / f"{name}.py").write_text("def epi(accum, alpha):\n" + body)
    sys.path.insert(0, str(tmp_path))
    try:
        return importlib.import_module(name).epi
    finally:
        sys.path.remove(str(tmp_path))


def traced_from_file(tmp_path, name, body, **examples):
    return trace(imported_from_file(tmp_path, name, body), accum=acc(), alpha=1.0, **examples)


def gemm_op(graph, arch=80):
    math = MathInstruction([16, 8, 16], cutlass.float16, cutlass.float16, cutlass.float32,
                           cutlass.OpClass.TensorOp, MathOperation.multiply_add)
    return GemmOperationUniversal(
        arch=arch, tile_description=TileDescription([128, 128, 32], 3, [2, 2, 1], math),
        A=TensorDescription(cutlass.float16, cutlass.RowMajor, 8),
        B=TensorDescription(cutlass.float16, cutlass.ColumnMajor, 8),
        C=TensorDescription(cutlass.float16, cutlass.RowMajor, 8), epilogue_functor=graph,
        visitor=True)


# ---- functions the tracer refuses whole, at their first line ----------------------------------

lambda_epi = lambda accum: accum * 2  # noqa: E731


async def async_epi(accum):
    D = accum * 2
    return D


def generator_epi(accum):
    D = accum * 2
    yield D


@pytest.mark.parametrize("fn,match", [
    (lambda_epi, r"a lambda cannot be traced .*define the epilogue with def"),
    (async_epi, r"an async def is not an epilogue; define it with a plain def"),
    (generator_epi, r"a generator \(it yields\) is not an epilogue; return the outputs"),
], ids=["lambda", "async_def", "generator"])
def test_functions_that_are_not_a_plain_def_are_refused_at_their_line(fn, match):
    line = fn.__code__.co_firstlineno
    with pytest.raises(ValueError, match=rf"^epilogue {fn.__name__}, line {line}: {match}"):
        trace(fn, accum=acc())


def test_a_lambda_inside_a_call_is_refused_by_name():
    """inspect.getsource gives a lambda's whole line, here part of a call: no StopIteration."""
    with pytest.raises(ValueError, match=r"^epilogue <lambda>, line \d+: a lambda cannot be"):
        trace(lambda accum,
              alpha: accum * alpha, accum=acc(), alpha=1.0)


def test_a_bound_method_is_refused_by_name():
    class Epilogues:
        def epi(self, accum):
            return accum

    with pytest.raises(TypeError, match=r"^fn: expected a plain function, got the bound method "
                                        r".*Epilogues.epi"):
        trace(Epilogues().epi, accum=acc())


def test_a_source_that_is_not_the_functions_def_is_refused():
    """A file edited after import: the lines found at the function's place are another def."""
    namespace = {}
    exec(compile("def epi(accum):\n    return accum\n", "<edited>", "exec"), namespace)  # noqa: S102
    source = "def other(accum):\n    return accum\n"
    linecache.cache["<edited>"] = (len(source), None, source.splitlines(True), "<edited>")
    try:
        with pytest.raises(ValueError, match=r"^epilogue epi, line 1: the source found there is "
                                             r"not the def of 'epi'"):
            trace(namespace["epi"], accum=acc())
    finally:
        del linecache.cache["<edited>"]


def test_a_decorated_function_names_its_own_lines():
    def passthrough(fn):
        @functools.wraps(fn)
        def wrapper(*args):
            return fn(*args)

        return wrapper

    @passthrough
    def epi(accum):
        D = accum ** 2  # refused: a power
        return D

    with pytest.raises(ValueError, match=rf"^epilogue epi, line {line_of(epi, 'refused')}: "
                                         r"BinOp is not an epilogue expression"):
        trace(epi, accum=acc())


# ---- numbers --------------------------------------------------------------------------------

def test_constants_outside_float32_are_refused_at_their_line(tmp_path):
    huge = "1" * 400
    with pytest.raises(ValueError, match=r"^epilogue epi, line 2: the constant of about 400 "
                                         r"digits is outside float32's range \(magnitudes up to "
                                         r"3.4028235e\+38\)"):
        traced_from_file(tmp_path, "huge_int", f"    D = accum * {huge}\n    return D\n")
    with pytest.raises(ValueError, match=r"^epilogue epi, line 3: the constant 1e\+39 is "
                                         r"outside float32's range"):
        traced_from_file(tmp_path, "huge_float",
                         "    x = accum * alpha\n    D = x - 1e39\n    return D\n")
    with pytest.raises(ValueError, match=r"^epilogue epi, line 2: the constant inf is outside"):
        traced_from_file(tmp_path, "inf_float", "    D = accum * 1e999\n    return D\n")
    hex_int = "0x" + "f" * 2000
    with pytest.raises(ValueError, match=r"^epilogue epi, line 2: the constant of about 2409 "
                                         r"digits"):
        traced_from_file(tmp_path, "hex_int", f"    D = accum + {hex_int}\n    return D\n")
    # The largest float32 and tiny numbers are taken.
    graph = traced_from_file(tmp_path, "edge_numbers",
                             "    D = alpha * accum * 3.4028234663852886e38 + 1e-300\n    return D\n")
    assert "constant(3.4028234663852886e+38)" in str(graph)


# ---- sizes ----------------------------------------------------------------------------------

def test_an_expression_nested_past_the_depth_bound_is_refused_at_its_line(tmp_path):
    """The audit's 600-term expression raised RecursionError."""
    terms = " + ".join(["accum"] * 600)
    with pytest.raises(ValueError, match=rf"^epilogue epi, line 2: the expression nests more "
                                         rf"than {MAX_DEPTH} operations deep"):
        traced_from_file(tmp_path, "long_sum", f"    D = {terms}\n    return D\n")
    negations = "-" * 200
    with pytest.raises(ValueError, match=r"^epilogue epi, line 3: the expression nests"):
        traced_from_file(tmp_path, "negations",
                         f"    x = accum\n    D = {negations}x\n    return D\n")


def test_a_graph_past_the_depth_bound_is_refused_at_the_line_that_crosses_it(tmp_path):
    # accum (1), x0 = alpha * accum (2), x_i (i + 2): x_i is too deep once i + 2 > MAX_DEPTH.
    body = "    x0 = alpha * accum\n"
    body += "".join(f"    x{i} = x{i - 1} * alpha\n" for i in range(1, MAX_DEPTH + 5))
    body += f"    D = x{MAX_DEPTH + 4}\n    return D\n"
    first_too_deep = MAX_DEPTH - 1  # x_(MAX_DEPTH - 1) is MAX_DEPTH + 1 deep
    with pytest.raises(ValueError, match=rf"^epilogue epi, line {first_too_deep + 2}: this makes "
                                         rf"a value {MAX_DEPTH + 1} nodes deep .*at most "
                                         rf"{MAX_DEPTH} are allowed \(EpilogueGraph.max_depth\)"):
        traced_from_file(tmp_path, "deep_chain", body)


def test_a_graph_past_the_node_bound_is_refused_at_the_line_that_crosses_it(tmp_path):
    # Shallow: each line adds a product of the accumulator and a constant to nothing deep.
    body = "".join(f"    y{i} = accum * {i + 1}.0\n" for i in range(MAX_NODES))
    body += "    D = y0\n    return D\n"
    # accum (0) and alpha (1), then two nodes a line (a constant and a product): node MAX_NODES
    # is made on line 2 + (MAX_NODES - 2) // 2.
    line = 2 + (MAX_NODES - 2) // 2
    with pytest.raises(ValueError, match=rf"^epilogue epi, line {line}: the epilogue graph needs "
                                         rf"more than {MAX_NODES} nodes "
                                         r"\(EpilogueGraph.max_nodes\)"):
        traced_from_file(tmp_path, "many_nodes", body)


def test_crash1_a_100000_line_chain_is_refused_quickly(tmp_path):
    """The audit's CRASH-1 epilogue: add_module overflowed the stack; reading its source back
    and parsing it took the tracer 2.5 minutes on a two-core machine."""
    body = "    x0 = alpha * accum\n"
    body += "".join(f"    x{i} = x{i - 1} * alpha\n" for i in range(1, 100000))
    body += "    D = x99999\n    return D\n"
    epi = imported_from_file(tmp_path, "crash1_chain", body)  # Python's own compile: not timed
    start = time.monotonic()
    with pytest.raises(ValueError, match=r"^epilogue epi, line 1: the definition spans 100003 "
                                         r"lines \(1 to 100003\); .* at most 4096 are read"):
        trace(epi, accum=acc(), alpha=1.0)
    # Refused from the code object's line table, before the source is read: a bound only a
    # read of the source (minutes) would miss.
    assert time.monotonic() - start < 10


def test_a_definition_is_read_up_to_the_line_bound(tmp_path):
    """Comment lines count: 4096 lines are traced, 4097 are refused before being read."""
    def body(lines):
        return "    D = accum * alpha\n" + "    # a note\n" * (lines - 3) + "    return D\n"

    graph = trace(imported_from_file(tmp_path, "at_bound", body(4096)), accum=acc(), alpha=1.0)
    assert graph.d_output == "D"
    with pytest.raises(ValueError, match=r"^epilogue epi, line 1: the definition spans 4097 "
                                         r"lines \(1 to 4097\)"):
        trace(imported_from_file(tmp_path, "past_bound", body(4097)), accum=acc(), alpha=1.0)


def test_crash1_a_huge_graph_built_by_hand_is_refused_by_the_description():
    g = _core.EpilogueGraph()
    x = g.binary(_core.BinaryOp.mul, g.accumulator(), g.scalar("alpha"))
    for _ in range(100000):
        x = g.binary(_core.BinaryOp.add, x, x)
    g.store(x, "D", cutlass.DataType.f16)
    start = time.monotonic()
    with pytest.raises(ValueError, match=rf"^epilogue graph: 100004 nodes; at most {MAX_NODES} "
                                         r"are allowed \(kMaxEpilogueGraphNodes"):
        gemm_op(g)
    assert time.monotonic() - start < 10


def test_dos1_a_doubling_graph_is_emitted_linearly(tmp_path):
    """The audit's DOS-1 epilogue, x_i = x_{i-1} + x_{i-1} for 25 lines: 57 MB of C++ at 16
    lines and std::bad_alloc at 24. It is a graph of 28 nodes (the accumulator, alpha, alpha * accum, 24 sums, the store): emitted at once, it reaches the
    compiler (which fails here, having none)."""
    body = "    x0 = alpha * accum\n"
    body += "".join(f"    x{i} = x{i - 1} + x{i - 1}\n" for i in range(1, 25))
    body += "    D = x24\n    return D\n"
    graph = traced_from_file(tmp_path, "dos1_doubling", body,
                             D=np.zeros((M, N), np.float16))
    assert graph.node_count == 28
    op = gemm_op(graph)
    start = time.monotonic()
    with pytest.raises(Exception, match="nvcc"):
        cutlass.compiler.add_module([op])
    assert time.monotonic() - start < 30


def test_refusals_of_the_core_name_the_line_of_the_node():
    def epi(accum, beta):
        D = accum * 2
        return D, beta.sum()  # refused: beta is a scalar

    with pytest.raises(ValueError, match=rf"^epilogue epi, line {line_of(epi, 'refused')}: "
                                         r"node \d+ \(reduce 'out1'\): reduces a value that is "
                                         r"not M x N"):
        trace(epi, accum=acc(), beta=0.5)
