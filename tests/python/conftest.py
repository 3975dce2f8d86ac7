import os
import random
import tempfile
from pathlib import Path

import pytest

# The whole session's live-object check (TILECRAFT_TEST_CHECK_LIVE), from the GPU test harness.
from gpu_harness import pytest_configure, pytest_sessionfinish  # noqa: F401

# Tests never touch the user's cache, signing key, archive key or trusted keys.
os.environ.setdefault("TILECRAFT_CACHE_DIR", tempfile.mkdtemp(prefix="tilecraft-test-cache-"))
_state = tempfile.mkdtemp(prefix="tilecraft-test-state-")
os.environ.setdefault("TILECRAFT_SIGNING_KEY_FILE", os.path.join(_state, "signing-key"))
os.environ.setdefault("TILECRAFT_ARCHIVE_KEY_FILE", os.path.join(_state, "archive-key"))
os.environ.setdefault("XDG_CONFIG_HOME", tempfile.mkdtemp(prefix="tilecraft-test-config-"))

# The randomized tests' seed: fresh each run unless given, and shown in the session header so
# that even a run that crashes can be replayed (TILECRAFT_RANDOM_SEED=<n>).
os.environ.setdefault("TILECRAFT_RANDOM_SEED", str(random.SystemRandom().randrange(2**32)))


def pytest_report_header(config):
    return f"randomized tests: TILECRAFT_RANDOM_SEED={os.environ['TILECRAFT_RANDOM_SEED']}"


@pytest.fixture(scope="module")
def no_compiler():
    """No nvcc for the duration of a module: a compile attempt fails at once, loudly."""
    import tilecraft

    old = os.environ.get("TILECRAFT_NVCC")
    os.environ["TILECRAFT_NVCC"] = "/nonexistent/tilecraft-test-no-nvcc"
    tilecraft._core.reload_settings()
    yield
    if old is None:
        del os.environ["TILECRAFT_NVCC"]
    else:
        os.environ["TILECRAFT_NVCC"] = old
    tilecraft._core.reload_settings()


@pytest.fixture(scope="session")
def gpu_reason():
    import tilecraft

    return tilecraft._core.cuda_device_available()


def pytest_collection_modifyitems(config, items):
    """TILECRAFT_TEST_SHARD=k/n keeps every n-th test from the k-th (0-based): scripts/test.sh runs
    n shards side by side on a small machine, each a whole pytest session of its own."""
    shard = os.environ.get("TILECRAFT_TEST_SHARD")
    if not shard:
        return
    try:
        k, n = (int(part) for part in shard.split("/"))
        if not 0 <= k < n:
            raise ValueError
    except ValueError:
        raise pytest.UsageError(f"TILECRAFT_TEST_SHARD: expected k/n with 0 <= k < n, got {shard!r}")
    kept = [item for i, item in enumerate(items) if i % n == k]
    config.hook.pytest_deselected(items=[item for i, item in enumerate(items) if i % n != k])
    items[:] = kept


def modules_in_cache():
    import tilecraft

    root = Path(tilecraft.compiler.cache_dir())
    return sorted(str(p) for p in root.rglob("module.so")) if root.exists() else []


@pytest.fixture
def nothing_compiles():
    """The cache gains no module during the test."""
    before = modules_in_cache()
    yield
    assert modules_in_cache() == before, "a module was compiled"
