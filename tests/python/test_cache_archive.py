"""tilecraft.compiler.export_cache / import_cache and the archive keys from Python and the command
line (the C++ tests cover the entries and every damage)."""

import os
import subprocess
import sys

import pytest

import tilecraft as cutlass


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILECRAFT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TILECRAFT_SIGNING_KEY_FILE", str(tmp_path / "state" / "key"))
    monkeypatch.setenv("TILECRAFT_ARCHIVE_KEY_FILE", str(tmp_path / "state" / "archive-key"))
    monkeypatch.delenv("TILECRAFT_TRUSTED_KEYS", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    cutlass._core.reload_settings()
    yield tmp_path
    monkeypatch.undo()
    cutlass._core.reload_settings()


def test_round_trip_and_refusal(own_cache):
    archive = own_cache / "cache.tcarchive"
    report = cutlass.compiler.export_cache(archive)
    assert report["entries"] == 0 and report["skipped"] == 0
    key = cutlass.compiler.archive_public_key()
    assert key.startswith("tilecraft-ed25519:") and any(key in note for note in report["notes"])
    assert archive.read_bytes().startswith(b"tilecraft-cache-archive 2\nsigner " + key.encode())
    assert cutlass.compiler.import_cache(str(archive))["entries"] == 0  # your own key
    damaged = own_cache / "damaged.tcarchive"
    data = archive.read_bytes()
    at = data.index(b"\nsignature ") + 12
    damaged.write_bytes(data[:at] + (b"0" if data[at:at + 1] != b"0" else b"1") + data[at + 1:])
    with pytest.raises(ValueError, match="signature does not verify.*nothing was imported"):
        cutlass.compiler.import_cache(damaged)
    damaged.write_bytes(data.replace(b"entries 0", b"entries 1"))
    with pytest.raises(ValueError, match="malformed entry line 'end-of-index'.*nothing was imported"):
        cutlass.compiler.import_cache(damaged)
    with pytest.raises(TypeError, match="^path: expected a path"):
        cutlass.compiler.import_cache(3)
    with pytest.raises(TypeError, match="^trusted_keys: expected a list"):
        cutlass.compiler.import_cache(archive, key)
    with pytest.raises(ValueError, match=r"trusted_keys\[0\]: expected a public key"):
        cutlass.compiler.import_cache(archive, ["tilecraft-ed25519:00"])


def test_an_archive_of_another_user_needs_their_key(own_cache, monkeypatch):
    other = cutlass.compiler.make_archive_key(str(own_cache / "other-key"))
    archive = own_cache / "theirs.tcarchive"
    cutlass.compiler.export_cache(archive, key_file=str(own_cache / "other-key"))
    with pytest.raises(ValueError, match=f"signed by {other}, which is not a key you trust"):
        cutlass.compiler.import_cache(archive)
    assert cutlass.compiler.import_cache(archive, [other])["entries"] == 0
    keys = own_cache / "trusted"
    keys.write_text(f"# a colleague\n{other}\n")
    assert cutlass.compiler.import_cache(archive, [str(keys)])["entries"] == 0
    monkeypatch.setenv("TILECRAFT_TRUSTED_KEYS", str(keys))
    cutlass._core.reload_settings()
    assert cutlass.compiler.import_cache(archive)["entries"] == 0
    with pytest.raises(ValueError, match="something is there already"):
        cutlass.compiler.make_archive_key(str(own_cache / "other-key"))


def test_the_archive_command(own_cache):
    env = dict(os.environ)
    cli = [sys.executable, "-m", "tilecraft.cli"]
    made = subprocess.run(cli + ["archive", "key", "--new"], env=env, capture_output=True,
                          text=True)
    assert made.returncode == 0, made.stderr
    key = made.stdout.strip()
    assert key.startswith("tilecraft-ed25519:")
    archive = own_cache / "a.tcarchive"
    out = subprocess.run(cli + ["archive", "export", str(archive)], env=env, capture_output=True,
                         text=True)
    assert out.returncode == 0 and "wrote 0 modules" in out.stdout, out.stderr
    env["TILECRAFT_ARCHIVE_KEY_FILE"] = str(own_cache / "nobody")
    untrusted = subprocess.run(cli + ["archive", "import", str(archive)], env=env,
                               capture_output=True, text=True)
    assert untrusted.returncode == 2
    assert "not a key you trust" in untrusted.stderr and "Traceback" not in untrusted.stderr
    trusted = subprocess.run(cli + ["archive", "import", str(archive), "--trust", key], env=env,
                             capture_output=True, text=True)
    assert trusted.returncode == 0 and "imported 0 modules" in trusted.stdout, trusted.stderr
