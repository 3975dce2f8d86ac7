"""The ``tilecraft`` command on a GPU: ``tune`` and ``profile`` of a problem file go on past a
problem no kernel supports (int8 1023x1023x1023: odd leading dimensions), name it with its reason,
do the others, and exit with 1."""

import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")

PROBLEMS = "256x256x128 f16\n1023x1023x1023 int8 none odd\n128x256x64 bf16\n"


def run_cli(*argv):
    return subprocess.run([sys.executable, "-m", "tilecraft.cli", *argv], capture_output=True,
                          text=True, env=dict(os.environ), timeout=1200)


def test_tune_file_goes_on_past_a_problem_no_kernel_supports(tmp_path):
    problems = tmp_path / "problems.txt"
    problems.write_text(PROBLEMS)
    result = run_cli("tune", "--file", str(problems), "--max-candidates", "2", "--json")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    rows = json.loads(result.stdout)
    assert [r["problem"] for r in rows] == ["f16 256x256x128", "int8 1023x1023x1023 odd",
                                            "bf16 128x256x64"]
    assert rows[0]["kernel"] and rows[2]["kernel"], rows
    assert rows[1]["kernel"] is None
    assert rows[1]["failed"].startswith("no kernel supports int8 1023x1023x1023 on compute "
                                        "capability 90"), rows[1]
    assert "tilecraft tune: could not tune 1 of 3 problems:" in result.stderr, result.stderr
    assert "int8 1023x1023x1023 odd: no kernel supports int8 1023x1023x1023" in result.stderr

    # The winners were stored: tuned again without --force, they come from the tuning cache.
    again = run_cli("tune", "--shape", "256x256x128", "--dtype", "f16", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)[0]["reason"].startswith("tuned winner from the tuning cache")


def test_profile_file_goes_on_past_a_problem_no_kernel_supports(tmp_path):
    problems = tmp_path / "problems.json"
    problems.write_text(json.dumps([{"m": 1023, "n": 1023, "k": 1023, "dtype": "int8"},
                                    {"m": 256, "n": 256, "k": 128, "dtype": "f16"}]))
    out = tmp_path / "out"
    result = run_cli("profile", "--file", str(problems), "--max-candidates", "2", "--repeats", "5",
                     "--out", str(out))
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr, result.stderr
    assert "could not profile it: no kernel supports int8 1023x1023x1023" in result.stderr
    assert "tilecraft profile: could not profile 1 of 2 problems:" in result.stderr
    records = json.loads((out / "profile.json").read_text())
    assert records[0]["problem"] == "int8 1023x1023x1023" and "ratio" not in records[0]
    assert records[0]["failed"].startswith("no kernel supports int8 1023x1023x1023")
    assert records[1]["ratio"] > 0 and records[1]["error"] < 4e-3, records[1]
    assert (out / "profile.csv").read_text().count("\n") == 3
    assert (out / "profile.png").read_bytes()[:4] == b"\x89PNG"
