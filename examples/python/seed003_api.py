"""Seed 003 ("Basic GEMM using CUTLASS Python API") as a script, with its imports changed to
tilecraft and its compute-capability check to {90}. Every assert of the seed is kept.

    python examples/python/seed003_api.py
"""

import torch

import tilecraft as cutlass

import tilecraft.api as cutlass_api

if not (status := cutlass_api.utils.is_device_cc_supported({90})):
    print(
        f"This notebook requires a GPU with compute capability 90.\n{status.error}"
    )
    import sys

    sys.exit(0)

M, N, K, L = 128, 256, 64, 2
ab_type = torch.float16
out_type = torch.float32
acc_type = torch.float32

A = torch.randint(-1, 2, (L, M, K), device="cuda", dtype=ab_type)
B = torch.randint(-1, 2, (L, K, N), device="cuda", dtype=ab_type)
out = torch.empty((L, M, N), device="cuda", dtype=out_type)

reference = (A @ B).to(out.dtype)

args = cutlass_api.arguments.GemmArguments(A=A, B=B, out=out, accumulator_type=acc_type)

kernels = cutlass_api.get_kernels(args)
assert kernels, "No kernels found for the given arguments!"

kernel = kernels[0]

kernel.run(args)

torch.testing.assert_close(out, reference)

artifact = kernel.compile(args)
kernel.run(args, compiled_artifact=artifact)
torch.testing.assert_close(out, reference)

# get_kernels() fetches all kernels when called without args
all_kernels = cutlass_api.get_kernels()
print(f"A total of {len(all_kernels)} kernel instances are available.")

# we can limit the search to kernels supporting given args
kernels = cutlass_api.get_kernels(args)
print(f"Of these, {len(kernels)} support the given arguments.")

kernel = kernels[0]
print(f"Picked kernel with name: {kernel.metadata.kernel_name}")

supported = kernel.supports(args)
assert supported

unsupported_args = cutlass_api.arguments.GemmArguments(
    A=A.to(torch.bfloat16), B=B, out=out, accumulator_type=acc_type
)
if not (status := kernel.supports(unsupported_args)):
    print(status.error)

assert not status

compiled_artifact = kernel.compile(args)

# zero the output to avoid testing stale output
out.zero_()

kernel.run(
    args,
    compiled_artifact,
    stream=torch.cuda.Stream(),
    assume_supported_args=True,
)
torch.testing.assert_close(out, reference)

workspace_size = kernel.get_workspace_size(args)
workspace = torch.empty(workspace_size, device="cuda", dtype=torch.int8)

out.zero_()
kernel.run(args, compiled_artifact, stream=torch.cuda.Stream(), workspace=workspace)
torch.testing.assert_close(out, reference)

kernels = cutlass_api.get_kernels(
    args,
    metadata_filter=lambda metadata: isinstance(
        metadata.design, cutlass_api.metadata.Sm100DesignMetadata
    ),
)
print(f"Found {len(kernels)} kernels which support args & have Sm100DesignMetadata")


def a_more_complex_filter(metadata: cutlass_api.metadata.KernelMetadata) -> bool:
    """
    Find all GEMM kernels that support Float16 A and 2-CTA MMA
    """
    # Only look at GEMM kernels
    if not isinstance(metadata.operands, cutlass_api.metadata.GemmOperandsMetadata):
        return False
    # Only look at kernels with A-type F16
    if metadata.operands.A.dtype != cutlass.Float16:
        return False
    # Only look at kernels with tile_shape[0] == 128
    if getattr(metadata.design, "tile_shape", [None])[0] != 128:
        return False
    return True


# Look ma, no args! Fetch all kernels that match the filter,
# instead of supporting a complete set of args
kernels = cutlass_api.get_kernels(
    args=None,
    metadata_filter=a_more_complex_filter,
)
print(f"Found {len(kernels)} matching kernels")
