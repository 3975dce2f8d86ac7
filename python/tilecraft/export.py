"""Tuned kernels as a C++ library (``tilecraft export``; docs/export.md): the kernels chosen for
GEMM problems compiled into ``<out>/lib/lib<name>.so`` with a plain C++17 header
``<out>/include/<name>.hpp`` and a CMake package (``find_package(<name>)``, target
``<name>::<name>``). The work is the C++ core's (``tilecraft::exporting``); this file only maps
``profiling.Problem`` lines to its problems.
"""

from tilecraft import _core

# A problem's dtype -> (A and B, out, accumulator, allow_tf32): the tensors' types.
_TYPES = {
    "bf16": ("bf16", "bf16", "f32", True),
    "f16": ("f16", "f16", "f32", True),
    "tf32": ("f32", "f32", "f32", True),
    "f32": ("f32", "f32", "f32", False),
    "f64": ("f64", "f64", "f64", True),
    "int8": ("s8", "s32", "s32", True),
}


def gemm_problem(problem):
    """The C++ core's GemmProblem for a ``profiling.Problem`` (A row-major, B column-major, out
    row-major, as the problem files mean). ValueError names a problem it cannot export."""
    if hasattr(problem, "family"):  # family_problems' grouped GEMM and convolution lines
        kind = {"grouped": "grouped GEMM", "conv2d": "convolution"}.get(problem.family,
                                                                       problem.family)
        raise ValueError(f"{problem.label}: expected a GEMM problem ('MxNxK [dtype] [epilogue] "
                         f"[name]'); export does not take {kind} problems yet")
    if problem.dtype not in _TYPES:
        raise ValueError(f"{problem.label}: dtype: expected one of {sorted(_TYPES)} (the exported "
                         f"API takes no fp8 scales yet), got {problem.dtype!r}")
    ab, out, accumulator, allow_tf32 = _TYPES[problem.dtype]
    p = _core.export.GemmProblem()
    p.m, p.n, p.k, p.batch = problem.m, problem.n, problem.k, problem.batch
    p.a = p.b = getattr(_core.DataType, ab)
    p.out = getattr(_core.DataType, out)
    p.accumulator = getattr(_core.DataType, accumulator)
    p.allow_tf32 = allow_tf32
    p.layout_a = _core.Layout.RowMajor
    p.layout_b = _core.Layout.ColumnMajor
    p.layout_out = _core.Layout.RowMajor
    if problem.epilogue == "bias_gelu":
        p.bias = True
        p.activation = _core.Activation.gelu_tanh
    p.label = problem.label
    return p


def check_name(name, argument="name"):
    """Raises ValueError (naming ``argument``) unless ``name`` can name an exported library."""
    if not isinstance(name, str):
        raise TypeError(f"{argument}: expected a str, got {_core.given(name)}")
    error = _core.export.check_name(name, argument)
    if error is not None:
        raise ValueError(error)


def name_from_folder(out_dir):
    """The library name ``out_dir``'s last component makes, or None."""
    return _core.export.name_from_folder(str(out_dir)) or None


def export_library(problems, out_dir, name=None, cc=None, untuned=False, max_candidates=None,
                   max_seconds=None):
    """Writes the library of ``problems`` (``profiling.Problem`` objects) into ``out_dir``.

    Each problem gets its stored tuned winner, is tuned now when none is stored and a GPU of
    compute capability ``cc`` is here, or (``untuned=True``, or no GPU) gets the ranked first
    pick, which the report and the header's comment call untuned. ``cc``: default the GPU's;
    required without a GPU. Returns a dict: name, cc, header, library, config, tuned, kernels,
    problems (problem, kernel, how)."""
    if name is None:
        name = name_from_folder(out_dir)
        if name is None:
            raise ValueError(f"name: expected a C identifier for the library; none can be made "
                             f"from the folder {str(out_dir)!r}: give one")
    check_name(name)
    native = [gemm_problem(p) for p in problems]
    return _core.export.export_gemm_library(native, name, str(out_dir), cc, bool(untuned),
                                            max_candidates, max_seconds)


__all__ = ["check_name", "export_library", "gemm_problem", "name_from_folder"]
