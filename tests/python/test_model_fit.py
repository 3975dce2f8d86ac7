"""bench/model_fit.py, the check of the ranking model against measurements, on made-up data (no
GPU): rank correlation, the first pick's regret and where the fastest stood."""

import importlib.util
import json
import pathlib
import subprocess
import sys

import pytest

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "bench" / "model_fit.py"
spec = importlib.util.spec_from_file_location("model_fit", SCRIPT)
model_fit = importlib.util.module_from_spec(spec)
spec.loader.exec_module(model_fit)


def _line(family, pairs):
    """pairs: (model score, measured microseconds) in the model's order."""
    return {"problem": "p", "family": family,
            "candidates": [{"kernel": f"k{i}", "rank": i, "score": score, "outcome": "measured",
                            "median_us": us, "tflops": 100.0 / us}
                           for i, (score, us) in enumerate(pairs)]}


def test_spearman_is_one_for_the_same_order_and_minus_one_for_the_reverse():
    assert model_fit.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert model_fit.spearman([1, 2, 3, 4], [40, 30, 20, 10]) == pytest.approx(-1.0)
    assert model_fit.spearman([1, 2], [1, 2]) is None  # too few to say


def test_a_model_that_ranks_the_fastest_first_has_no_regret():
    summary = model_fit.summarize([_line("gemm", [(30, 1.0), (20, 2.0), (10, 4.0)])])
    assert summary["gemm"] == {"problems": 1, "spearman_mean": 1.0, "regret_geomean": 1.0,
                               "regret_worst": 1.0, "fastest_first": 1}


def test_regret_is_the_first_picks_time_over_the_fastest():
    # The model's first pick takes 3 us, the fastest 1.5 us (ranked last by the model).
    summary = model_fit.summarize([_line("conv2d", [(30, 3.0), (20, 2.0), (10, 1.5)]),
                                   _line("gemm", [(30, 1.0), (20, 2.0)])])
    assert summary["conv2d"]["regret_worst"] == 2.0
    assert summary["conv2d"]["fastest_first"] == 0
    assert summary["all"]["problems"] == 2


def test_unmeasured_candidates_are_left_out(tmp_path):
    line = _line("grouped", [(30, 1.0), (20, 2.0), (10, 3.0)])
    line["candidates"][0]["outcome"] = "compile_failed"
    path = tmp_path / "data.jsonl"
    path.write_text(json.dumps(line) + "\n")
    result = subprocess.run([sys.executable, str(SCRIPT), str(path), "--json"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["grouped"]["regret_geomean"] == 1.0
