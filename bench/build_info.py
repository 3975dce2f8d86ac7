"""What a benchmark prints about the machine and the tree it ran on, without torch: cores, nvcc's
version and the commit."""

import os
import shutil
import subprocess


def cores():
    """(cores of the machine, cores this process may use)."""
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return os.cpu_count(), usable


def nvcc_version():
    nvcc = os.environ.get("TILECRAFT_NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    try:
        text = subprocess.run([nvcc, "--version"], capture_output=True, text=True,
                              timeout=30).stdout
        return text.strip().splitlines()[-1] if text.strip() else "unknown"
    except Exception:  # noqa: BLE001
        return "not found"


def commit():
    """TILECRAFT_COMMIT, or the checkout's short hash (a copied tree without history: unknown)."""
    value = os.environ.get("TILECRAFT_COMMIT")
    if not value:
        try:
            value = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                   text=True, cwd=os.path.dirname(os.path.abspath(__file__)),
                                   timeout=10).stdout.strip()
        except Exception:  # noqa: BLE001
            value = ""
    return value or "unknown"
