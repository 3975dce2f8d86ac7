"""The seed 004 README example (examples/python/seed004_readme.py: verbatim except its imports,
pycutlass and cutlass being tilecraft) runs and its final ``torch.equal`` holds. It keeps the
README's misspelled ``split_k_splices=1``, accepted with a warning naming the right keyword."""

import pathlib
import runpy

import pytest

pytestmark = [pytest.mark.gpu, pytest.mark.uses_kernels("simt32_rrr")]

pytest.importorskip("tilecraft", reason="tilecraft is not importable")
pytest.importorskip("torch", reason="torch is not installed")

EXAMPLE = pathlib.Path(__file__).resolve().parents[3] / "examples" / "python" / "seed004_readme.py"


def test_seed_004_readme_example(ops):
    # `ops` compiled simt32_rrr, the same description: the example's add_module is a cache hit.
    with pytest.warns(UserWarning, match="'split_k_splices' is a misspelling of 'split_k_slices'"):
        namespace = runpy.run_path(str(EXAMPLE), run_name="__main__")
    import torch

    assert torch.equal(namespace["tensor_D"], namespace["tensor_D_ref"])
