"""Issue 10, defect 9: every argument of a public constructor or function of either Python
surface is checked by name. A value of the wrong type raises TypeError, an int beyond the C++
type's range ValueError, each naming the argument, what was expected and what was given (its
value and type); nanobind's generic "incompatible function arguments" text and its arg0, arg1
names never reach the user; bool is not an int, a str is not a number, numpy integers are ints.
None of this needs a GPU or a compiler."""

import math
import re

import numpy as np
import pytest

import tilecraft as cutlass
import tilecraft.api as cutlass_api
from tilecraft import GemmOperationUniversal, LinearCombination, TensorDescription
import describe_cases
from describe_cases import (GENERIC, SURFACES, VALUES_OF_WRONG_TYPE, F32, simt_op, simt_tile)


@pytest.fixture(autouse=True, scope="module")
def release_cached_objects():
    yield
    describe_cases.release()


def refusal(call):
    """The message of the TypeError / ValueError `call` raises; fails on anything else."""
    with pytest.raises((TypeError, ValueError)) as info:
        call()
    text = str(info.value)
    assert not GENERIC.search(text), text
    return text


def simt_operands():
    t = TensorDescription(F32, cutlass.RowMajor, 1)
    return simt_tile(), t, t, t, LinearCombination(F32, 1, F32, F32)


@pytest.mark.parametrize("arch, error, text", [
    ("80", TypeError, r"arch: expected an int \(80 or 90\), got '80' \(str\)"),
    (80.9, TypeError, r"arch: expected an int \(80 or 90\), got 80.9 \(float\)"),
    ("90", TypeError, r"arch: expected an int \(80 or 90\), got '90' \(str\)"),
    (None, TypeError, r"arch: expected an int \(80 or 90\), got None \(NoneType\)"),
    (True, TypeError, r"arch: expected an int \(80 or 90\), got True \(bool\)"),
    (80.0, TypeError, r"arch: expected an int \(80 or 90\), got 80.0 \(float\)"),
    (np.float64(80), TypeError, r"arch: expected an int \(80 or 90\), got .*80.* "
                                r"\(numpy.float64\)"),
    (2**32 + 80, ValueError, r"arch: expected an int \(80 or 90\) in \[-2147483648, "
                             r"2147483647\], got 4294967376 \(int\)"),
    (70, cutlass.UnsupportedError, "arch: expected 80 .* or 90 .*, got 70"),
])
def test_arch_is_an_int_80_or_90(arch, error, text):
    with pytest.raises(error, match=f"^{text}$"):
        GemmOperationUniversal(arch, *simt_operands())


def test_numpy_integers_are_ints_and_the_seed_keyword_still_works():
    op = GemmOperationUniversal(np.int64(80), *simt_operands())
    assert op.arch == 80 and type(op.arch) is int
    tile = cutlass.TileDescription(np.array([128, 128, 8]), np.int32(4), (2, 4, 1),
                                   simt_tile().math_instruction)
    assert tile.threadblock_shape == [128, 128, 8]
    assert GemmOperationUniversal(compute_capability=80, tile_description=simt_tile(),
                                  A=op.A, B=op.B, C=op.C,
                                  epilogue_functor=op.epilogue_functor).arch == 80


def test_bool_is_not_an_int_and_ints_beyond_32_bits_state_the_range():
    assert refusal(lambda: TensorDescription(F32, cutlass.RowMajor, True)) == \
        "alignment: expected an int, got True (bool)"
    assert refusal(lambda: cutlass.gemm.GemmCoord(1, 2, 2**40)) == \
        "k: expected an int in [-2147483648, 2147483647], got 1099511627776 (int)"
    assert refusal(lambda: LinearCombination(F32, np.bool_(True), F32, F32)) == \
        f"alignment_c: expected an int, got {np.bool_(True)!r} (numpy.bool)"


def test_wrapped_arguments_have_the_seed_names_not_arg0():
    text = refusal(lambda: LinearCombination(F32, "1", F32, F32))
    assert text == "alignment_c: expected an int, got '1' (str)"
    text = refusal(lambda: LinearCombination("float32", 1, F32, F32))
    assert text.startswith("element_C: expected a tilecraft.DataType (e.g. tilecraft.float16), "
                           "got 'float32' (str)")
    text = refusal(lambda: GemmOperationUniversal(80, "tile", *simt_operands()[1:]))
    assert text == "tile_description: expected a tilecraft.TileDescription, got 'tile' (str)"
    # The signatures name the parameters too.
    for function in (cutlass._core.make_linear_combination, cutlass._core.GemmOperation.make,
                     cutlass.TileDescription.__init__, cutlass._core.api.get_kernels):
        assert not GENERIC.search(function.__doc__), function.__doc__
    assert "element_C: DataType, alignment_c: int" in cutlass._core.make_linear_combination.__doc__


def test_strings_are_not_numbers():
    op = simt_op()
    assert refusal(lambda: op.epilogue_type("1.5", 0.0)) == \
        "alpha: expected a float, got '1.5' (str)"
    assert refusal(lambda: cutlass.get_memory_pool("1024")) == \
        "init_pool_size: expected a byte count (an int >= 0), got '1024' (str)"
    assert refusal(lambda: cutlass_api.utils.is_device_cc_supported({"90"})).startswith(
        "ccs: expected a set of ints (compute capabilities such as {90}), got {'90'} (set) "
        "holding '90' (str)")
    assert refusal(lambda: cutlass_api.get_kernels(cc="90")) == \
        "cc: expected an int (a compute capability such as 90) or None, got '90' (str)"
    assert refusal(lambda: cutlass_api.CompiledArtifact.load(None)) == \
        "path: expected a path (a str or an os.PathLike), got None (NoneType)"


def test_arity_and_keyword_mistakes_name_the_argument():
    math_inst = simt_tile().math_instruction
    assert refusal(lambda: cutlass.MathInstruction([1, 1, 1], F32)) == \
        "MathInstruction() missing required argument 'element_b'"
    assert refusal(lambda: cutlass.TileDescription([128, 128, 8], 4, [2, 4, 1], math_inst,
                                                   cluster=[1, 1, 1])) == \
        "TileDescription() got an unexpected keyword argument 'cluster'; did you mean " \
        "'cluster_shape'?"
    assert refusal(lambda: cutlass.gemm.GemmCoord(1, 2, 3, 4)).startswith(
        "GemmCoord() takes at most 3 arguments (m, n, k), got 4")
    assert refusal(lambda: cutlass.gemm.GemmCoord(1, 2, 3).m(1)) == \
        "m() takes no arguments, got 1"


def test_comparing_a_coordinate_with_another_type_is_false():
    assert (cutlass.gemm.GemmCoord(1, 2, 3) == 5) is False
    assert cutlass.MatrixCoord(1, 2) != "1, 2"


def test_epilogue_params_fields_are_checked_when_set():
    params = simt_op().epilogue_type(1.0, 0.0)
    with pytest.raises(TypeError, match=r"^beta: expected a float, got '0.5' \(str\)$"):
        params.beta = "0.5"
    with pytest.raises(TypeError, match=r"^activation_args\[1\]: expected a float, got None"):
        params.activation_args = [1.0, None]
    params.alpha = np.float32(2.0)
    assert params.alpha == 2.0


def test_activation_helpers_check_their_type_when_called():
    assert refusal(lambda: cutlass.relu("float32")).startswith(
        "element_epilogue_compute: expected a tilecraft.DataType")
    with pytest.raises(ValueError, match="^activation: computes in float16 but "
                                         "element_epilogue_compute is float32; they must agree"):
        cutlass.LinearCombinationGeneric(cutlass.relu(cutlass.float16), F32, 1, F32, F32)


def test_run_refuses_what_is_not_gemm_arguments():
    assert refusal(lambda: simt_op().run("args")) == \
        "arguments: expected a tilecraft.GemmArguments, got 'args' (str)"


# Every parameter of every surface, with every value of a wrong type for its kind: refused with
# TypeError or ValueError whose message starts with the parameter's name (or an element of it,
# name[i]) and shows the value given. (tests/python/describe_cases.py lists the surfaces.)
GRID = [(surface, param, value) for surface in SURFACES
        for param, kind in surface.params.items()
        for value in VALUES_OF_WRONG_TYPE[kind]]


@pytest.mark.parametrize("surface, param, value", GRID,
                         ids=[f"{s.name}-{p}-{i}" for i, (s, p, _) in enumerate(GRID)])
def test_every_wrong_type_is_refused_by_name(surface, param, value):
    kwargs = surface.base()
    kwargs[param] = value
    text = refusal(lambda: surface.call(**kwargs))
    name = re.escape(surface.message_name(param))
    assert re.match(rf"^{name}(\[\d+\])?: expected .+, got .+ \([\w.]+\)", text, re.S), text


def test_the_grid_is_large():
    assert len(GRID) > 1000
