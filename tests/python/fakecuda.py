"""A fake CUDA tensor for CPU-only tests of argument checks: an object speaking DLPack (an
unversioned 'dltensor' capsule) that claims device kDLCUDA:0 and points at a small host buffer it
owns. Shapes and strides may be anything, hostile ones included; a correct implementation never
dereferences the data without a GPU. (From the audit of 2026-11-26, which wrote it for this
project: ../shared/audit-2026-11-26/fakecuda.py.)"""
import ctypes

kDLCPU, kDLCUDA = 1, 2
CODES = {"int": 0, "uint": 1, "float": 2, "bfloat": 4, "bool": 6}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    pass


DLManagedTensor._fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                            ("deleter", ctypes.c_void_p)]

PyCapsule_New = ctypes.pythonapi.PyCapsule_New
PyCapsule_New.restype = ctypes.py_object
PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_keep = []


def _dtype(name):
    table = {"float32": ("float", 32), "float16": ("float", 16), "bfloat16": ("bfloat", 16),
             "float64": ("float", 64), "int8": ("int", 8), "uint8": ("uint", 8),
             "int32": ("int", 32), "int64": ("int", 64), "e4m3": (10, 8), "e5m2": (12, 8),
             "bool": ("bool", 8), "complex64": (5, 64)}
    code, bits = table[name]
    return (CODES[code] if isinstance(code, str) else code), bits


class FakeTensor:
    def __init__(self, shape, dtype="float32", strides=None, device=kDLCUDA, device_id=0,
                 data=None, lanes=1):
        self.shape = tuple(shape)
        self.dtype_name = dtype
        if strides is None:
            strides, acc = [], 1
            for s in reversed(self.shape):
                strides.insert(0, acc); acc *= max(s, 1)
        self.strides = tuple(strides)
        self.device, self.device_id, self.lanes = device, device_id, lanes
        self._buf = ctypes.create_string_buffer(64)
        self.data = ctypes.addressof(self._buf) if data is None else data

    def __dlpack_device__(self):
        return (self.device, self.device_id)

    def __dlpack__(self, *args, **kwargs):
        m = DLManagedTensor()
        n = len(self.shape)
        shape = (ctypes.c_int64 * max(n, 1))(*self.shape)
        strides = (ctypes.c_int64 * max(n, 1))(*self.strides)
        code, bits = _dtype(self.dtype_name)
        m.dl_tensor = DLTensor(self.data, DLDevice(self.device, self.device_id), n,
                               DLDataType(code, bits, self.lanes), shape, strides, 0)
        m.manager_ctx = None
        m.deleter = None
        _keep.append((m, shape, strides))
        return PyCapsule_New(ctypes.addressof(m), b"dltensor", None)

    def __repr__(self):
        return f"FakeCuda{self.shape}:{self.dtype_name}"

    def data_ptr(self):
        return self.data

    def t(self):
        """The transpose of a 2-D tensor: a view of the same buffer, strides swapped."""
        view = FakeTensor(self.shape[::-1], self.dtype_name, self.strides[::-1], self.device,
                          self.device_id, self.data, self.lanes)
        view._buf = self._buf
        return view

    def dim(self):
        return len(self.shape)


def T(*shape, dtype="float32", **kw):
    return FakeTensor(shape, dtype, **kw)
