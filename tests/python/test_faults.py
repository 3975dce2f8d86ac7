"""Fault injection from Python: Ctrl-C and kill -9 in the middle of a compile, and cache paths
that a hostile working folder could redirect. Every case ends in a clean KeyboardInterrupt or a
clean recovery, with no compiler left running and nothing left behind. No GPU needed: the
compiler is tests/fixtures/fake_nvcc.sh, which hangs on request like a long nvcc run."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

FAKE_NVCC = Path(__file__).resolve().parent.parent / "fixtures" / "fake_nvcc.sh"

COMPILE_SCRIPT = textwrap.dedent("""
    import signal, sys
    # A shell that starts jobs in the background ignores SIGINT for them; a terminal does not.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    import tilecraft as cutlass
    from tilecraft import *
    mi = MathInstruction([16, 8, 16], cutlass.float16, cutlass.float16, cutlass.float32,
                         cutlass.OpClass.TensorOp, MathOperation.multiply_add)
    tile = TileDescription([128, 128, 32], 3, [2, 2, 1], mi)
    A = TensorDescription(cutlass.float16, cutlass.RowMajor, 8)
    B = TensorDescription(cutlass.float16, cutlass.ColumnMajor, 8)
    C = TensorDescription(cutlass.float16, cutlass.RowMajor, 8)
    op = GemmOperationUniversal(arch=80, tile_description=tile, A=A, B=B, C=C,
                                epilogue_functor=LinearCombination(cutlass.float16, 8,
                                                                   cutlass.float32,
                                                                   cutlass.float32))
    print("compiling", flush=True)
    cutlass.compiler.add_module([op])
    print("compiled", flush=True)
""")


def alive(pid):
    """True while pid runs (a zombie waiting for its parent counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZX"


def wait_for(predicate, seconds):
    deadline = time.monotonic() + seconds
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.fixture
def hanging_compile(tmp_path):
    """Starts a Python process compiling an SM80 kernel with a compiler that hangs; yields
    (process, pids of the compiler and its child, cache folder)."""
    cache = tmp_path / "cache"
    pids_file = tmp_path / "pids"
    env = dict(os.environ, TILECRAFT_CACHE_DIR=str(cache),
               TILECRAFT_SIGNING_KEY_FILE=str(tmp_path / "state" / "signing-key"),
               TILECRAFT_NVCC=str(FAKE_NVCC), TILECRAFT_FAKE_NVCC_MODE="hang",
               TILECRAFT_FAKE_NVCC_PIDS=str(pids_file))
    process = subprocess.Popen([sys.executable, "-c", COMPILE_SCRIPT], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True)
    try:
        assert wait_for(pids_file.exists, 60), "the compile never started"
        nvcc, child, _ = pids_file.read_text().split()
        pids = (int(nvcc), int(child))
        assert all(alive(p) for p in pids)
        yield process, pids, cache, env
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


@pytest.mark.parametrize("to", ["process", "process group"])
def test_ctrl_c_stops_the_compile_and_raises_keyboard_interrupt(hanging_compile, to):
    process, pids, cache, _ = hanging_compile
    sent = time.monotonic()
    if to == "process":
        process.send_signal(signal.SIGINT)
    else:  # what a terminal does: the whole foreground group
        os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=60)
    # The compile never ends by itself: seconds, not the compile's minutes (a loaded two-core
    # machine needs more than three).
    assert time.monotonic() - sent < 15, "Ctrl-C did not stop the compile promptly"
    assert process.returncode in (-signal.SIGINT, 130, 1), (process.returncode, err)
    assert "compiled" not in out
    assert err.rstrip().endswith("KeyboardInterrupt"), err
    assert "Traceback (most recent call last)" in err
    for junk in ("lost sys.stderr", "object address", "Exception ignored", "terminate called"):
        assert junk not in err, err
    assert wait_for(lambda: not any(alive(p) for p in pids), 10), "the compiler outlived Ctrl-C"
    assert not any((cache / "v1" / "tmp").iterdir()), "a build folder was left behind"


def test_kill_9_takes_the_compiler_along_and_the_next_start_sweeps(hanging_compile):
    process, pids, cache, env = hanging_compile
    process.kill()
    process.wait(timeout=10)
    assert wait_for(lambda: not any(alive(p) for p in pids), 3), "the compiler outlived kill -9"
    assert any((cache / "v1" / "tmp").iterdir())
    # The next process to compile anything opens the cache and removes what the dead one left.
    sweep = textwrap.dedent("""
        import tilecraft as cutlass
        from tilecraft import *
        mi = MathInstruction([1, 1, 1], cutlass.float32, cutlass.float32, cutlass.float32,
                             cutlass.OpClass.Simt, MathOperation.multiply_add)
        t = TensorDescription(cutlass.float32, cutlass.RowMajor, 1)
        op = GemmOperationUniversal(80, TileDescription([128, 128, 8], 4, [2, 4, 1], mi), t, t, t,
                                    LinearCombination(cutlass.float32, 1, cutlass.float32,
                                                      cutlass.float32))
        try:
            cutlass.compiler.add_module([op])
        except cutlass.CompileError as error:
            assert "nvcc could not compile" in str(error), error
    """)
    run = subprocess.run([sys.executable, "-c", sweep], env=dict(env, TILECRAFT_FAKE_NVCC_MODE="fail"),
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert not any((cache / "v1" / "tmp").iterdir()), "the dead process's build folder remains"


def _settings_in(cwd, **env):
    script = "import tilecraft._core as c; print(c.cache_dir())"
    clean = {k: v for k, v in os.environ.items()
             if k not in ("TILECRAFT_CACHE_DIR", "XDG_CACHE_HOME", "TILECRAFT_SIGNING_KEY_FILE")}
    clean.update(env)
    return subprocess.run([sys.executable, "-c", script], cwd=cwd, env=clean,
                          capture_output=True, text=True, timeout=60)


def test_relative_xdg_cache_home_is_ignored(tmp_path):
    (tmp_path / "xdg" / "tilecraft").mkdir(parents=True)  # a cache planted in a checkout
    run = _settings_in(tmp_path, XDG_CACHE_HOME="xdg", HOME=str(tmp_path / "home"))
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(tmp_path / "home" / ".cache" / "tilecraft")
    assert "ignoring XDG_CACHE_HOME='xdg'" in run.stderr


def test_relative_cache_dir_is_resolved_once_and_said(tmp_path):
    run = _settings_in(tmp_path, TILECRAFT_CACHE_DIR="here/cache")
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == str(tmp_path / "here" / "cache")
    assert f"TILECRAFT_CACHE_DIR='here/cache' is a relative path: using {tmp_path}/here/cache" \
        in run.stderr


def test_the_compilers_version_answer_is_remembered_for_the_next_process(tmp_path):
    # A cached kernel's first load in a new process asks no compiler for its version (two process
    # starts from a process holding a GPU context); an edited compiler is asked again.
    nvcc = tmp_path / "nvcc"
    nvcc.write_bytes(FAKE_NVCC.read_bytes())
    nvcc.chmod(0o700)
    log = tmp_path / "version-calls"
    env = dict(os.environ, TILECRAFT_CACHE_DIR=str(tmp_path / "cache"),
               TILECRAFT_SIGNING_KEY_FILE=str(tmp_path / "state" / "signing-key"),
               TILECRAFT_NVCC=str(nvcc), TILECRAFT_FAKE_NVCC_MODE="ok",
               TILECRAFT_FAKE_NVCC_VERSION_LOG=str(log))

    def compile_in_a_new_process():
        run = subprocess.run([sys.executable, "-c", COMPILE_SCRIPT], env=env, text=True,
                             capture_output=True, timeout=120)
        assert "compiling" in run.stdout, run.stderr
        return run

    compile_in_a_new_process()
    assert log.read_text() == "--version\n"
    compile_in_a_new_process()
    assert log.read_text() == "--version\n"
    # The memo is signed with this user's key: one edited without it reads as absent.
    (memo,) = [m for m in (tmp_path / "cache" / "v1" / "headers").glob("version-*")
               if "V13.0.0-fake" in m.read_text()]
    memo.write_text(memo.read_text().replace("V13.0.0-fake", "V99.9.9-planted"))
    compile_in_a_new_process()
    assert log.read_text() == "--version\n--version\n"
    nvcc.write_text(nvcc.read_text() + "\n# edited\n")
    compile_in_a_new_process()
    assert log.read_text() == "--version\n--version\n--version\n"
