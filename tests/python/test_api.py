"""tilecraft.api (seed 003's arguments-first API) without a GPU: listing, metadata and filters,
the argument checks that need no device, and the device check's reason."""

import time

import numpy as np
import pytest

import tilecraft as cutlass
import tilecraft.api as cutlass_api


def test_lists_tens_of_thousands_of_sm90_kernels():
    t0 = time.perf_counter()
    kernels = cutlass_api.get_kernels(cc=90)
    seconds = time.perf_counter() - t0
    print(f"get_kernels(cc=90): {len(kernels)} kernels in {seconds:.3f} s")
    assert len(kernels) >= 10000
    names = {k.metadata.kernel_name for k in kernels[:2000]}
    assert len(names) == 2000


def test_cc_selects_the_architectures():
    sm80 = cutlass_api.get_kernels(cc=80)
    assert sm80 and all(k.metadata.min_cc == 80 for k in sm80[:500])
    assert all(isinstance(k.metadata.design, cutlass_api.metadata.Sm80DesignMetadata)
               for k in sm80[:500])
    sm90 = cutlass_api.get_kernels(
        cc=90, metadata_filter=lambda m: isinstance(m.design,
                                                    cutlass_api.metadata.Sm90DesignMetadata))
    assert len(sm90) >= 10000
    assert all(k.metadata.min_cc == 90 for k in sm90[:500])


def test_seed_filters_run():
    none = cutlass_api.get_kernels(
        cc=90, metadata_filter=lambda m: isinstance(m.design,
                                                    cutlass_api.metadata.Sm100DesignMetadata))
    assert none == []

    def a_more_complex_filter(metadata):
        if not isinstance(metadata.operands, cutlass_api.metadata.GemmOperandsMetadata):
            return False
        if metadata.operands.A.dtype != cutlass.Float16:
            return False
        return getattr(metadata.design, "tile_shape", [None])[0] == 128

    kernels = cutlass_api.get_kernels(args=None, metadata_filter=a_more_complex_filter, cc=90)
    assert kernels
    for k in kernels:
        assert k.metadata.operands.A.dtype == cutlass.Float16
        assert k.metadata.design.tile_shape[0] == 128


def test_metadata_describes_the_kernel():
    kernel = cutlass_api.get_kernels(
        cc=90, metadata_filter=lambda m: isinstance(m.design,
                                                    cutlass_api.metadata.Sm90DesignMetadata)
        and m.design.tile_shape == (128, 256, 64) and m.operands.A.dtype == cutlass.BFloat16
        and m.design.cluster_shape == (2, 1, 1))[0]
    m = kernel.metadata
    assert m.kernel_class is cutlass_api.Sm90GemmKernel
    assert m.operands.accumulator == cutlass.Float32
    assert m.operands.A.alignment == 8
    assert m.design.kernel_schedule == cutlass.KernelScheduleType.TmaWarpSpecializedCooperative
    assert "128x256x64" in m.kernel_name
    assert m.score == 0.0  # listed without arguments


def test_host_tensors_are_refused_with_the_argument_named():
    A = np.ones((64, 32), np.float16)
    B = np.ones((32, 16), np.float16)
    out = np.zeros((64, 16), np.float32)
    with pytest.raises(ValueError, match="^A: expected a CUDA tensor, got one on cpu"):
        cutlass_api.arguments.GemmArguments(A=A, B=B, out=out, accumulator_type=np.float32)


@pytest.mark.parametrize("value, text", [("float", "'float'"), (np.int8, "int8"),
                                         (None, "None")])
def test_accumulator_type_must_be_a_type(value, text):
    with pytest.raises(TypeError, match="^accumulator_type: expected a tilecraft type"):
        cutlass_api.arguments.GemmArguments(A=np.ones((2, 2), np.float16),
                                            B=np.ones((2, 2), np.float16),
                                            out=np.ones((2, 2), np.float16),
                                            accumulator_type=value)


def test_non_tensors_are_refused():
    with pytest.raises(TypeError, match=r"^B: expected a torch, cupy or numpy array, got "
                                          r"\[\[1, 2\], \[3, 4\]\] \(list\)$"):
        cutlass_api.arguments.GemmArguments(A=np.ones((2, 2), np.float16), B=[[1, 2], [3, 4]],
                                            out=np.ones((2, 2), np.float16),
                                            accumulator_type=cutlass.Float32)


def test_args_must_be_kernel_arguments():
    kernel = cutlass_api.get_kernels(cc=90)[0]
    for method in (kernel.supports, kernel.compile, kernel.get_workspace_size, kernel.run):
        with pytest.raises(TypeError, match="^args: expected a tilecraft.api.arguments."
                                            "GemmArguments, GroupedGemmArguments, Conv2dArguments "
                                            r"or Conv3dArguments, got \{'A': 1\} \(dict\)$"):
            method({"A": 1})
    with pytest.raises(TypeError, match="^args: expected a tilecraft.api.arguments.GemmArguments, "
                                        r".*got 'x' \(str\)$"):
        cutlass_api.get_kernels("x")


def test_compile_kernels_takes_kernels():
    with pytest.raises(TypeError, match=r"^kernels\[0\]: expected a Kernel \(from tilecraft.api."
                                        r"get_kernels\), got 'not a kernel' \(str\)$"):
        cutlass_api.compile_kernels(["not a kernel"])


def test_device_check_gives_a_reason(gpu_reason):
    status = cutlass_api.utils.is_device_cc_supported({90})
    if gpu_reason is None and status:
        pytest.skip("a compute capability 9.0 device is present")
    assert not status
    assert status.error
    assert not cutlass_api.utils.is_device_cc_supported(set())


def test_status_is_truthy_only_without_error():
    assert cutlass_api.Status()
    bad = cutlass_api.Status("Operand `A` is unsupported")
    assert not bad and bad.error == "Operand `A` is unsupported"


def _host_args(**epilogue):
    return cutlass_api.arguments.GemmArguments(
        A=np.ones((4, 2), np.float16), B=np.ones((2, 4), np.float16),
        out=np.ones((4, 4), np.float16), accumulator_type=cutlass.Float32,
        epilogue=cutlass_api.arguments.EpilogueArguments(**epilogue))


@pytest.mark.parametrize("epilogue, error, text", [
    (dict(alpha="2"), TypeError, "^epilogue.alpha: expected a number, got '2'"),
    (dict(beta=True), TypeError, "^epilogue.beta: expected a number, got True"),
    (dict(activation="swish"), ValueError, "^epilogue.activation: expected None, a "
                                           "tilecraft.Activation or one of"),
    (dict(activation_args=("a",)), TypeError,
     r"^epilogue.activation_args\[0\]: expected a float, got 'a' \(str\)$"),
    (dict(bias_per_row=1), TypeError, "^epilogue.bias_per_row: expected a bool"),
    (dict(C=[[1.0]]), TypeError, "^epilogue.C: expected a torch, cupy or numpy array"),
    (dict(scale_a="1"), TypeError, "^epilogue.scale_a: expected a float or a one-element "
                                   r"float32 CUDA tensor, got '1' \(str\)$"),
])
def test_epilogue_arguments_are_checked(epilogue, error, text):
    with pytest.raises(error, match=text):
        _host_args(**epilogue)


def test_epilogue_must_be_epilogue_arguments():
    with pytest.raises(TypeError, match="^epilogue: expected a tilecraft.api.arguments."
                                        r"EpilogueArguments, got \{'alpha': 2.0\} \(dict\)$"):
        cutlass_api.arguments.GemmArguments(
            A=np.ones((4, 2), np.float16), B=np.ones((2, 4), np.float16),
            out=np.ones((4, 4), np.float16), accumulator_type=cutlass.Float32,
            epilogue={"alpha": 2.0})


def test_fused_metadata_shows_the_bias():
    kernel = cutlass_api.get_kernels(cc=90)[0]
    assert kernel.metadata.epilogue.bias == cutlass._core.BiasKind.none
