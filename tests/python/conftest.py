import os
import tempfile

import pytest

# Tests never touch the user's cache or signing key.
os.environ.setdefault("TILECRAFT_CACHE_DIR", tempfile.mkdtemp(prefix="tilecraft-test-cache-"))
os.environ.setdefault("TILECRAFT_SIGNING_KEY_FILE",
                      os.path.join(tempfile.mkdtemp(prefix="tilecraft-test-state-"), "signing-key"))


@pytest.fixture(scope="session")
def gpu_reason():
    import tilecraft

    return tilecraft._core.cuda_device_available()


def pytest_unconfigure(config):
    """With TILECRAFT_TEST_REPORT_LIVE=1: after the session, list the tilecraft C++ objects
    still alive and what holds them (nanobind reports them as leaks at interpreter exit)."""
    if not os.environ.get("TILECRAFT_TEST_REPORT_LIVE"):
        return
    import gc
    import sys

    gc.collect()
    held = {}
    for holder in gc.get_objects():
        for obj in gc.get_referents(holder):
            if type(obj).__module__.startswith("tilecraft._core"):
                key = (type(holder).__name__, type(obj).__name__)
                held.setdefault(key, []).append(holder)
    sys.stderr.write(f"\ntilecraft live objects after the session: {len(held)} kinds\n")
    for (holder_type, obj_type), holders in sorted(held.items()):
        sys.stderr.write(f"  {len(holders)} {obj_type} held by {holder_type}\n")
        for holder in holders[:2]:
            owners = [type(r).__name__ + (f"({getattr(r, '__name__', '')})"
                                          if hasattr(r, "__name__") else "")
                      for r in gc.get_referrers(holder)][:6]
            sys.stderr.write(f"      holder {repr(holder)[:120]!s} <- {owners}\n")
