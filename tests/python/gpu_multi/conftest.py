"""Two-GPU suite (issue 16): skips every item, with the reason printed, unless two CUDA devices
are usable. Items carry the ``multigpu`` marker (``pytest -m multigpu``)."""

import pytest


def _reason():
    try:
        import torch
    except Exception as error:  # noqa: BLE001
        return f"torch is not importable ({type(error).__name__}: {error})"
    try:
        import tilecraft
    except Exception as error:  # noqa: BLE001
        return f"tilecraft is not importable ({type(error).__name__}: {error})"
    reason = tilecraft._core.cuda_device_available()
    if reason is not None:
        return reason
    count = torch.cuda.device_count()
    if count < 2:
        return f"needs two CUDA devices, this machine has {count}"
    return None


REASON = _reason()


def pytest_report_header(config):
    return f"tilecraft two-GPU suite: {REASON or 'two devices usable'}"


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "gpu_multi" in str(item.fspath):
            item.add_marker(pytest.mark.multigpu)
            if REASON is not None:
                item.add_marker(pytest.mark.skip(reason=REASON))
