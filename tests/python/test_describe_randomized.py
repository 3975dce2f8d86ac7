"""A randomized (property-based) test of the description layer's Python surfaces.

Each case calls one public constructor or function of either surface (describe_cases.SURFACES)
with valid arguments, one to three of them replaced by random values: of the wrong type (None,
strs, floats, bools, ints beyond 64 bits, foreign objects, ...) or of the right type with random
contents (ints of every size, every enum value, random shapes, random tensors).
Properties:
  - nothing crashes, and nothing but TypeError and ValueError (tilecraft.UnsupportedError among
    them) escapes;
  - no message is nanobind's generic "incompatible function arguments" text or names argN;
  - a refusal names an argument of the call, and one argument of the wrong type is named first
    ("name: expected ..., got <value> (<type>)");
  - an accepted description yields a procedural name.
Each run draws a fresh seed and prints it (with every failure); TILECRAFT_RANDOM_SEED=<n>
replays a run, TILECRAFT_RANDOM_CASES=<n> sets the number of cases (default 20000).

The C++ side (its factories with random ints and out-of-range enum values, and nvcc compiles of
accepted descriptions) is tests/cpp/describe/describe_randomized_test.cpp."""

import math
import os
import pathlib
import random
import re
import tempfile
import time

import numpy as np
import pytest

import tilecraft as cutlass
import describe_cases
from describe_cases import (ENUMS, GENERIC, SURFACES, VALUES_OF_WRONG_TYPE, F16, F32,
                            f16_math, simt_op, simt_tile, sm90_tile, wgmma_math)

# conftest.py draws the seed (and prints it in the session header) unless it is given.
SEED = int(os.environ.get("TILECRAFT_RANDOM_SEED") or random.SystemRandom().randrange(2**32))
CASES = int(os.environ.get("TILECRAFT_RANDOM_CASES") or 20000)


@pytest.fixture(autouse=True, scope="module")
def release_cached_objects():
    yield
    describe_cases.release()


# No nvcc while the module runs: on a GPU machine, arguments that pass validation would compile
# their kernel; this way they fail at once with a CompileError instead.
pytestmark = pytest.mark.usefixtures("no_compiler")


_INTERESTING_INTS = [0, 1, 2, 3, 4, 7, 8, 16, 32, 64, 80, 90, 128, 256, 65536, 65537, 2**24,
                     2**31 - 1, 2**31, -1, -8, -2**31, -2**31 - 1, 2**63, 2**64, -2**70]


def random_int(rng):
    roll = rng.random()
    if roll < 0.4:
        value = rng.choice(_INTERESTING_INTS)
    elif roll < 0.8:
        value = rng.randrange(-4, 300)
    else:
        value = rng.randrange(-2**80, 2**80)
    return np.int64(value) if rng.random() < 0.1 and -2**63 <= value < 2**63 else value


def random_extent(rng):
    return 8 * rng.randrange(1, 33) if rng.random() < 0.7 else random_int(rng)


def random_triple(rng):
    triple = [random_extent(rng) for _ in range(3)]
    return rng.choice([list, tuple, list, np.array])(triple) if rng.random() < 0.9 else triple


def random_array(rng):
    dtype = rng.choice([np.float32, np.float16, np.float64, np.int8, np.int32, np.uint8,
                        np.complex64, np.bool_])
    shape = tuple(rng.randrange(0, 5) for _ in range(rng.randrange(0, 4)))
    array = np.zeros(shape, dtype)
    if array.ndim == 2 and rng.random() < 0.2:
        array = np.asfortranarray(array)
    return array


def random_float(rng):
    return rng.choice([0.0, 1.0, -2.5, math.nan, math.inf, 1e308, rng.uniform(-10, 10), 3,
                       np.float32(0.5), np.float64(2.0)])


def _random_epilogue_arguments(rng):
    from tilecraft.api.arguments import EpilogueArguments
    return EpilogueArguments(alpha=random_float(rng), beta=random_float(rng),
                             activation=rng.choice([None, "relu", "gelu", "swish"]))


_INSTANCES = [simt_tile, sm90_tile, f16_math, wgmma_math, simt_op,
              lambda: cutlass.TensorDescription(F16, cutlass.RowMajor, 8),
              lambda: cutlass.LinearCombination(F32, 1, F32, F32),
              lambda: cutlass.gemm.GemmCoord(16, 16, 16)]


def random_value_of(kind, rng):
    """A value of the right type for `kind`, with random contents."""
    base = kind.rstrip("?")
    if kind.endswith("?") and rng.random() < 0.2:
        return None
    if base in ENUMS:
        return rng.choice(ENUMS[base])
    if base in ("dtype",):
        return rng.choice(ENUMS["dtype"])
    if base in ("int", "cc"):
        return random_int(rng)
    if base == "bytes":
        return rng.choice([-1, 2**64, 2**70, 1.5, "1"])  # valid ones would reserve memory
    if base == "triple":
        return random_triple(rng)
    if base == "bool":
        return rng.choice([True, False, np.bool_(True)])
    if base == "float":
        return random_float(rng)
    if base == "floats":
        return [random_float(rng) for _ in range(rng.randrange(0, 4))]
    if base in ("tensor", "scale"):
        return random_array(rng) if base == "tensor" or rng.random() < 0.5 else random_float(rng)
    if base == "instance":
        return rng.choice(_INSTANCES)()
    if base == "path":
        return rng.choice([f"/nonexistent/{rng.randrange(10**6)}.tca", tempfile.gettempdir(),
                           pathlib.Path("/nonexistent/x.tca"), _random_file(rng)])
    if base == "ccs":
        return {random_int(rng) for _ in range(rng.randrange(0, 3))}
    if base == "bias":
        return rng.choice([None, "row", "column", "diagonal", "", cutlass.BiasKind.per_row])
    if base == "activation":
        helper = rng.choice([cutlass.relu, cutlass.gelu, cutlass.clamp, cutlass.leaky_relu])
        return rng.choice([helper, helper(rng.choice(ENUMS["dtype"])),
                           rng.choice(ENUMS["activation"])])
    if base == "api_activation":
        return rng.choice([None, "relu", "gelu_tanh", "swish", "", "identity",
                           rng.choice(ENUMS["activation"])])
    if base == "accumulator":
        return rng.choice(ENUMS["dtype"] + [np.float32, np.float16, np.int32, np.int8])
    if base == "output_op":
        return rng.choice([None, simt_op().epilogue_type(1.0, 0.0),
                           (simt_op().epilogue_type(2.0, 0.5),)])
    if base == "filter":
        return rng.choice([None, lambda m: True])
    if base == "epilogue":
        return _random_epilogue_arguments(rng)
    if base == "operations":
        return []  # a valid list would compile
    raise AssertionError(f"no random values for kind {kind}")


_FILES = []


def _random_file(rng):
    """A file of random bytes (sometimes after the artifact magic): load must refuse it."""
    handle, path = tempfile.mkstemp(suffix=".tca")
    data = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 200)))
    with os.fdopen(handle, "wb") as f:
        f.write((b"tilecraft-artifact\n" if rng.random() < 0.5 else b"") + data)
    _FILES.append(path)
    return path


def _names(text, name):
    return re.search(rf"(?<![\w.]){re.escape(name)}(?![\w])", text) is not None


def _passed_validation(surface, error):
    """Errors that come after validation: no GPU here, or (on a GPU machine) no compiler."""
    text = str(error)
    return (isinstance(error, (cutlass.CompileError, cutlass.CudaError))
            or text.startswith("no usable CUDA device")
            or text.startswith("TILECRAFT_NVCC: expected an executable nvcc"))


def run_case(rng, tally):
    surface = rng.choice(SURFACES)
    kwargs = surface.base()
    params = rng.sample(list(surface.params), rng.randint(1, min(3, len(surface.params))))
    wrong = {}
    for param in params:
        kind = surface.params[param]
        if surface.touches_device or rng.random() < 0.5:
            kwargs[param] = rng.choice(VALUES_OF_WRONG_TYPE[kind])
            wrong[param] = True
        else:
            kwargs[param] = random_value_of(kind, rng)
            wrong[param] = False
    where = f"{surface.name}({', '.join(f'{p}={kwargs[p]!r}' for p in params)})"
    try:
        result = surface.call(**kwargs)
    except (TypeError, ValueError) as error:
        text = str(error)
        if _passed_validation(surface, error):
            tally["passed validation"] += 1
            return
        tally["refused"] += 1
        assert not GENERIC.search(text), f"{where}: {text}"
        assert any(_names(text, name) for name in surface.names()), \
            f"{where}: the message names none of {surface.names()}: {text}"
        if len(params) == 1 and wrong[params[0]]:
            name = re.escape(surface.message_name(params[0]))
            assert re.match(rf"^{name}(\[\d+\])?: expected .+, got .+ \([\w.]+\)", text, re.S), \
                f"{where}: a value of the wrong type, not named first: {text}"
        return
    except (cutlass.CompileError, cutlass.CudaError):
        tally["passed validation"] += 1
        return
    tally["accepted"] += 1
    if surface.makes_description:
        name = result.procedural_name()
        plain = (isinstance(result, cutlass._core.EpilogueFunctor)
                 and result.kind == cutlass._core.EpilogueKind.LinearCombination
                 and result.bias == cutlass.BiasKind.none and not result.aux
                 and not result.scales)
        assert isinstance(name, str) and (name or plain), f"{where}: procedural_name() is {name!r}"


def test_random_arguments_are_refused_by_name_or_yield_a_description():
    rng = random.Random(SEED)
    tally = {"accepted": 0, "refused": 0, "passed validation": 0}
    start = time.monotonic()
    try:
        for case in range(CASES):
            try:
                run_case(rng, tally)
            except AssertionError as failure:
                raise AssertionError(f"case {case}, TILECRAFT_RANDOM_SEED={SEED}: "
                                     f"{failure}") from None
            except Exception as error:  # anything but TypeError / ValueError
                raise AssertionError(f"case {case}, TILECRAFT_RANDOM_SEED={SEED}: "
                                     f"{type(error).__name__}: {error}") from error
    finally:
        for path in _FILES:
            os.unlink(path)
        _FILES.clear()
    print(f"describe randomized (Python): TILECRAFT_RANDOM_SEED={SEED}, {CASES} cases in "
          f"{time.monotonic() - start:.1f} s: {tally}")
    assert tally["accepted"] > CASES // 50 and tally["refused"] > CASES // 2
