"""scripts/check_layers.py: the include and import rules of the layers, on small trees that break
each rule once, and on the repository itself (which passes, with its list of known problems)."""

import pathlib
import subprocess
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
CHECK = REPO / "scripts" / "check_layers.py"


def check(root, *extra):
    result = subprocess.run([sys.executable, str(CHECK), "--root", str(root), *extra],
                            capture_output=True, text=True, timeout=120)
    return result.returncode, result.stdout.splitlines()


def write(root, relative, text):
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


@pytest.fixture
def tree(tmp_path):
    """A tree that keeps every rule: each layer includes its own and lower layers' headers."""
    write(tmp_path, "include/tilecraft/core/status.hpp", "#pragma once\n")
    write(tmp_path, "include/tilecraft/compile/compiler.hpp",
          '#pragma once\n#include "tilecraft/core/status.hpp"\n')
    write(tmp_path, "src/compile/nvcc.hpp", "#pragma once\n")
    write(tmp_path, "src/compile/nvcc.cpp",
          '#include "compile/nvcc.hpp"\n#include "tilecraft/core/status.hpp"\n'
          'const char* text = R"(\n#include "tune/anything.hpp"\n#include "cutlass/gemm.h"\n)";\n'
          '/*\n#include "runtime/module.hpp"\n*/\n')
    write(tmp_path, "src/emit/shared.cpp", '#include "tilecraft/core/status.hpp"\n')
    write(tmp_path, "src/emit/conv/conv_parts.cpp", '#include "emit/shared.hpp"\n')
    write(tmp_path, "python/tilecraft/__init__.py", "from tilecraft import a\n")
    write(tmp_path, "python/tilecraft/a.py", "from tilecraft import b\nfrom tilecraft._core import X\n")
    write(tmp_path, "python/tilecraft/b.py", "import numbers\n")
    return tmp_path


def test_a_tree_that_keeps_the_rules_passes(tree):
    code, lines = check(tree)
    assert code == 0, lines
    assert lines == ["check_layers: 0 new problem(s), 0 known, 0 known ones gone"]


@pytest.mark.parametrize("relative, text, expected", [
    ("src/compile/up.cpp", '#include "tilecraft/tune/tuning.hpp"\n',
     "src/compile/up.cpp:1: down-only: compile includes tune"),
    ("src/runtime/reach.cpp", '\n#include "compile/nvcc.hpp"\n',
     "src/runtime/reach.cpp:2: private: runtime reaches a private header of compile"),
    ("src/emit/shared2.cpp", '#include "emit/conv/conv_parts.hpp"\n',
     "src/emit/shared2.cpp:1: shared-emit: a shared emitter includes the family folder 'conv'"),
    ("src/core/bad.cpp", '#include <cute/tensor.hpp>\n', "src/core/bad.cpp:1: no-cutlass"),
    ("include/tilecraft/core/up.hpp", '#include "tilecraft/compile/compiler.hpp"\n',
     "include/tilecraft/core/up.hpp:1: down-only: core includes compile"),
    ("include/tilecraft/jit/k.cuh", '#include <string>\n#include "cutlass/gemm.h"\n'
     '#include "tilecraft/core/status.hpp"\n',
     "include/tilecraft/jit/k.cuh:3: jit: a header of generated modules includes what is not "
     "installed with them"),
    ("python/tilecraft/c.py", "from tilecraft.a import _helper\n",
     "python/tilecraft/c.py:1: no-private: tilecraft.c imports tilecraft.a._helper"),
    ("python/tilecraft/b.py", "def f():\n    from tilecraft import a\n",
     "python/tilecraft/a.py:1: no-cycle: tilecraft.a (python/tilecraft/a.py:1) -> tilecraft.b "
     "(python/tilecraft/b.py:2) -> tilecraft.a"),
])
def test_each_rule_names_the_offending_line(tree, relative, text, expected):
    write(tree, relative, text)
    code, lines = check(tree)
    assert code == 1
    assert any(line.startswith(expected) for line in lines), lines
    assert lines[-1] == "check_layers: 1 new problem(s), 0 known, 0 known ones gone"


def test_known_problems_pass_until_they_are_gone(tree, tmp_path_factory):
    known = tmp_path_factory.mktemp("known") / "known.txt"
    problem = "src/compile/up.cpp: down-only: compile includes tune: " \
              '#include "tilecraft/tune/tuning.hpp"'
    known.write_text(f"# a comment\n{problem}\n")
    write(tree, "src/compile/up.cpp", '\n\n#include "tilecraft/tune/tuning.hpp"\n')
    code, lines = check(tree, "--known", str(known))
    assert code == 0, lines
    assert lines[-1] == "check_layers: 0 new problem(s), 1 known, 0 known ones gone"
    (tree / "src/compile/up.cpp").unlink()
    code, lines = check(tree, "--known", str(known))
    assert code == 1
    assert f"fixed, remove it from the known list: {problem}" in lines


def test_a_bad_argument_is_named():
    result = subprocess.run([sys.executable, str(CHECK), "--strict"], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 2
    assert "expected [--root DIR] [--known FILE], got '--strict'" in result.stderr


def test_the_repository_keeps_the_rules():
    code, lines = check(REPO, "--known", str(REPO / "scripts" / "layering_known.txt"))
    assert code == 0, "\n".join(line for line in lines if not line.startswith("known: "))
