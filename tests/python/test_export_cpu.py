"""``tilecraft export`` without a GPU: one small f16 GEMM exported untuned for compute capability
80 (one nvcc compile), then what a user gets: the files, a header that compiles without CUDA, a
library that needs neither libtilecraft nor Python nor a shared CUDA runtime and exports only its
namespace, its statuses on bad arguments, and a find_package consumer built with no nvcc or
Python on PATH. Bad command lines are refused before anything compiles. Skips, with the reason,
where nvcc or the build tools are missing."""

import os
import pathlib
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
import export_helpers as helpers  # noqa: E402

PROBLEM = ["--shape", "128x128x64", "--dtype", "f16"]


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    reason = helpers.missing_tools()
    if reason:
        pytest.skip(f"export needs the CUDA toolkit and a C++ toolchain: {reason}")
    out = tmp_path_factory.mktemp("export") / helpers.NAME
    done = helpers.run_export(*PROBLEM, "--out", str(out), "--cc", "80", "--untuned")
    assert done.returncode == 0, done.stdout + done.stderr
    return out, done


def test_the_report_says_plainly_that_nothing_was_tuned(exported):
    _, done = exported
    assert "ranked first pick, not tuned" in done.stdout
    assert "NOT TUNED" in done.stdout
    assert "f16 128x128x64" in done.stdout


def test_the_files_are_where_the_package_says(exported):
    out, _ = exported
    name = helpers.NAME
    for path in (f"include/{name}.hpp", f"lib/lib{name}.so",
                 f"lib/cmake/{name}/{name}Config.cmake",
                 f"lib/cmake/{name}/{name}ConfigVersion.cmake"):
        assert (out / path).is_file(), path
    assert not [p for p in out.iterdir() if p.name.startswith(".build")]  # gone after a success
    assert sorted(p.name for p in out.iterdir()) == [".tilecraft-export", "include", "lib"]
    header = (out / "include" / f"{name}.hpp").read_text()
    assert "NOT TUNED" in header and "f16 128x128x64" in header
    assert "#include <cuda" not in header and "cutlass" not in header.lower()


def test_the_header_compiles_as_plain_cpp17_without_cuda(exported, tmp_path):
    out, _ = exported
    source = tmp_path / "use.cpp"
    source.write_text(f'#include "{helpers.NAME}.hpp"\n'
                      f"int main() {{ {helpers.NAME}::Gemm g; "
                      f"return {helpers.NAME}::supports(g).ok ? 1 : 0; }}\n")
    done = subprocess.run([shutil.which("c++"), "-std=c++17", "-Wall", "-Wextra", "-Wpedantic",
                           "-Werror", "-fsyntax-only", f"-I{out / 'include'}", str(source)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_library_depends_on_nothing_of_tilecraft_python_or_the_cuda_runtime(exported):
    out, _ = exported
    if shutil.which("readelf") is None:
        pytest.skip("readelf is not on PATH")
    library = out / "lib" / f"lib{helpers.NAME}.so"
    dynamic = subprocess.run(["readelf", "-d", str(library)], capture_output=True, text=True,
                             check=True).stdout
    needed = [line.split("[")[1].rstrip("]") for line in dynamic.splitlines() if "(NEEDED)" in line]
    assert needed, dynamic
    for forbidden in ("tilecraft", "python", "cudart", "nvrtc"):
        assert not [n for n in needed if forbidden in n], needed
    assert f"lib{helpers.NAME}.so" in dynamic  # its soname
    symbols = subprocess.run(["readelf", "-W", "--dyn-syms", "-C", str(library)],
                             capture_output=True, text=True, check=True).stdout
    defined = [line.split(None, 7)[-1] for line in symbols.splitlines()
               if " GLOBAL " in line and " UND " not in line]
    assert defined and all(s.startswith(helpers.NAME + "::") for s in defined), defined


CHECKS = r"""
#include <cstdio>
#include <string>
#include "tuned_gemms.hpp"
static int failures = 0;
static void expect(const char* what, const tuned_gemms::Status& s, bool ok, const char* start) {
  const bool good = s.ok == ok && s.message.rfind(start, 0) == 0;
  std::printf("%s: %s %s\n", what, s.ok ? "ok" : "refused", s.message.c_str());
  failures += good ? 0 : 1;
}
int main() {
  static char memory[1 << 16];  // never launched on: supports() only checks
  tuned_gemms::Gemm g;
  g.m = 128; g.n = 128; g.k = 64;
  g.a_type = g.b_type = g.d_type = tuned_gemms::DataType::f16;
  g.A = g.B = g.D = memory;
  g.lda = 64; g.ldb = 64; g.ldd = 128;
  expect("exported", tuned_gemms::supports(g), true, "tilecraft_sm80");
  tuned_gemms::Gemm other = g; other.m = 256;
  expect("other shape", tuned_gemms::supports(other), true, "tilecraft_sm80");
  tuned_gemms::Gemm bad = g; bad.lda = 63;
  expect("lda", tuned_gemms::gemm(bad, nullptr), false, "lda: expected at least 64");
  bad = g; bad.A = nullptr;
  expect("A", tuned_gemms::gemm(bad, nullptr), false, "A: expected a device pointer, got null");
  bad = g; bad.k = -1;
  expect("k", tuned_gemms::gemm(bad, nullptr), false, "k: expected an extent");
  bad = g; bad.beta = 1.0;
  expect("C", tuned_gemms::gemm(bad, nullptr), false, "C: expected a device pointer");
  bad = g; bad.a_type = bad.b_type = bad.d_type = tuned_gemms::DataType::bf16;
  expect("types", tuned_gemms::gemm(bad, nullptr), false, "problem: expected one that an exported");
  bad = g; bad.k = 60; bad.lda = 60; bad.ldb = 60;
  expect("alignment", tuned_gemms::gemm(bad, nullptr), false, "problem: expected one that");
  bad = g; bad.batch = 2; bad.batch_stride_D = 100;
  expect("batch_stride_D", tuned_gemms::gemm(bad, nullptr), false,
         "batch_stride_D: expected at least");
  std::printf("%zu problems, API %d\n", tuned_gemms::problems().size(), tuned_gemms::api_version());
  return failures;
}
"""


def test_the_api_refuses_bad_arguments_by_name_without_a_gpu(exported, tmp_path):
    out, _ = exported
    source = tmp_path / "checks.cpp"
    source.write_text(CHECKS)
    program = tmp_path / "checks"
    lib = out / "lib"
    subprocess.run([shutil.which("c++"), "-std=c++17", f"-I{out / 'include'}", str(source),
                    f"-L{lib}", f"-l{helpers.NAME}", f"-Wl,-rpath,{lib}", "-o", str(program)],
                   check=True)
    done = subprocess.run([str(program)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 problems, API 1" in done.stdout
    assert "not tuned for this one" in done.stdout  # the other shape says so


def test_a_find_package_consumer_builds_with_no_nvcc_or_python_on_path(exported, tmp_path):
    out, _ = exported
    program, _ = helpers.build_consumer(out, tmp_path)
    assert program.is_file()


# ---- bad command lines: refused with the flag named, before anything compiles ----------------

def _problems_file(tmp_path, text):
    path = tmp_path / "problems.txt"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("extra, needle", [
    (["--name", "9lives"], "--name: expected a C identifier"),
    (["--name", "class"], "--name: expected a name free for a C++ namespace"),
    (["--name", "tc_mine"], "names starting with tc_ or tilecraft are tilecraft's"),
    (["--shape", "64x64"], "shape: expected MxNxK"),
    (["--shape", "64x64x64", "--dtype", "e4m3"], "dtype: expected one of"),
    (["--cc", "75"], "--cc: expected a compute capability"),
])
def test_bad_flags_are_refused_by_name(tmp_path, extra, needle):
    argv = ["--out", str(tmp_path / "lib"), "--cc", "80"]
    if "--shape" not in extra:
        argv += PROBLEM
    done = helpers.run_export(*argv, *extra, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert needle in done.stderr
    assert not (tmp_path / "lib").exists()


@pytest.mark.parametrize("line, needle", [
    ("grouped bf16 groups=4 tokens=64 n=64 k=64", "export does not take grouped GEMM problems"),
    ("conv2d fprop f16 n=1 c=64 h=8 w=8 k=64 r=3 s=3", "export does not take convolution problems"),
    ("64x64x64 e4m3", "no fp8 scales yet"),
])
def test_problem_lines_it_cannot_export_are_refused(tmp_path, line, needle):
    path = _problems_file(tmp_path, f"128x128x64 f16\n{line}\n")
    done = helpers.run_export("--file", path, "--out", str(tmp_path / "lib"), "--cc", "80",
                              timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert needle in done.stderr


def test_a_missing_problem_file_is_named(tmp_path):
    done = helpers.run_export("--file", str(tmp_path / "none.txt"), "--out",
                              str(tmp_path / "lib"), "--cc", "80", timeout=120)
    assert done.returncode == 2
    assert "--file:" in done.stderr and "none.txt: cannot open it" in done.stderr


def test_a_folder_of_other_files_is_never_written_into(tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    done = helpers.run_export(*PROBLEM, "--out", str(folder), "--name", "mine", "--cc", "80",
                              "--untuned", timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--out: expected an empty folder or an earlier export's" in done.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]
    # A marker this user's key did not sign (planted, or copied from another user's export) does
    # not make the folder an export's.
    (folder / ".tilecraft-export").write_text("written by tilecraft export: the library mine\n")
    done = helpers.run_export(*PROBLEM, "--out", str(folder), "--name", "mine", "--cc", "80",
                              "--untuned", timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "--out: expected an empty folder or an earlier export's" in done.stderr
    assert sorted(p.name for p in folder.iterdir()) == [".tilecraft-export", "notes.txt"]


def test_a_name_that_the_folder_cannot_give_must_be_passed(tmp_path):
    done = helpers.run_export(*PROBLEM, "--out", str(tmp_path / "__"), "--cc", "80", timeout=120)
    assert done.returncode == 2
    assert "--name: expected a C identifier for the library; none can be made" in done.stderr


def test_without_a_gpu_the_capability_must_be_given(tmp_path):
    import tilecraft

    if tilecraft._core.cuda_device_available() is None:
        pytest.skip("a GPU is here: its compute capability is the default")
    done = helpers.run_export(*PROBLEM, "--out", str(tmp_path / "lib"), timeout=120)
    assert done.returncode == 2
    assert "--cc: expected the compute capability to build for" in done.stderr


def test_the_python_call_refuses_a_bad_name(tmp_path):
    from tilecraft import export, profiling

    with pytest.raises(ValueError, match="^name: expected a C identifier"):
        export.export_library([profiling.Problem(64, 64, 64)], pathlib.Path(tmp_path) / "x",
                              name="a-b", cc=80, untuned=True)
