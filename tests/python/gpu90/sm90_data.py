"""Random operands, poisoned outputs and their placement in memory (torch; imported lazily so
that the test modules collect without torch).

Every value is made in float64 and converted ONCE to its element, and the reference multiplies
the converted values (converted back to float64): input quantization, fp8 included, is never
counted as an error.
"""

from sm90_kernels import ELEMENTS

DEVICE = "cuda"   # where data and the float64 reference live
FP8_MAX = {"e4m3": 448.0, "e5m2": 57344.0}


def _torch():
    import torch

    return torch


def torch_dtype(element):
    return getattr(_torch(), ELEMENTS[element][1])


def poison_value(element):
    """What D and aux are filled with before the launch: NaN for floats, -77 for integers."""
    return -77 if element in ("s8", "s32") else float("nan")


def convert(x, element):
    """float64 ``x`` to ``element``; fp8 through float32, the conversion torch supports on every
    device (a double rounding of random floats is harmless: the reference reads the result)."""
    torch = _torch()
    if element in FP8_MAX:
        x = x.to(torch.float32)
    return x.to(torch_dtype(element))


def full(shape, value, element):
    torch = _torch()
    return convert(torch.full(shape, value, dtype=torch.float64, device=DEVICE), element)


def random_values(shape, element, data, amax, gen, span=1.0):
    """``data`` "int": integers in [-amax, amax] (exact in every element used with them);
    "float": uniform(-span, span) rounded to the element."""
    torch = _torch()
    if data == "int":
        x = torch.randint(-amax, amax + 1, shape, generator=gen, device=DEVICE)
        x = x.to(torch.float64)
    else:
        x = (torch.rand(shape, generator=gen, device=DEVICE, dtype=torch.float64) * 2 - 1) * span
    if element in FP8_MAX:
        x = x.clamp(-FP8_MAX[element], FP8_MAX[element])
    return convert(x, element)


def random_dyadic(shape, element, gen, steps=8, unit=0.5):
    """Multiples of ``unit`` in [-steps * unit, steps * unit]: exact in f16 / bf16 / f32."""
    torch = _torch()
    x = torch.randint(-steps, steps + 1, shape, generator=gen, device=DEVICE).to(torch.float64)
    return convert(x * unit, element)


def place(x, layout):
    """Logical ``x`` ((rows, cols) or (batch, rows, cols)) stored RowMajor or ColumnMajor: the
    same logical shape, column-major strides for ColumnMajor (e.g. ``empty(K, M).t()``)."""
    if layout == "ColumnMajor":
        return x.transpose(-1, -2).contiguous().transpose(-1, -2)
    return x.contiguous()


def to64(t):
    """Any tensor (fp8 included) as float64 on DEVICE."""
    torch = _torch()
    t = t.to(device=DEVICE)
    if t.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
        t = t.to(torch.float32)
    return t.to(torch.float64)


def scale_tensor(value):
    """A one-element float32 CUDA tensor holding a per-tensor scale."""
    torch = _torch()
    return torch.tensor([value], dtype=torch.float32, device=DEVICE)


def bias_vector(values, batched_per_batch, element):
    """The bias as GemmArguments takes it: (len,) or, one vector per batch, (batch, len) whose
    rows start 16-byte aligned (padded when len * bytes is not a multiple of 16)."""
    if not batched_per_batch:
        return values.contiguous()
    batch, length = values.shape
    per_16 = 128 // ELEMENTS[element][2]
    padded = -(-length // per_16) * per_16
    storage = full((batch, padded), float("nan"), element)
    storage[:, :length] = values
    return storage[:, :length]
