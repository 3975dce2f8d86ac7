"""Status: truthy when fine; falsy with ``.error`` naming what is wrong (seed 003)."""


class Status:
    __slots__ = ("error",)

    def __init__(self, error=None):
        self.error = error

    def __bool__(self):
        return self.error is None

    def __repr__(self):
        return "Status(ok)" if self.error is None else f"Status(error={self.error!r})"


__all__ = ["Status"]
