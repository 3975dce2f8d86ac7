"""bench/model_check.py, today's ranking against candidates measured before (no GPU): the first
candidate in get_kernels' order over the fastest, per problem and per family."""

import json
import pathlib
import subprocess
import sys

from fakecuda import T
import tilecraft
from tilecraft import api
from tilecraft.api.arguments import GemmArguments

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "bench" / "model_check.py"


def test_the_first_listed_candidates_speed_over_the_fastests(tmp_path):
    args = GemmArguments(T(4096, 4096, dtype="bfloat16"),
                         T(4096, 4096, dtype="bfloat16", strides=(1, 4096)),
                         T(4096, 4096, dtype="bfloat16"), tilecraft.DataType.f32)
    listed = [k.metadata.kernel_name for k in api.get_kernels(args, cc=90)]
    first, later = listed[0], listed[5]
    data = {"problems": [
        {"family": "gemm", "problem": "bf16 4096x4096x4096 square",
         "candidates": [{"kernel": later, "tflops": 800.0}, {"kernel": first, "tflops": 600.0},
                        {"kernel": "tilecraft_not_a_kernel", "tflops": 900.0}]},
        {"family": "grouped", "problem": "grouped bf16 8x K=64 N=64", "candidates": []}]}
    path = tmp_path / "measured.json"
    path.write_text(json.dumps(data))
    run = subprocess.run([sys.executable, str(SCRIPT), str(path)], capture_output=True, text=True,
                         timeout=300)
    assert run.returncode == 0, run.stderr
    assert f"0.750    bf16 4096x4096x4096 square: first {first}" in run.stdout
    assert "skipped  grouped bf16 8x K=64 N=64: not rebuilt as arguments here" in run.stdout
    assert ("gemm: 1 problems, the first's speed over the fastest's: geometric mean 0.750, "
            "lowest 0.750, the first the fastest in 0") in run.stdout
