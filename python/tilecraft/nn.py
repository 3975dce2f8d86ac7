"""Drop-in torch layers on tilecraft's kernels: ``tilecraft.nn.Linear`` and ``tilecraft.nn.Conv2d``.

They are ``torch.nn.Linear`` and ``torch.nn.Conv2d`` (same constructor arguments, parameters and
state dicts: a torch checkpoint loads as it is) with an optional activation fused into the
kernel's epilogue (``activation="relu"``, ``"gelu"``, ``"silu"``, ...). Their forward runs
``tilecraft.gemm`` / ``tilecraft.conv2d``, which go through tilecraft's torch ops under
``torch.compile`` and autograd (see ``tilecraft.torch_ops``). tilecraft's kernels run on CUDA
tensors only: on a CPU tensor the layers compute with torch, and say so once per process.

``Conv2d`` runs on channels-last tensors: an input or weight in another memory format is copied
to channels-last on every call (``model.to(memory_format=torch.channels_last)`` avoids both).
"""

import warnings

import torch

from tilecraft import activation_grad, calls
from tilecraft.conv_geometry import as_pair

_told = set()


def _on_torch(layer):
    name = type(layer).__name__
    if name not in _told:
        _told.add(name)
        warnings.warn(f"tilecraft.nn.{name}: tilecraft's kernels run on CUDA tensors; this CPU "
                      f"input is computed by torch", stacklevel=3)


def _activation_text(activation, activation_args):
    if activation is None:
        return ""
    return f", activation={activation!r}" + (
        f", activation_args={tuple(activation_args)!r}" if activation_args else "")


class Linear(torch.nn.Linear):
    """``activation(x @ weight^T + bias)``: ``torch.nn.Linear`` with the activation fused."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None, *,
                 activation=None, activation_args=()):
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        activation_grad.apply(activation or "", torch.zeros(1), activation_args)  # checks it
        self.activation = activation
        self.activation_args = tuple(activation_args)

    def forward(self, x):
        if x.dim() < 1 or x.shape[-1] != self.in_features:
            raise ValueError(f"x: expected (..., in_features={self.in_features}), got "
                             f"{tuple(x.shape)}")
        if x.device.type == "cpu":
            _on_torch(self)
            y = torch.nn.functional.linear(x, self.weight, self.bias)
            return activation_grad.apply(self.activation or "", y, self.activation_args)
        rows = x.reshape(-1, self.in_features)
        y = calls.gemm(rows, self.weight.t(), bias=self.bias, activation=self.activation,
                     activation_args=self.activation_args)
        return y.reshape(*x.shape[:-1], self.out_features)

    def extra_repr(self):
        return super().extra_repr() + _activation_text(self.activation, self.activation_args)


class Conv2d(torch.nn.Conv2d):
    """``activation(conv2d(x, weight) + bias)``: ``torch.nn.Conv2d`` with the activation fused."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1,
                 groups=1, bias=True, padding_mode="zeros", device=None, dtype=None, *,
                 activation=None, activation_args=()):
        super().__init__(in_channels, out_channels, kernel_size, stride=stride, padding=padding,
                         dilation=dilation, groups=groups, bias=bias,
                         padding_mode=padding_mode, device=device, dtype=dtype)
        activation_grad.apply(activation or "", torch.zeros(1), activation_args)  # checks it
        self.activation = activation
        self.activation_args = tuple(activation_args)

    def _padding(self):
        """(top, bottom, left, right) of the zero padding the kernel applies."""
        if self.padding_mode != "zeros" or self.padding == "valid":
            return (0, 0, 0, 0)
        if self.padding == "same":
            sides = []
            for taps, dilation in zip(self.kernel_size, self.dilation):
                total = dilation * (taps - 1)
                sides += [total // 2, total - total // 2]
            return tuple(sides)
        rows, columns = as_pair("padding", self.padding)
        return (rows, rows, columns, columns)

    def forward(self, x):
        if x.dim() != 4 or x.shape[1] != self.in_channels:
            raise ValueError(f"x: expected (N, in_channels={self.in_channels}, H, W), got "
                             f"{tuple(x.shape)}")
        if x.device.type == "cpu":
            _on_torch(self)
            y = super().forward(x)
            return activation_grad.apply(self.activation or "", y, self.activation_args)
        if self.padding_mode != "zeros":
            x = torch.nn.functional.pad(x, self._reversed_padding_repeated_twice,
                                        mode=self.padding_mode)
        x = x.contiguous(memory_format=torch.channels_last)
        w = self.weight.contiguous(memory_format=torch.channels_last)
        return calls.conv2d(x, w, self.bias, self.stride, self._padding(), self.dilation,
                               self.groups, self.activation, self.activation_args)

    def extra_repr(self):
        return super().extra_repr() + _activation_text(self.activation, self.activation_args)


__all__ = ["Conv2d", "Linear"]
