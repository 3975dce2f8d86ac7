"""The arguments-first API of seed 003 ("CUTLASS API"): ``import tilecraft.api as cutlass_api``.

State what to compute on which tensors (``arguments.GemmArguments``), ask which kernels can do it
(``get_kernels``: ranked best-first by an analytic performance model), then check, compile and
run one (``Kernel``). Compiled artifacts can be saved to a file and loaded in another process,
which then needs no compiler.
"""

from tilecraft import _core
from tilecraft.api import arguments, metadata, utils
from tilecraft.api.status import Status
from tilecraft.interop import stream_handle


class Sm80GemmKernel:
    """Kernel class of CUTLASS 2.x tensor-op GEMMs (``metadata.kernel_class``)."""


class Sm90GemmKernel:
    """Kernel class of CUTLASS 3.x TMA / wgmma GEMMs (``metadata.kernel_class``)."""


class Sm80GroupedGemmKernel:
    """Kernel class of CUTLASS 2.x grouped GEMMs (``GemmGrouped``)."""


class Sm90GroupedGemmKernel:
    """Kernel class of CUTLASS 3.x pointer-array grouped GEMMs."""


class Sm80ConvKernel:
    """Kernel class of CUTLASS 2.x implicit-GEMM convolutions (``ImplicitGemmConvolution``)."""


class Sm90ConvKernel:
    """Kernel class of CUTLASS 3.x convolutions (``ConvUniversal``: TMA im2col, wgmma)."""


_KERNEL_CLASSES = {"Sm80GemmKernel": Sm80GemmKernel, "Sm90GemmKernel": Sm90GemmKernel,
                   "Sm80GroupedGemmKernel": Sm80GroupedGemmKernel,
                   "Sm90GroupedGemmKernel": Sm90GroupedGemmKernel,
                   "Sm80ConvKernel": Sm80ConvKernel, "Sm90ConvKernel": Sm90ConvKernel}
GroupedGemmArguments = arguments.GroupedGemmArguments
Conv2dArguments = arguments.Conv2dArguments
Conv3dArguments = arguments.Conv3dArguments


class CompiledArtifact:
    """A compiled kernel: pass it to ``Kernel.run``; ``save(path)`` writes it to one file and
    ``CompiledArtifact.load(path)`` reads it back in any process, with no compiler needed."""

    __slots__ = ("_native",)

    def __init__(self, native):
        self._native = native

    @property
    def kernel_name(self):
        return self._native.kernel_name

    def save(self, path):
        self._native.save(path)  # a str or os.PathLike, checked by name

    @staticmethod
    def load(path):
        return CompiledArtifact(_core.api.CompiledArtifact.load(path))

    def __repr__(self):
        return f"CompiledArtifact({self.kernel_name!r})"


def _workspace_pointer(workspace):
    if workspace is None:
        return 0, 0
    if hasattr(workspace, "data_ptr"):  # torch
        if not workspace.is_cuda:
            raise ValueError(f"workspace: expected a CUDA tensor, got one on {workspace.device}")
        return int(workspace.data_ptr()), int(workspace.numel() * workspace.element_size())
    if hasattr(workspace, "data") and hasattr(workspace.data, "ptr"):  # cupy
        return int(workspace.data.ptr), int(workspace.nbytes)
    raise TypeError(f"workspace: expected a torch or cupy device buffer, got "
                    f"{_core.given(workspace)}")


class Kernel:
    """One kernel instance. ``metadata`` describes it; ``supports(args)`` says whether it can run
    ``args``; ``compile(args)`` builds it; ``run(args, ...)`` launches it."""

    __slots__ = ("_native", "_metadata")

    def __init__(self, native):
        self._native = native
        self._metadata = None

    @property
    def metadata(self):
        if self._metadata is None:
            self._metadata = metadata.from_fields(self._native.metadata_fields, _KERNEL_CLASSES)
        return self._metadata

    def supports(self, args):
        """A truthy Status, or a falsy one whose ``.error`` names the first requirement ``args``
        miss, e.g. "Operand `A` is unsupported: Expected element type Float16, got BFloat16"."""
        return Status(self._native.supports(args))

    def compile(self, args):
        """Compiles the kernel (or finds it in the cache) and returns its CompiledArtifact."""
        return CompiledArtifact(self._native.compile(args))

    def get_workspace_size(self, args):
        """Bytes of device workspace ``run`` needs for ``args`` (usually 0)."""
        return self._native.get_workspace_size(args)

    def run(self, args, compiled_artifact=None, stream=None, assume_supported_args=False,
            workspace=None):
        """Launches on ``stream`` (default: the current stream of the tensors' framework).
        Without ``compiled_artifact`` the kernel is compiled on first use. Nothing is launched
        when the arguments are not supported (ValueError with the reason)."""
        pointer, size = _workspace_pointer(workspace)
        self._native.run(args, compiled_artifact, stream_handle(stream, args),
                         assume_supported_args, pointer, size)

    def __repr__(self):
        return f"Kernel({self._native.metadata.kernel_name!r})"


def get_kernels(args=None, metadata_filter=None, cc=None):
    """The kernels that can run ``args`` (every kernel when None) and for which
    ``metadata_filter(metadata)`` is true, for compute capability ``cc`` (default: that of the
    device ``args``' tensors are on, or of the current device without ``args``; every
    architecture when there is no device). With ``args`` the list is ranked
    best-first by the performance model (``metadata.score``)."""
    if metadata_filter is not None and not callable(metadata_filter):
        raise TypeError(f"metadata_filter: expected None or a function of a KernelMetadata "
                        f"returning a bool, got {_core.given(metadata_filter)}")
    kernels = [Kernel(k) for k in _core.api.get_kernels(args, cc)]
    if metadata_filter is not None:
        kernels = [k for k in kernels if metadata_filter(k.metadata)]
    return kernels


def compile_kernels(kernels):
    """Compiles many kernels at once (parallel nvcc jobs, with progress): afterwards ``run`` and
    ``compile`` find them built. Kernel.compile does the same one kernel at a time."""
    if hasattr(kernels, "__next__"):  # a generator or iterator
        kernels = list(kernels)
    _core.api.compile_kernels(kernels)  # kernels[i]: each a Kernel, checked by name


__all__ = ["CompiledArtifact", "Conv2dArguments", "Conv3dArguments", "GroupedGemmArguments", "Kernel",
           "compile_kernels", "Sm80ConvKernel", "Sm80GemmKernel", "Sm80GroupedGemmKernel",
           "Sm90ConvKernel", "Sm90GemmKernel", "Sm90GroupedGemmKernel",
           "Status", "arguments", "get_kernels", "metadata", "utils"]
