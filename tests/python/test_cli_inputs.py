"""The ``tilecraft`` command as a hostile user drives it: every bad flag, value or file ends in
one line naming the flag or file, what was expected and what was given, with exit status 2 and
nothing run, hung on or read without bound; ``tune`` / ``profile`` go on past a problem they
cannot run and say so at the end (exit status 1). Runs without a GPU."""

import importlib.util
import json
import os
import pathlib
import subprocess
import sys

import pytest

import tilecraft
from tilecraft import cli, profiling, tuning

from fakecuda import FakeTensor as FakeCudaTensor


def run_cli(*argv, env=None, timeout=60):
    full = dict(os.environ, **(env or {}))
    return subprocess.run([sys.executable, "-m", "tilecraft.cli", *argv], capture_output=True,
                          text=True, env=full, timeout=timeout)


def assert_one_line_refusal(result, *needles, status=2):
    assert result.returncode == status, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    # argparse's own refusals print the usage first, then one line.
    message = lines[-1]
    assert not [line for line in lines[:-1] if not line.startswith(("usage:", " "))], lines
    for needle in needles:
        assert needle in message, (needle, message)
    assert len(message) < 1000, message


# ---- --file ---------------------------------------------------------------------------------

def _file_cases(tmp_path):
    big = tmp_path / "big.txt"
    big.write_text("64x64x64 bf16\n" * (profiling.MAX_FILE_BYTES // 14 + 10))
    folder = tmp_path / "folder"
    folder.mkdir()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes(b"64x64x64 bf16\n128x128x128 f16 none caf\xe9\n")
    nul = tmp_path / "nul.txt"
    nul.write_bytes(b"64x64x64 bf16\n64x64\x0064 bf16\n")
    digits_json = tmp_path / "digits.json"
    digits_json.write_text('[{"m": ' + "9" * 5000 + ', "n": 8, "k": 8}]')
    digits_text = tmp_path / "digits.txt"
    digits_text.write_text("9" * 5000 + "x8x8 bf16\n")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    long_line = tmp_path / "long.txt"
    long_line.write_text("64x64x64 " + "x" * 500_000 + "\n")
    escape = tmp_path / "escape.txt"
    escape.write_text("64x64x64 bf16 none \x1b[31mred\n")
    obj = tmp_path / "object.json"
    obj.write_text('{"m": 8, "n": 8, "k": 8}')
    bad_json = tmp_path / "bad.json"
    bad_json.write_text('[{"m": 8, "n": 8, "k": 8},]')
    huge_extent = tmp_path / "huge.json"
    huge_extent.write_text('[{"m": 4294967296, "n": 8, "k": 8}]')
    inf_extent = tmp_path / "inf.json"
    inf_extent.write_text('[{"m": 1e400, "n": 8, "k": 8}]')
    bad_dtype = tmp_path / "dtype.json"
    bad_dtype.write_text('[{"m": 8, "n": 8, "k": 8, "dtype": ["f16"]}]')
    return [
        (str(tmp_path / "missing.txt"), "cannot open it: No such file or directory"),
        ("", "expected the path of a problem file, got ''"),
        (str(folder), "expected a regular file, got a folder"),
        (str(fifo), "expected a regular file, got a fifo"),
        ("/dev/zero", "expected a regular file, got a character device"),
        ("/dev/urandom", "expected a regular file, got a character device"),
        ("/proc/self/mem", "cannot read it"),
        (str(big), f"expected a file of at most {profiling.MAX_FILE_BYTES} bytes (1 MiB), got "
                   f"{big.stat().st_size} bytes"),
        (str(latin1), "latin1.txt:2: expected UTF-8 text, got the byte 0xe9"),
        (str(nul), "nul.txt:2: expected text, got a NUL byte"),
        (str(digits_json), "digits.json[0]: problem M: expected an integer from 1 to 2147483647, "
                           "got a 5000-digit number"),
        (str(digits_text), "digits.txt:1: shape: expected extents from 1 to 2147483647, got a "
                           "5000-digit number"),
        (str(deep), "deep.json: expected JSON nested at most a few hundred levels deep"),
        (str(long_line), "long.txt:1: problem dtype: expected one of"),
        (str(escape), r"escape.txt:1: problem name: expected printable text of at most 200 "
                      r"characters, got '\x1b[31mred'"),
        (str(obj), "object.json: expected a JSON list of problems, got an object"),
        (str(bad_json), "bad.json: expected JSON (a list of problems), got an error: Expecting "
                        "value: line 1"),
        (str(huge_extent), "huge.json[0]: problem M: expected an integer from 1 to 2147483647, "
                           "got 4294967296"),
        (str(inf_extent), "inf.json[0]: problem M: expected an integer from 1 to 2147483647, "
                          "got inf"),
        (str(bad_dtype), "dtype.json[0]: problem dtype: expected one of"),
    ]


def test_problem_files_are_regular_bounded_utf8_and_named_in_every_refusal(tmp_path):
    for i, (path, needle) in enumerate(_file_cases(tmp_path)):
        # profile on a few: the same reader serves both commands.
        command = ["profile", "--out", str(tmp_path / "out")] if i % 5 == 0 else ["tune"]
        result = run_cli(*command, "--file", path)
        assert_one_line_refusal(result, f"tilecraft {command[0]}: --file: ", needle)
        if path:
            assert profiling.path_text(path)[:60] in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


def test_problem_file_problems_read_as_before(tmp_path):
    text = tmp_path / "p.txt"
    text.write_text("# LLM\n4096x4096x4096 bf16\n\n2x128x256x64 f16 bias_gelu mlp up\n")
    labels = [p.label for p in profiling.problems_of_file(str(text))]
    assert labels == ["bf16 4096x4096x4096", "f16 2x128x256x64 +bias_gelu mlp up"]
    js = tmp_path / "p.json"
    js.write_text(json.dumps([{"m": 8, "n": 16, "k": 32}, {"m": 1, "n": 1, "k": 2147483647,
                                                           "dtype": "f64", "name": "édge"}]))
    assert [p.label for p in profiling.problems_of_file(str(js), "f16")] == [
        "f16 8x16x32", "f64 1x1x2147483647 édge"]


# ---- other flags -----------------------------------------------------------------------------

@pytest.mark.parametrize("argv, needles", [
    (["tune", "--shape", ""], ["--shape: shape: expected MxNxK or LxMxNxK", "got ''"]),
    (["tune", "--shape", "9" * 5000 + "x1x1"], ["--shape: shape: expected extents from 1 to "
                                                "2147483647, got a 5000-digit number"]),
    (["tune", "--shape", "x" * 10000], ["--shape: shape: expected MxNxK", "(10000 characters)"]),
    (["tune", "--shape", "0x8x8"], ["--shape: problem M: expected an integer from 1"]),
    (["tune", "--shape", "3000000000x8x8"], ["--shape: problem M: expected an integer from 1 to "
                                             "2147483647, got 3000000000"]),
    (["tune", "--shape", "1x1x1x1x1"], ["--shape: shape: expected MxNxK"]),
    (["tune", "--shape", "8x8x8", "--max-candidates", "0"],
     ["argument --max-candidates: expected an integer from 1 to 64, got '0'"]),
    (["tune", "--shape", "8x8x8", "--max-candidates", "65"],
     ["argument --max-candidates: expected an integer from 1 to 64, got '65'"]),
    (["tune", "--shape", "8x8x8", "--max-candidates", "9" * 5000],
     ["argument --max-candidates: expected an integer from 1 to 64, got '999"]),
    (["tune", "--shape", "8x8x8", "--max-candidates", ""],
     ["argument --max-candidates: expected an integer from 1 to 64, got ''"]),
    (["tune", "--shape", "8x8x8", "--max-seconds", "nan"],
     ["argument --max-seconds: expected a number of seconds from 0 to 604800", "got 'nan'"]),
    (["tune", "--shape", "8x8x8", "--max-seconds", "inf"], ["argument --max-seconds", "'inf'"]),
    (["tune", "--shape", "8x8x8", "--max-seconds", "1e400"], ["argument --max-seconds", "1e400"]),
    (["tune", "--shape", "8x8x8", "--max-seconds", "-1"], ["argument --max-seconds", "'-1'"]),
    (["tune", "--shape", "8x8x8", "--max-seconds", "1000000"],
     ["argument --max-seconds", "'1000000'"]),
    (["profile", "--shape", "8x8x8", "--top", "0"], ["argument --top: expected an integer"]),
    (["profile", "--shape", "8x8x8", "--repeats", "1001"],
     ["argument --repeats: expected an integer from 1 to 1000"]),
    (["profile", "--shape", "8x8x8", "--dtype", ""], ["argument --dtype: invalid choice: ''"]),
    (["tune", "--shape", "8x8x8", "--epilogue", "\x1b[2J"], ["argument --epilogue: invalid choice"]),
    (["tune"], ["--shape, --file: expected at least one problem, got none"]),
    (["list", "--limit", "0"], ["argument --limit: expected an integer from 1 to 1000000000"]),
    (["list", "--limit", "many"], ["argument --limit: expected an integer", "'many'"]),
    (["list", "--arch", "75"], ["argument --arch: invalid choice: 75"]),
    (["list", "--dtype", ""], ["argument --dtype: expected a type name, got ''"]),
    (["cache", "stats", "--which", "both"], ["argument --which: invalid choice: 'both'"]),
    (["cache", "prune"], ["--max-size: 'cache prune' needs it"]),
    (["cache", "stats", "--max-size", "1G"],
     ["--max-size: only 'cache prune' takes it, got it with 'cache stats'"]),
])
def test_every_flag_refuses_bad_values_in_one_named_line(argv, needles):
    assert_one_line_refusal(run_cli(*argv), *needles)


@pytest.mark.parametrize("value", ["-1", "0", "75", "7.5", "abc", "", "1e3", "90.0"])
def test_list_refuses_a_compute_capability_without_kernels(value):
    result = run_cli("list", "--cc", value)
    assert_one_line_refusal(result, "argument --cc: expected a compute capability tilecraft has "
                                    "kernels for: 80 or more", f"got '{value}'")


def test_list_takes_compute_capabilities_in_both_spellings():
    for value in ("8.6", "86"):
        result = run_cli("list", "--cc", value, "--limit", "2", "--json")
        assert result.returncode == 0, result.stderr
        assert {row["arch"] for row in json.loads(result.stdout)} == {80}


def test_list_refuses_a_type_no_kernel_has():
    result = run_cli("list", "--cc", "80", "--dtype", "e4m3")
    assert_one_line_refusal(result, "tilecraft list: --dtype: expected the A type of a kernel for "
                                    "compute capability 80: ", "got 'e4m3'")
    assert "bf16" in result.stderr and "f16" in result.stderr


@pytest.mark.parametrize("out_kind", ["file", "fifo", "no-parent", "link-in-folder",
                                      "fifo-in-folder"])
def test_profile_out_must_be_a_folder_whose_outputs_are_files(tmp_path, out_kind):
    out = tmp_path / "out"
    if out_kind == "file":
        out.write_text("mine")
        needle = "which is not one"
    elif out_kind == "fifo":
        os.mkfifo(out)
        needle = "which is not one"
    elif out_kind == "no-parent":
        out = tmp_path / "missing" / "out"
        needle = "does not exist"
    elif out_kind == "link-in-folder":
        out.mkdir()
        os.symlink(tmp_path / "elsewhere.csv", out / "profile.csv")
        needle = "profile.csv: expected a regular file to write (or nothing), got a symbolic link"
    else:
        out.mkdir()
        os.mkfifo(out / "profile.json")
        needle = "profile.json: expected a regular file to write (or nothing), got a fifo"
    result = run_cli("profile", "--shape", "64x64x64", "--out", str(out), timeout=30)
    assert_one_line_refusal(result, "tilecraft profile: --out: ", needle)
    assert not (tmp_path / "elsewhere.csv").exists()


def test_outputs_are_never_written_through_links_or_into_fifos(tmp_path):
    target = tmp_path / "target"
    target.write_text("keep")
    os.symlink(target, tmp_path / "link.json")
    with pytest.raises(ValueError, match="link.json: expected a regular file to write"):
        profiling.write_json([], str(tmp_path / "link.json"))
    os.mkfifo(tmp_path / "fifo.csv")
    with pytest.raises(ValueError, match="fifo.csv: expected a regular file to write"):
        profiling.write_csv([], str(tmp_path / "fifo.csv"))
    assert target.read_text() == "keep"
    profiling.write_json([{"problem": "x"}], str(tmp_path / "fine.json"))
    assert json.loads((tmp_path / "fine.json").read_text()) == [{"problem": "x"}]


# ---- cache prune sizes -----------------------------------------------------------------------

@pytest.mark.parametrize("value, tail", [
    ("inf", "got 'inf'"), ("1e400", "got '1e400'"), ("9" * 400, "(400 characters)"),
    ("1e30", "got '1e30'"), ("nan", "got 'nan'"), ("", "got ''"), ("1.5x", "got '1.5x'"),
    ("-0", "got '-0', which has a sign"), ("-1", "got '-1', which has a sign"),
    ("+5G", "got '+5G', which has a sign"), ("8E", "got '8E', which is more"),
    ("9223372036854775808", "which is more"), ("0x10", "got '0x10'"),
])
def test_prune_sizes_are_bounded_and_refused_by_name(value, tail):
    result = run_cli("cache", "prune", "--max-size", value)
    assert_one_line_refusal(result, "argument --max-size: expected a size from 0 to 8 EiB", tail)


@pytest.mark.parametrize("value, size", [("0", 0), ("1.5K", 1536), ("2G", 2 << 30),
                                         ("9223372036854775807", 2**63 - 1), ("7.5E", 15 << 59),
                                         (" 500 mib ", 500 << 20), ("12b", 12)])
def test_prune_sizes_that_are_taken(value, size):
    assert cli._size(value) == size


def test_prune_to_zero_empties_an_empty_cache(tmp_path):
    result = run_cli("cache", "prune", "--max-size", "0", "--json",
                     env={"TILECRAFT_CACHE_DIR": str(tmp_path / "cache")})
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"kernels_removed": 0, "tuning_removed": 0}


@pytest.mark.parametrize("function", [tuning.prune_cache, tuning.prune_kernel_cache,
                                      tilecraft._core.tune.prune_cache,
                                      tilecraft._core.tune.prune_kernel_cache])
@pytest.mark.parametrize("value", [2**63, 2**64, 10**400, -1])
def test_prune_functions_name_max_bytes_out_of_range(function, value):
    with pytest.raises(ValueError, match=r"^max_bytes: expected a size"):
        function(value)


@pytest.mark.parametrize("value", [1.5, "1G", True, None])
def test_prune_functions_name_max_bytes_of_the_wrong_type(value):
    for function in (tuning.prune_cache, tuning.prune_kernel_cache,
                     tilecraft._core.tune.prune_cache, tilecraft._core.tune.prune_kernel_cache):
        with pytest.raises(TypeError, match=r"^max_bytes: expected"):
            function(value)


def test_prune_functions_take_the_largest_size(tmp_path):
    assert tuning.prune_cache(2**63 - 1) == 0
    assert tuning.prune_kernel_cache(2**63 - 1) == 0


# ---- names from the cache, printed --------------------------------------------------------------

def test_cache_list_prints_names_from_files_with_escapes_only(monkeypatch, capsys):
    hostile = "sm90_gemm\x1b]0;owned\x07\x1b[2J\u202e\r\nrm -rf"
    monkeypatch.setattr(tuning, "list_cache", lambda: [{
        "path": "/x", "device": "H100\x1b[31m", "signature": "f16 " + hostile,
        "kernel_name": hostile, "tflops": 1.0, "bytes": 10, "tuned_at": 0}])
    monkeypatch.setattr(tuning, "list_kernel_cache", lambda: [{
        "key": "ab\x1b[0m" * 8, "path": "/y", "kernels": [hostile], "bytes": 1, "last_used": 0,
        "valid": False, "invalid_reason": "bad \x1b[5m"}])
    assert cli.main(["cache", "list"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out and "\r" not in out
    assert r"sm90_gemm\x1b]0;owned\x07\x1b[2J\u202e\r\nrm -rf" in out
    assert r"INVALID: bad \x1b[5m" in out
    assert cli.main(["cache", "list", "--json"]) == 0
    assert "\x1b" not in capsys.readouterr().out


# ---- problems that cannot run: reported, and the others done ----------------------------------

PROBLEMS = "1024x1024x1024 f16\n1023x1023x1023 int8 none odd\n512x512x512 bf16\n"


@pytest.fixture
def no_gpu_work(monkeypatch):
    """The GPU steps replaced: int8 1023x1023x1023 is refused as no kernel supports it (what the
    kernel spaces say, test_odd_f16_problems_run_and_odd_int8_ones_have_no_kernel below), the
    others tune."""
    done = []

    def refuse_or(result):
        def step(problem, *args, **kwargs):
            done.append(problem.label)
            if problem.m == 1023:
                raise tilecraft.UnsupportedError(f"no kernel supports {problem.dtype} "
                                                 f"{problem.shape_text} on compute capability 90")
            return result(problem)
        return step

    monkeypatch.setattr(cli, "_need_gpu", lambda: None)
    monkeypatch.setattr(profiling, "precompile", lambda *args, **kwargs: None)
    monkeypatch.setattr(profiling, "tune_problem", refuse_or(
        lambda p: {"problem": p.label, "kernel": "kernel_for_" + p.dtype, "reason": "tuned now"}))
    monkeypatch.setattr(profiling, "Timer", lambda: object())
    monkeypatch.setattr(profiling, "profile_problem", refuse_or(lambda p: {
        "problem": p.label, "dtype": p.dtype, "epilogue": p.epilogue, "m": p.m, "n": p.n,
        "k": p.k, "batch": p.batch, "device": "test", "kernel": "k", "reason": "tuned now",
        "tilecraft_tflops": 100.0, "cublas_tflops": 90.0, "ratio": 1.1, "error": 1e-3,
        "cublas_error": 1e-3, "tilecraft_us": 1.0, "cublas_us": 1.1}))
    return done


def test_tune_goes_on_past_a_problem_no_kernel_supports(tmp_path, no_gpu_work, capsys):
    problems = tmp_path / "problems.txt"
    problems.write_text(PROBLEMS)
    assert cli.main(["tune", "--file", str(problems)]) == 1
    assert no_gpu_work == ["f16 1024x1024x1024", "int8 1023x1023x1023 odd", "bf16 512x512x512"]
    captured = capsys.readouterr()
    table = captured.out.splitlines()
    assert len(table) == 4 and "kernel_for_f16" in table[1] and "kernel_for_bf16" in table[3]
    assert "could not tune: no kernel supports int8 1023x1023x1023 on compute" in table[2]
    assert ("tilecraft tune: could not tune 1 of 3 problems:\n    int8 1023x1023x1023 odd: no "
            "kernel supports int8 1023x1023x1023 on compute capability 90") in captured.err
    assert "    could not tune it: no kernel supports int8 1023x1023x1023" in captured.err

    assert cli.main(["tune", "--file", str(problems), "--json"]) == 1
    rows = json.loads(capsys.readouterr().out)
    assert [r["kernel"] for r in rows] == ["kernel_for_f16", None, "kernel_for_bf16"]
    assert rows[1]["failed"].startswith("no kernel supports int8 1023x1023x1023")


def test_profile_goes_on_past_a_problem_no_kernel_supports(tmp_path, no_gpu_work, capsys):
    problems = tmp_path / "problems.json"
    problems.write_text(json.dumps([{"m": 1023, "n": 1023, "k": 1023, "dtype": "int8"},
                                    {"m": 256, "n": 256, "k": 256}]))
    out = tmp_path / "out"
    assert cli.main(["profile", "--file", str(problems), "--out", str(out)]) == 1
    records = json.loads((out / "profile.json").read_text())
    assert [r["problem"] for r in records] == ["int8 1023x1023x1023", "bf16 256x256x256"]
    assert "no kernel supports int8 1023x1023x1023" in records[0]["failed"]
    assert "ratio" not in records[0]
    assert records[1]["ratio"] == 1.1
    if importlib.util.find_spec("matplotlib") is not None:
        assert (out / "profile.png").read_bytes()[:4] == b"\x89PNG"
    assert "failed" in (out / "profile.csv").read_text().splitlines()[0]
    err = capsys.readouterr().err
    assert "could not profile it: no kernel supports int8 1023x1023x1023" in err
    assert "tilecraft profile: could not profile 1 of 2 problems" in err


def test_a_run_stopped_part_way_keeps_the_rows_it_finished(tmp_path, no_gpu_work, monkeypatch):
    finished = profiling.profile_problem

    def stop_at_the_second(problem, *args, **kwargs):
        if no_gpu_work:
            raise KeyboardInterrupt
        return finished(problem, *args, **kwargs)

    monkeypatch.setattr(profiling, "profile_problem", stop_at_the_second)
    out = tmp_path / "out"
    assert cli.main(["profile", "--shape", "256x256x256", "--shape", "512x512x512", "--out",
                     str(out)]) == 130
    records = json.loads((out / "profile.json").read_text())
    assert [(r["problem"], r["ratio"]) for r in records] == [("bf16 256x256x256", 1.1)]
    rows = (out / "profile.csv").read_text().splitlines()
    assert len(rows) == 2 and rows[1].startswith("bf16 256x256x256,bf16,none,1,256,256,256,k,")


def test_profile_without_matplotlib_writes_csv_and_json_and_says_how_to_get_charts(
        tmp_path, no_gpu_work, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    out = tmp_path / "out"
    assert cli.main(["profile", "--shape", "256x256x256", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["profile.csv", "profile.json"]
    captured = capsys.readouterr()
    assert "no chart: charts need matplotlib" in captured.err
    assert "pip install 'tilecraft[plot]'" in captured.err
    assert captured.out.strip().endswith(f"wrote {out}/profile.csv, {out}/profile.json")


def test_nothing_is_written_when_every_problem_fails(tmp_path, no_gpu_work, capsys):
    out = tmp_path / "out"
    assert cli.main(["profile", "--shape", "1023x1023x1023", "--dtype", "int8",
                     "--out", str(out)]) == 1
    assert list(out.iterdir()) == []
    assert "could not profile 1 of 1 problems" in capsys.readouterr().err


def test_an_interrupt_still_stops_the_run(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cli, "_need_gpu", lambda: None)
    monkeypatch.setattr(profiling, "precompile", lambda *args, **kwargs: None)
    calls = []

    def interrupted(problem, *args):
        calls.append(problem)
        raise KeyboardInterrupt

    monkeypatch.setattr(profiling, "tune_problem", interrupted)
    assert cli.main(["tune", "--shape", "64x64x64", "--shape", "128x128x128"]) == 130
    assert len(calls) == 1
    assert "tilecraft tune: interrupted" in capsys.readouterr().err


def _fake_args(m, n, k, dtype="float16"):
    from tilecraft.api.arguments import GemmArguments

    A = FakeCudaTensor((m, k), dtype)
    B = FakeCudaTensor((n, k), dtype).t()  # column-major (K, N), as profiling's problems are
    out = FakeCudaTensor((m, n), "int32" if dtype == "int8" else dtype)
    accumulator = tilecraft.DataType.s32 if dtype == "int8" else tilecraft.DataType.f32
    return GemmArguments(A, B, out, accumulator)


def test_odd_f16_problems_run_and_odd_int8_ones_have_no_kernel():
    """The check tune and profile make before anything compiles, on the kernel spaces alone:
    f16 rows of an odd number of elements run on the two-stage SM80 mainloop (as torch.matmul
    runs them); int8 ones have no kernel (nor does torch._int_mm take them)."""
    for cc in (80, 90):
        for shape in ((1024, 1024, 1024), (1023, 1024, 1024), (1023, 1023, 1023), (1, 3, 5)):
            assert profiling.unsupported_reason(_fake_args(*shape), cc=cc) is None, (cc, shape)
    assert profiling.unsupported_reason(_fake_args(1023, 1024, 1024, "int8"), cc=90) is None
    assert profiling.unsupported_reason(_fake_args(1023, 1023, 1023, "int8"), cc=90) == (
        "no kernel supports these arguments on compute capability 90 (A, B and out aligned to "
        "1, 1 and 1 elements)")
    assert profiling.unsupported_reason(_fake_args(1023, 1023, 1023, "int8"), cc=80,
                                        what="int8 1023x1023x1023") == (
        "no kernel supports int8 1023x1023x1023 on compute capability 80 (A, B and out aligned "
        "to 1, 1 and 1 elements)")


def test_a_reader_that_goes_away_ends_the_listing_quietly():
    child = subprocess.Popen([sys.executable, "-m", "tilecraft.cli", "list", "--cc", "90"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout.readline().startswith(b"kernel")
    child.stdout.close()  # as `tilecraft list | head -1` does
    err = child.stderr.read().decode()
    assert child.wait(timeout=120) == 1
    assert "Traceback" not in err and "Exception ignored" not in err, err


def test_the_benchmark_problem_files_read():
    """bench/problems/*.txt are what `tilecraft profile --file` is given on the GPU machine."""
    folder = pathlib.Path(__file__).resolve().parents[2] / "bench" / "problems"
    files = sorted(folder.glob("*.txt"))
    assert files, folder
    for path in files:
        problems = profiling.problems_of_file(str(path))
        assert problems, path
        assert len({p.label for p in problems}) == len(problems), f"{path}: a problem twice"
