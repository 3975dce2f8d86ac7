"""Why a GPU benchmark cannot run here (torch missing, or no CUDA device it sees), or None.
Importable without torch, so that a benchmark says why it skips instead of failing."""


def skip_reason():
    try:
        import torch
    except Exception as error:  # noqa: BLE001 - any import failure is a reason to skip
        return f"torch is not importable ({type(error).__name__}: {error})"
    if not torch.cuda.is_available():
        return "torch sees no CUDA device"
    return None
