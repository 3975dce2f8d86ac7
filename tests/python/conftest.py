import os
import tempfile

import pytest

# Tests never touch the user's cache.
os.environ.setdefault("TILECRAFT_CACHE_DIR", tempfile.mkdtemp(prefix="tilecraft-test-cache-"))


@pytest.fixture(scope="session")
def gpu_reason():
    import tilecraft

    return tilecraft._core.cuda_device_available()
