"""``tilecraft export`` on the GPU (issue 30's acceptance): tuned winners of three GEMM problems
exported as a library, a find_package consumer built and run where PATH has neither nvcc nor
Python; it fills random inputs, poisons the outputs (NaN), runs every exported kernel (and one
shape it was not exported for), compares every element with a float64 reference and checks that
bad arguments are refused by name. Skipped, with the reason, without a GPU or the build tools."""

import os
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(__file__)))
import export_helpers as helpers  # noqa: E402
from gpu_harness import probe  # noqa: E402


@pytest.fixture(scope="module")
def cc():
    reason, capability = probe()
    if reason:
        pytest.skip(f"export GPU test: {reason}")
    missing = helpers.missing_tools()
    if missing:
        pytest.skip(f"export GPU test: {missing}")
    return capability


def test_exported_tuned_kernels_run_from_a_program_without_nvcc_or_python(cc, tmp_path):
    cases = ["bf16:512x256x128", "f16:384x256x192"]
    lines = ["512x256x128 bf16", "384x256x192 f16"]
    if cc == 90:  # bias and gelu fuse into SM90 epilogues only
        cases.append("bf16:256x512x256:bias_gelu")
        lines.append("256x512x256 bf16 bias_gelu")
    problems = tmp_path / "problems.txt"
    problems.write_text("\n".join(lines) + "\n")
    out = tmp_path / helpers.NAME
    done = helpers.run_export("--file", str(problems), "--out", str(out), "--max-candidates", "3")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "NOT TUNED" not in done.stdout, done.stdout
    header = (out / "include" / f"{helpers.NAME}.hpp").read_text()
    assert "Every kernel is the winner measured on this GPU" in header

    program, env = helpers.build_consumer(out, tmp_path)
    ran = subprocess.run([str(program), *cases], capture_output=True, text=True, env=env,
                         timeout=600)
    print(ran.stdout, ran.stderr)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "all matched" in ran.stdout
    for case in cases:
        assert f"{case} (m " in ran.stdout
    for argument in ("lda", "A", "m", "problem"):
        assert f"bad {argument}: refused" in ran.stdout
