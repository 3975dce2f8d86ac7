import os
import random
import tempfile

import pytest

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


def pytest_configure(config):
    if os.environ.get("TILECRAFT_TEST_REPORT_LIVE"):
        import live_objects

        live_objects.count_raised_exceptions()


def pytest_sessionfinish(session, exitstatus):
    """After the last teardown: with TILECRAFT_TEST_CHECK_LIVE=1 the session fails if any
    tilecraft object (other than enum members) is still referenced; with
    TILECRAFT_TEST_REPORT_LIVE=1 what holds them is reported, in depth."""
    check = os.environ.get("TILECRAFT_TEST_CHECK_LIVE")
    report = os.environ.get("TILECRAFT_TEST_REPORT_LIVE")
    if not (check or report):
        return
    import sys

    import live_objects

    if os.environ.get("TILECRAFT_TEST_RELEASE_HELD_FRAMES"):  # under compute-sanitizer
        cleared = live_objects.release_frames_held_outside_python()
        sys.stderr.write(f"\ncleared {cleared} frames held outside Python\n")

    try:  # the one-call plans live for the process by design: not a leak
        import tilecraft

        tilecraft.clear_plans()
    except ImportError:
        pass
    alive = live_objects.report(sys.stderr, deep=bool(report))
    if check and alive and session.exitstatus == 0:
        session.exitstatus = 1
