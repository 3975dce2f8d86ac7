"""tilecraft.compiler.export_cache / import_cache from Python (the C++ tests cover the entries)."""

import pytest

import tilecraft as cutlass


@pytest.fixture
def own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("TILECRAFT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TILECRAFT_SIGNING_KEY_FILE", str(tmp_path / "state" / "key"))
    cutlass._core.reload_settings()
    yield tmp_path
    monkeypatch.undo()
    cutlass._core.reload_settings()


def test_round_trip_and_refusal(own_cache):
    archive = own_cache / "cache.tcarchive"
    report = cutlass.compiler.export_cache(archive)
    assert report["entries"] == 0 and report["skipped"] == 0
    assert archive.read_bytes().startswith(b"tilecraft-cache-archive 1\n")
    assert cutlass.compiler.import_cache(str(archive))["entries"] == 0
    damaged = own_cache / "damaged.tcarchive"
    damaged.write_bytes(archive.read_bytes().replace(b"entries 0", b"entries 1"))
    with pytest.raises(ValueError, match="digest does not match its content.*nothing was imported"):
        cutlass.compiler.import_cache(damaged)
    with pytest.raises(TypeError, match="^path: expected a path"):
        cutlass.compiler.import_cache(3)
