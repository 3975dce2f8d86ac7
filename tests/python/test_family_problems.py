"""Grouped GEMM and convolution lines of a problem file (tilecraft profile / tune --file): what
they read as, and refusals that name the field, with no GPU."""

import pytest

from tilecraft import profiling


def _read(tmp_path, text):
    path = tmp_path / "problems.txt"
    path.write_text(text)
    return profiling.problems_of_file(str(path))


def test_grouped_and_conv_lines_read_beside_gemm_lines(tmp_path):
    problems = _read(tmp_path, "\n".join([
        "# a mixed file",
        "1024x1024x1024 f16",
        "grouped bf16 groups=64 tokens=4096 n=2048 k=7168 routing=skewed ds-down",
        "conv2d wgrad f16 n=8 c=64 h=56 w=56 k=64 r=3 s=3 pad=1",
        "conv2d fprop bf16 n=4 c=3 h=224 w=224 k=64 r=7 s=7 stride=2 pad=3 epilogue=bias_relu"]))
    gemm, grouped, wgrad, stem = problems
    assert gemm.m == 1024 and not hasattr(gemm, "family")
    assert grouped.family == "grouped" and grouped.name == "ds-down"
    assert sum(grouped.rows_per_group) == 4096 and len(grouped.rows_per_group) == 64
    # Skewed routing: the busiest expert takes far more than an even share.
    assert max(grouped.rows_per_group) > 4 * 4096 // 64
    assert wgrad.record_base()["m"] == 64 and wgrad.record_base()["k"] == 8 * 56 * 56
    assert (stem.p, stem.q) == (112, 112) and stem.epilogue == "bias_relu"
    assert stem.flops == 2.0 * 4 * 112 * 112 * 64 * 3 * 7 * 7


def test_routing_is_the_same_on_every_read(tmp_path):
    line = "grouped bf16 groups=16 tokens=1000 n=512 k=512\n"
    assert _read(tmp_path, line)[0].rows_per_group == _read(tmp_path, line)[0].rows_per_group


@pytest.mark.parametrize("line,message", [
    ("grouped bf16 groups=8 tokens=100 n=64", r"problems.txt:1: missing k"),
    ("grouped e5m2 groups=8 tokens=100 n=64 k=64", r"grouped dtype: expected one of"),
    ("grouped bf16 groups=0 tokens=100 n=64 k=64", r"groups: expected an integer from 1"),
    ("grouped bf16 groups=8 tokens=100 n=64 k=64 routing=zipf", r"routing: expected one of"),
    ("grouped bf16 groups=8 tokens=100 n=64 k=64 top=2", r"unknown field 'top'"),
    ("conv2d xprop f16 n=1 c=8 h=8 w=8 k=8 r=3 s=3", r"conv2d kind: expected one of"),
    ("conv2d fprop f16 n=1 c=8 h=8 w=8 k=8 r=3", r"missing s"),
    ("conv2d fprop f16 n=1 c=8 h=2 w=2 k=8 r=5 s=5", r"is larger than the padded image"),
    ("conv2d wgrad f16 n=1 c=8 h=8 w=8 k=8 r=3 s=3 epilogue=bias_relu",
     r"bias_relu is an fprop epilogue"),
    ("conv2d fprop f16 n=x c=8 h=8 w=8 k=8 r=3 s=3", r"n: expected an integer from 1"),
])
def test_bad_lines_are_refused_by_name(tmp_path, line, message):
    with pytest.raises(ValueError, match=message):
        _read(tmp_path, line + "\n")


def test_a_one_by_one_fprop_is_profiled_as_the_gemm_conv2d_runs(tmp_path):
    one, three = _read(tmp_path, "conv2d fprop f16 n=8 c=32 h=20 w=20 k=64 r=1 s=1\n"
                                 "conv2d fprop f16 n=8 c=32 h=20 w=20 k=64 r=3 s=3 pad=1\n")
    assert one.gemm_route and not three.gemm_route


def test_fp8_grouped_lines_compare_with_the_scaled_grouped_mm(tmp_path):
    (fp8,) = _read(tmp_path, "grouped e4m3 groups=16 tokens=2048 n=1024 k=1024\n")
    assert fp8.fp8 and fp8.record_base()["baseline"] == "torch._scaled_grouped_mm"
