"""The seed's epilogue visitor tree flow as a user writes it, and what the graph items do not
reach: D given through output_op, numpy host tensors (copied back by output_op.sync()), Batched
mode with one output per batch, arguments launched again (reductions restart from their identity
every launch; a second set of arguments on the same operation does not see the first's
operands), and the compute-sanitizer subset (marker ``sanitizer``)."""

import pytest

from evt_cases import BY_NAME, op_key, seed_relu_amax, split_key
from evt_kernels import KERNELS, tile_description
import evt_run
from evt_run import Run

SEED_KERNEL = {"sm90": "sm90-f16coop", "sm80": "sm80-f16"}
ARCHS = [pytest.param(arch, id=arch) for arch in ("sm90", "sm80")]


def _key(arch, case_name):
    return op_key(SEED_KERNEL[arch], BY_NAME[case_name])


def _uses(case_name):
    """Marks an arch-parametrized test as using the case's operation on both architectures."""
    return pytest.mark.evt_ops(*(_key(arch, case_name) for arch in ("sm90", "sm80")))


@pytest.mark.parametrize("arch", ARCHS)
@_uses("seed_relu_amax")
def test_seed_flow(evt_ops, arch, rng, gen, seed_note):
    """Seed 002's EVT flow with tilecraft's names: trace, describe with visitor=True, add_module,
    epilogue_type by name, GemmArguments, run, output_op.sync()."""
    import torch

    import tilecraft as cutlass
    from tilecraft import epilogue

    key = _key(arch, "seed_relu_amax")
    case, kernel = BY_NAME["seed_relu_amax"], KERNELS[SEED_KERNEL[arch]]
    compiled = evt_ops.get(key)   # the same description, compiled in the session's add_module
    M, N, K = 200, 136, 72
    run = Run(case, kernel, M, N, K, "float", gen, rng)
    a, b, c, bias, d, amax = (run.a, run.b, run.inputs["C"], run.inputs["bias"], run.D,
                              run.outputs["out1"])
    alpha, beta = run.inputs["alpha"], run.inputs["beta"]

    acc_example = torch.empty(M, N, dtype=torch.float32, device=evt_run.DEVICE)
    g = epilogue.trace(seed_relu_amax, accum=acc_example, alpha=alpha, C=c, beta=beta, bias=bias,
                       D=d)
    A = cutlass.TensorDescription(cutlass.float16, cutlass.RowMajor, 8)
    B = cutlass.TensorDescription(cutlass.float16, cutlass.ColumnMajor, 8)
    C = cutlass.TensorDescription(cutlass.float16, cutlass.RowMajor, 8)
    op = cutlass.GemmOperationUniversal(arch=kernel.arch,
                                        tile_description=tile_description(cutlass, kernel),
                                        A=A, B=B, C=C, epilogue_functor=g, visitor=True)
    # Equal graphs (traced at another size) give the same kernel name, hence the cached module.
    assert op.procedural_name() == compiled.procedural_name()
    cutlass.compiler.add_module([op])
    assert op.is_compiled()
    output_op = op.epilogue_type(alpha=alpha, C=c, beta=beta, bias=bias, out1=amax,
                                 problem_size=cutlass.gemm.GemmCoord(M, N, K))
    args = cutlass.GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(M, N, K),
                                 A=a, B=b, D=d, output_op=output_op)
    op.run(args)
    output_op.sync()
    run.check(kernel, f"the seed flow on {key} {seed_note}")


@pytest.mark.parametrize("arch", ARCHS)
@_uses("seed_relu_amax")
def test_d_through_output_op(evt_ops, arch, rng, gen, seed_note):
    """D given to epilogue_type by its name in the function (GemmArguments without D), and the
    same tensor given to both."""
    key = _key(arch, "seed_relu_amax")
    case, kernel = BY_NAME["seed_relu_amax"], KERNELS[SEED_KERNEL[arch]]
    op = evt_ops.get(key)
    for both in (False, True):
        run = Run(case, kernel, 200, 136, 72, "int", gen, rng)
        output_op = op.epilogue_type(**run.operands(with_d=True))
        args = run.arguments(op, output_op, d=both)
        op.run(args)
        output_op.sync()
        run.check(kernel, f"{key}, D through output_op (D also given: {both}) {seed_note}")


@pytest.mark.parametrize("arch", ARCHS)
@_uses("side_outputs_keep")
def test_numpy_host_tensors(evt_ops, arch, rng, gen, seed_note):
    """numpy A, B, inputs and outputs: staged to the device, every output (D, the aux store, the
    reduction) copied back by output_op.sync()."""
    import numpy as np
    import torch

    key = _key(arch, "side_outputs_keep")
    case, kernel = BY_NAME["side_outputs_keep"], KERNELS[SEED_KERNEL[arch]]
    op = evt_ops.get(key)
    run = Run(case, kernel, 200, 136, 72, "float", gen, rng)

    def host(t):
        array = t.cpu().numpy()
        return np.asfortranarray(array) if not t.is_contiguous() else np.ascontiguousarray(array)

    inputs = {n: host(t) if hasattr(t, "cpu") else t for n, t in run.inputs.items()}
    outputs = {n: host(t) for n, t in run.outputs.items()}
    d = outputs.pop(case.d_name)
    output_op = op.epilogue_type(**inputs, **outputs)
    import tilecraft as cutlass

    args = cutlass.GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(200, 136, 72),
                                 A=host(run.a), B=host(run.b), D=d, output_op=output_op)
    op.run(args)
    output_op.sync()
    outputs[case.d_name] = d
    back = {n: torch.from_numpy(np.ascontiguousarray(x)).cuda() for n, x in outputs.items()}
    run.check(kernel, f"{key} with numpy host tensors {seed_note}", outputs=back)


@pytest.mark.parametrize("arch", ARCHS)
@_uses("side_outputs_keep")
def test_numpy_outputs_keep_their_padding(evt_ops, arch, rng, gen, seed_note):
    """numpy outputs whose rows are padded (views of wider arrays): the kernel writes the
    logical elements, output_op.sync() copies them back, and the padding keeps what it held."""
    import numpy as np
    import torch

    import tilecraft as cutlass

    key = _key(arch, "side_outputs_keep")
    case, kernel = BY_NAME["side_outputs_keep"], KERNELS[SEED_KERNEL[arch]]
    op = evt_ops.get(key)
    M, N, K = 200, 136, 72
    run = Run(case, kernel, M, N, K, "int", gen, rng)
    wide = {"D": np.full((M, N + 8), 7.0, np.float16), "E": np.full((M, N + 8), 7.0, np.float32)}
    views = {name: array[:, :N] for name, array in wide.items()}
    out2 = np.full(N, np.nan, np.float32)
    output_op = op.epilogue_type(beta=run.inputs["beta"], C=run.inputs["C"].cpu().numpy(),
                                 E=views["E"], out2=out2)
    a, b = run.a.cpu().numpy(), np.asfortranarray(run.b.cpu().numpy())
    args = cutlass.GemmArguments(operation=op, problem_size=cutlass.gemm.GemmCoord(M, N, K),
                                 A=a, B=b, D=views["D"], output_op=output_op)
    op.run(args)
    output_op.sync()
    for name, array in wide.items():
        padding = array[:, N:]
        assert bool((padding == 7.0).all()), (
            f"{name}: {int((padding != 7.0).sum())} of {padding.size} padding elements of the "
            f"host array were overwritten by output_op.sync() (e.g. {padding.ravel()[:4]})")
    back = {n: torch.from_numpy(np.ascontiguousarray(x)).cuda()
            for n, x in dict(views, out2=out2).items()}
    run.check(kernel, f"{key} with padded numpy outputs {seed_note}", outputs=back)


@pytest.mark.parametrize("arch", ARCHS)
@_uses("batched_mix")
def test_batched(evt_ops, arch, rng, gen, seed_note):
    """gemm_mode Batched, batch=3: A, B, C, D and the aux store (3, rows, cols); the row input
    (3, M), then one (M,) for every batch; a column input shared by every batch (N,); reductions
    one per batch ((3, M), (3, N), (3,))."""
    key = _key(arch, "batched_mix")
    case, kernel = BY_NAME["batched_mix"], KERNELS[SEED_KERNEL[arch]]
    op = evt_ops.get(key)
    for data, shared in (("int", ()), ("float", ()), ("int", ("rs",))):
        run = Run(case, kernel, 200, 136, 72, data, gen, rng, batch=3, shared=shared)
        run.launch(op)
        run.check(kernel, f"{key}, Batched x3 ({data} data, shared inputs: {shared or 'none'}) "
                          f"{seed_note}")




def _launch_shared(evt_ops, key, case, kernel, rng, gen, seed_note):
    """Runs and checks a Batched x3 problem with C and rs shared by every batch; returns the
    runtime's refusal (a text) instead, if it refuses the (M, N) C."""
    op = evt_ops.get(key)
    run = Run(case, kernel, 200, 136, 72, "int", gen, rng, batch=3, shared=("C", "rs"))
    try:
        run.launch(op)
    except ValueError as error:
        if "epilogue.C: expected shape (3, 200, 136)" in str(error):
            return str(error)
        raise
    run.check(kernel, f"{key}, Batched x3, C and rs shared {seed_note}")
    return None


@pytest.mark.parametrize("arch", ARCHS)
@_uses("batched_mix")
def test_batched_full_input_shared_by_every_batch(evt_ops, arch, rng, gen, seed_note):
    """Batched x3 with one (M, N) C for every batch, as the operands' documentation allows."""
    key = _key(arch, "batched_mix")
    refusal = _launch_shared(evt_ops, key, BY_NAME["batched_mix"], KERNELS[SEED_KERNEL[arch]],
                             rng, gen, seed_note)
    assert refusal is None, refusal


@pytest.mark.parametrize("case_name", ["reductions_sum_axes", "shared_subexpression"])
@pytest.mark.parametrize("arch", ARCHS)
@_uses("reductions_sum_axes")
@_uses("shared_subexpression")
def test_launch_again(evt_ops, arch, case_name, rng, gen, seed_note):
    """The same arguments launched three times give the same outputs (reductions restart from
    their identity, they do not add up); a second set of arguments on the same operation, then
    the first again (outputs poisoned anew), each write their own tensors."""
    key = _key(arch, case_name)
    case, kernel = BY_NAME[case_name], KERNELS[SEED_KERNEL[arch]]
    op = evt_ops.get(key)
    first = Run(case, kernel, 200, 136, 72, "int", gen, rng)
    first_args = first.launch(op, times=3)
    first.check(kernel, f"{key}, launched 3 times {seed_note}")
    second = Run(case, kernel, 136, 264, 48, "int", gen, rng)
    second.launch(op)
    second.check(kernel, f"{key}, second arguments {seed_note}")
    for t in first.outputs.values():
        t.fill_(float("nan"))
    op.run(first_args)
    first_args.sync()
    first.check(kernel, f"{key}, first arguments again {seed_note}")


SANITIZER_KEYS = ["sm90-f16coop-seed_relu_amax", "sm90-f16pp-reductions_sum_axes",
                  "sm90-f16coop-fp8_e4m3_aux_amax", "sm90-f16coop-side_outputs_keep",
                  "sm90-f16coop-colmajor_layout", "sm80-f16-reductions_absmax_axes",
                  "sm90-f16pp-fast_activations", "sm80-f16-fast_activations"]


@pytest.mark.sanitizer
@pytest.mark.parametrize("op_key", SANITIZER_KEYS, ids=SANITIZER_KEYS)
def test_sanitizer_subset(evt_ops, op_key, rng, gen, seed_note):
    """Small ragged problems (one tile, a partial one, and one row) for compute-sanitizer."""
    kernel_key, case = split_key(op_key)
    kernel = KERNELS[kernel_key]
    op = evt_ops.get(op_key)
    cm, km = case.contiguous_multiple(), kernel.k_multiple
    for M, N, K in ((1, 16, 16), (131, 72, 40), (72, 48, 16)):
        if case.layout == "ColumnMajor":
            M = -(-M // cm) * cm
        else:
            N = -(-N // cm) * cm
        K = -(-K // km) * km
        run = Run(case, kernel, M, N, K, "float", gen, rng)
        run.launch(op)
        run.check(kernel, f"{op_key} at {M}x{N}x{K} {seed_note}")

