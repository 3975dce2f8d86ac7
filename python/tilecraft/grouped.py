"""GemmGroupedArguments (seed 002, "GEMM Grouped Arguments")."""

from tilecraft import _core
from tilecraft.interop import detached, stream_getter

_KEYWORDS = ("operation", "problem_sizes", "A", "B", "C", "D", "output_op", "scale_a", "scale_b",
             "scale_c", "scale_d", "bias")


class GemmGroupedArguments:
    """The problems of a grouped GEMM, checked against a ``GemmOperationGrouped`` and packed for
    one launch.

    ``GemmGroupedArguments(operation, problem_sizes, A, B, C, D, output_op=None)``:
    ``problem_sizes`` is a list of ``cutlass.gemm.GemmCoord(M, N, K)``; ``A``, ``B``, ``C`` and
    ``D`` are lists with one tensor per problem (torch or cupy device tensors, or numpy arrays,
    which are staged to the GPU and copied back by ``sync()``). ``A[i]`` is the (M, K) matrix
    as a 2-D tensor whose strides match the described layout (or a packed 1-D tensor), ``B[i]``
    is (K, N), ``C[i]`` and ``D[i]`` are (M, N). ``C`` may be None when beta is 0. A problem
    with M = 0 is empty and may hold empty tensors.

    Bad input raises TypeError or ValueError naming the problem and the argument (``A[3]: ...``);
    nothing is launched. fp8 kernels take per-tensor scales as numbers (``scale_a`` ...); SM90
    kernels described with a per-column bias take ``bias``, one vector of N values per problem.
    """

    def __init__(self, *args, **kwargs):
        if len(args) > len(_KEYWORDS):
            raise TypeError(f"GemmGroupedArguments() takes at most {len(_KEYWORDS)} arguments")
        values = dict(zip(_KEYWORDS, args))
        for key, value in kwargs.items():
            if key not in _KEYWORDS:
                raise TypeError(f"GemmGroupedArguments() got an unexpected keyword argument "
                                f"'{key}'")
            if key in values:
                raise TypeError(f"GemmGroupedArguments() got multiple values for argument "
                                f"'{key}'")
            values[key] = value
        for required in ("operation", "problem_sizes", "A", "B", "D"):
            if required not in values:
                raise TypeError(f"GemmGroupedArguments() missing required argument "
                                f"'{required}'")
        output_op = values.get("output_op")
        if isinstance(output_op, (list, tuple)) and len(output_op) == 1:
            values["output_op"] = output_op[0]  # the seed's trailing comma
        native = dict(values)
        for key in ("A", "B", "C", "D", "bias"):
            if native.get(key) is not None:
                native[key] = _listed(key, native[key])
        if "problem_sizes" in native and not isinstance(native["problem_sizes"], (list, tuple)):
            raise TypeError("problem_sizes: expected a list of cutlass.gemm.GemmCoord(M, N, K), "
                            f"got {type(native['problem_sizes']).__name__}")
        self._native = _core.GroupedGemmArguments.make(**native)
        self.operation = values["operation"]
        self.problem_sizes = list(values["problem_sizes"])
        self.A, self.B, self.C, self.D = (values["A"], values["B"], values.get("C"),
                                          values["D"])
        self.output_op = values.get("output_op")
        self._current_stream = stream_getter(_first_tensors(self.A, self.B, self.C, self.D))

    def sync(self):
        """Waits for the launch; copies the D tensors back into numpy (host) D arrays."""
        self._native.sync()

    @property
    def workspace_bytes(self):
        return self._native.workspace_bytes

    @property
    def problem_count(self):
        return self._native.problem_count


def _listed(name, tensors):
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{name}: expected a list with one tensor per problem, got "
                        f"{type(tensors).__name__}")
    return [detached(t) for t in tensors]


def _first_tensors(*lists):
    out = []
    for tensors in lists:
        if tensors:
            out.append(tensors[0])
    return out


__all__ = ["GemmGroupedArguments"]
