"""Tensors that say they live on a CUDA device, for argument checks and kernel discovery on a
machine without a GPU: each speaks DLPack (an unversioned 'dltensor' capsule) with device
kDLCUDA and points at a small host buffer, which a correct library never reads without a GPU."""

import ctypes

_CUDA = 2  # DLDeviceType kDLCUDA
# name -> (DLDataTypeCode, bits)
_TYPES = {"float16": (2, 16), "bfloat16": (4, 16), "float32": (2, 32), "float64": (2, 64),
          "int8": (0, 8), "int32": (0, 32), "float8_e4m3fn": (10, 8)}


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32),
                ("dtype", _DataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class _Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype = ctypes.py_object
_new_capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class FakeCudaTensor:
    """shape and strides in elements (default: contiguous, row-major); dtype a key of _TYPES."""

    def __init__(self, shape, dtype="float16", strides=None):
        self.shape = tuple(shape)
        if strides is None:
            strides, step = [], 1
            for extent in reversed(self.shape):
                strides.insert(0, step)
                step *= max(extent, 1)
        self.strides = tuple(strides)
        self.dtype = dtype
        self._buffer = ctypes.create_string_buffer(256)
        self._alive = []  # the structures each capsule points at live as long as the tensor

    def t(self):
        """The transpose of a 2-D tensor (a view: strides swapped)."""
        view = FakeCudaTensor(self.shape[::-1], self.dtype, self.strides[::-1])
        view._buffer = self._buffer
        return view

    def __dlpack_device__(self):
        return (_CUDA, 0)

    def __dlpack__(self, *args, **kwargs):
        n = len(self.shape)
        shape = (ctypes.c_int64 * max(n, 1))(*self.shape)
        strides = (ctypes.c_int64 * max(n, 1))(*self.strides)
        code, bits = _TYPES[self.dtype]
        managed = _Managed(_Tensor(ctypes.addressof(self._buffer), _Device(_CUDA, 0), n,
                                   _DataType(code, bits, 1), shape, strides, 0), None, None)
        self._alive.append((managed, shape, strides))
        return _new_capsule(ctypes.addressof(managed), b"dltensor", None)

    def __repr__(self):
        return f"FakeCudaTensor({self.shape}, {self.dtype})"
