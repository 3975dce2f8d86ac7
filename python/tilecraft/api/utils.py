"""Utilities of the arguments-first API (seed 003)."""

from tilecraft import _core
from tilecraft.api.status import Status


def is_device_cc_supported(ccs):
    """A truthy Status when the current device's compute capability is in ``ccs``; otherwise a
    falsy one whose ``.error`` says why (no device, or its capability)."""
    return Status(_core.api.is_device_cc_supported(ccs))  # ints, checked by name


__all__ = ["is_device_cc_supported"]
