"""Shared by the export tests (test_export_cpu.py, gpu/test_gpu_export.py): finding the tools,
running ``tilecraft export``, and building examples/exported_consumer the way a user's project
would, in an environment whose PATH has neither nvcc nor Python."""

import os
import pathlib
import shutil
import subprocess
import sys

REPO = pathlib.Path(__file__).resolve().parents[2]
CONSUMER = REPO / "examples" / "exported_consumer"
NAME = "tuned_gemms"  # the name examples/exported_consumer finds


def nvcc():
    """nvcc as tilecraft's settings find it, or None."""
    explicit = os.environ.get("TILECRAFT_NVCC")
    if explicit:
        return shutil.which(explicit)
    for variable in ("CUDA_HOME", "CUDA_PATH", "CUDA_INSTALL_PATH"):
        root = os.environ.get(variable)
        if root and os.access(os.path.join(root, "bin", "nvcc"), os.X_OK):
            return os.path.join(root, "bin", "nvcc")
    found = shutil.which("nvcc")
    if found:
        return found
    return "/usr/local/cuda/bin/nvcc" if os.access("/usr/local/cuda/bin/nvcc", os.X_OK) else None


def missing_tools():
    """Why the consumer cannot be built here (a tool it needs is absent), or None."""
    for tool in ("cmake", "c++", "as", "ld"):
        if shutil.which(tool) is None:
            return f"{tool} is not on PATH"
    return None if nvcc() else "nvcc is not found (CUDA toolkit absent)"


def run_export(*argv, timeout=1800):
    return subprocess.run([sys.executable, "-m", "tilecraft.cli", "export", *argv],
                          capture_output=True, text=True, timeout=timeout)


def bare_environment(folder):
    """An environment with a PATH of only the assembler, linker and shell (symbolic links in
    ``folder``): no nvcc, no Python."""
    folder.mkdir(parents=True, exist_ok=True)
    for tool in ("as", "ld", "ld.bfd", "ld.gold", "ar", "ranlib", "nm", "strip", "sh", "uname"):
        found = shutil.which(tool)
        if found and not (folder / tool).exists():
            (folder / tool).symlink_to(found)
    env = {"PATH": str(folder), "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C"}
    for forbidden in ("nvcc", "python", "python3"):
        assert shutil.which(forbidden, path=env["PATH"]) is None, forbidden
    return env


def build_consumer(package, work):
    """Configures and builds examples/exported_consumer against the export at ``package``
    with tools named by absolute path and a bare PATH; returns the program's path."""
    env = bare_environment(work / "bin")
    toolkit = pathlib.Path(nvcc()).resolve().parent.parent
    command = [shutil.which("cmake"), "-S", str(CONSUMER), "-B", str(work / "build"),
               f"-DCMAKE_PREFIX_PATH={package}", f"-DCMAKE_CXX_COMPILER={shutil.which('c++')}",
               f"-DCUDAToolkit_ROOT={toolkit}", "-DCMAKE_BUILD_TYPE=Release"]
    if shutil.which("ninja"):
        command += ["-G", "Ninja", f"-DCMAKE_MAKE_PROGRAM={shutil.which('ninja')}"]
    elif shutil.which("make"):
        command += [f"-DCMAKE_MAKE_PROGRAM={shutil.which('make')}"]
    configured = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    assert configured.returncode == 0, configured.stdout + configured.stderr
    built = subprocess.run([shutil.which("cmake"), "--build", str(work / "build")],
                           capture_output=True, text=True, env=env, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    return work / "build" / "exported_consumer", env
