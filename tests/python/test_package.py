"""The installed package carries the pinned CUTLASS headers and finds them by itself."""

import os
import pathlib
import subprocess
import sys

import pytest

import tilecraft


def test_bundled_headers_are_found_without_settings():
    package = pathlib.Path(tilecraft.__file__).resolve().parent
    bundled = package / "cutlass"
    if not (bundled / "include" / "cutlass" / "version.h").is_file():
        pytest.skip(f"this tilecraft ({package}) was not installed with its CUTLASS headers")
    env = {k: v for k, v in os.environ.items() if k not in ("TILECRAFT_CUTLASS_DIR", "CUTLASS_DIR")}
    out = subprocess.run([sys.executable, "-c", "import tilecraft; print(tilecraft._core.cutlass_dir())"],
                         env=env, capture_output=True, text=True, check=True).stdout.strip()
    assert pathlib.Path(out).resolve() == bundled.resolve()
    assert (bundled / "include" / "cute" / "tensor.hpp").is_file()
    assert (bundled / "tools" / "util" / "include" / "cutlass" / "util" / "device_memory.h").is_file()
    # Headers only: nothing of nvidia-cutlass's Python package or its dependencies.
    assert not (bundled / "cutlass_library").exists()
