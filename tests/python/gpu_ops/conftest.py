"""One-call ops and tuning on a GPU: skipped, with the reason, unless a compute capability 9.0
device, torch and tilecraft are usable."""

import pytest


def _skip_reason():
    import tilecraft

    reason = tilecraft._core.cuda_device_available()
    if reason is not None:
        return f"no usable CUDA device: {reason}"
    try:
        import torch
    except ImportError:
        return "torch is not installed (the tests compare with it)"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    if torch.cuda.get_device_capability() != (9, 0):
        return f"the device has compute capability {torch.cuda.get_device_capability()}, not 9.0"
    return None


def pytest_collection_modifyitems(config, items):
    reason = None
    for item in items:
        if "gpu_ops" not in str(item.fspath):
            continue
        if reason is None:
            reason = _skip_reason() or ""
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))
