"""The one-call op, the tuning settings and the ``tilecraft`` command on bad input: each gets
an error that names the argument, and nothing runs. Runs without a GPU."""

import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

import tilecraft
from tilecraft import _chart, cli, profiling, tuning


def run_cli(*argv, env=None):
    full = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-m", "tilecraft.cli", *argv], capture_output=True,
                          text=True, env=full, timeout=120)


@pytest.mark.parametrize("argv, needle", [
    (["bogus"], "invalid choice: 'bogus'"),
    (["cache", "shrink"], "invalid choice: 'shrink'"),
    (["profile", "--shape", "4096x4096"], "shape: expected MxNxK"),
    (["profile", "--shape", "64x64x64", "--dtype", "f8"], "invalid choice: 'f8'"),
    (["tune", "--shape", "64x64x64", "--max-seconds", "-1"], "--max-seconds: expected a number"),
    (["tune", "--shape", "64x64x64", "--max-candidates", "0"], "expected an integer from 1 to 64, got '0'"),
    (["profile", "--frobnicate"], "unrecognized arguments: --frobnicate"),
    (["cache", "prune"], "--max-size: 'cache prune' needs it"),
    (["cache", "prune", "--max-size", "lots"], "expected a size from 0 to 8 EiB"),
    (["profile", "--shape", "64x64x64", "--dtype", "int8", "--epilogue", "bias_gelu"],
     "bias_gelu is measured for bf16 and f16"),
])
def test_cli_refuses_bad_input_with_a_clear_error(argv, needle):
    result = run_cli(*argv)
    assert result.returncode != 0
    assert needle in result.stderr, result.stderr


def test_cli_cache_stats_list_and_clear_on_an_empty_cache(tmp_path):
    env = {"TILECRAFT_CACHE_DIR": str(tmp_path / "cache")}
    result = run_cli("cache", "stats", "--json", env=env)
    assert result.returncode == 0, result.stderr
    stats = json.loads(result.stdout)
    assert stats["kernels"]["entries"] == 0 and stats["tuning"]["entries"] == 0
    assert stats["kernels"]["folder"] == str(tmp_path / "cache")
    result = run_cli("cache", "list", "--json", env=env)
    assert json.loads(result.stdout) == {"kernels": [], "tuning": []}
    result = run_cli("cache", "clear", "--which", "tuning", "--json", env=env)
    assert json.loads(result.stdout) == {"tuning_removed": 0}


def test_cli_list_filters_and_shows_kernel_facts():
    result = run_cli("list", "--dtype", "e4m3", "--arch", "90", "--cc", "90", "--limit", "5",
                     "--json")
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert len(rows) == 5
    for row in rows:
        assert row["A"] == "e4m3" and row["arch"] == 90
        assert "registers=" in row["facts"]


def test_cli_profile_without_a_gpu_says_so(gpu_reason):
    if gpu_reason is None:
        pytest.skip("a GPU is here: the no-GPU message is not shown")
    result = run_cli("profile", "--shape", "128x128x128")
    assert result.returncode != 0
    assert "no GPU to run on" in result.stderr


def test_problem_files_are_read_and_checked(tmp_path):
    text = tmp_path / "p.txt"
    text.write_text("# LLM projections\n4096x4096x4096 bf16\n2x128x256x64 f16 bias_gelu mlp\n")
    problems = profiling.problems_from(file=str(text))
    assert [p.label for p in problems] == ["bf16 4096x4096x4096", "f16 2x128x256x64 +bias_gelu mlp"]
    js = tmp_path / "p.json"
    js.write_text(json.dumps([{"m": 8, "n": 16, "k": 32, "dtype": "int8"}]))
    assert profiling.problems_from(file=str(js))[0].label == "int8 8x16x32"
    js.write_text(json.dumps([{"m": 8, "n": 16, "dtype": "int8"}]))
    with pytest.raises(ValueError, match=r"p.json\[0\]: missing 'k'"):
        profiling.problems_from(file=str(js))
    text.write_text("8x16x32 bf16\n8x0x32\n")
    with pytest.raises(ValueError, match=r"p.txt:2: problem N: expected an integer from 1 to 2147483647, got 0"):
        profiling.problems_from(file=str(text))
    with pytest.raises(ValueError, match="at least one"):
        profiling.problems_from()


def test_the_chart_has_one_bar_per_result_and_a_line_at_one(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib (tilecraft[plot]) is not installed")
    rows = [("bf16 4096x4096x4096", 1.02), ("fp8 8192^3", 0.91), ("f64", float("nan"))]
    fig = _chart.figure(rows, "tilecraft / cuBLAS")
    ax = fig.axes[0]
    bars = ax.patches
    assert [round(bar.get_width(), 2) for bar in bars] == [1.02, 0.91]
    assert [tick.get_text() for tick in ax.get_yticklabels()] == [label for label, _ in rows]
    assert [bar.get_facecolor()[:3] for bar in bars][0] != bars[1].get_facecolor()[:3]
    texts = [t.get_text() for t in ax.texts]
    assert texts == ["1.02x", "0.91x", "no result"]
    assert any(list(line.get_xdata()) == [1.0, 1.0] for line in ax.lines)
    assert ax.get_title() == "tilecraft / cuBLAS"

    path = tmp_path / "chart.png"
    data = _chart.bar_chart(rows, "tilecraft / cuBLAS", path=str(path))
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and path.read_bytes() == data
    width, height = struct.unpack(">II", data[16:24])
    assert width > 500 and height > 100
    with pytest.raises(ValueError, match="rows"):
        _chart.bar_chart([], "empty")
    _chart.bar_chart([("all failed", float("nan"))], "none finite")


def test_without_matplotlib_no_chart_is_drawn_and_the_message_says_how(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(_chart.ChartsUnavailable, match=r"pip install 'tilecraft\[plot\]'"):
        _chart.bar_chart([("bf16 256x256x256", 1.1)], "title")


def test_gemm_refuses_host_arrays_and_bad_tuning_settings():
    a = np.ones((8, 8), np.float16)
    with pytest.raises(TypeError, match="A: expected a CUDA tensor"):
        tilecraft.gemm(a, a)
    with pytest.raises(TypeError, match="A: expected a CUDA tensor"):
        tilecraft.plan_gemm(a, a, tuning="off")


@pytest.mark.parametrize("kwargs, error, needle", [
    ({"max_seconds": -1}, ValueError, "max_seconds: expected a number of seconds >= 0"),
    ({"max_candidates": 0}, ValueError, "max_candidates: expected an integer from 1 to 64"),
    ({"max_candidates": 2.5}, TypeError, "max_candidates"),
    ({"repeats": 0}, ValueError, "repeats: expected an integer from 1 to 1000"),
])
def test_tuning_budgets_are_checked_before_anything_runs(kwargs, error, needle):
    with pytest.raises(error, match=needle):
        tuning.tune(None, **kwargs)


def test_tuning_mode_from_the_environment_is_checked():
    result = subprocess.run(
        [sys.executable, "-c", "import tilecraft, numpy\n"
         "print(tilecraft._core.tune.make_plan(0, '', None, None, None))"],
        capture_output=True, text=True, env=dict(os.environ, TILECRAFT_TUNING="sometimes"))
    assert result.returncode != 0
    assert "TILECRAFT_TUNING" in result.stderr and "sometimes" in result.stderr, result.stderr


def test_prune_sizes_are_checked():
    with pytest.raises(ValueError, match=r"max_bytes: expected a size from 0 to 2\*\*63 - 1 bytes \(0 keeps nothing\), got -1"):
        tuning.prune_cache(-1)
    with pytest.raises(TypeError, match="max_bytes"):
        tuning.prune_kernel_cache("1G")


def test_shape_buckets_group_nearby_shapes():
    assert tuning.shape_bucket(4096) == 4096
    assert tuning.shape_bucket(4000) == tuning.shape_bucket(4096)
    assert tuning.shape_bucket(11008) != tuning.shape_bucket(8192)
    assert cli.main(["cache", "stats", "--which", "tuning", "--json"]) == 0
