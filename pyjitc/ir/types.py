"""types: dtypes and tensor types of the typed IR. A dtype *is* a `numpy.dtype`, so NumPy
remains the single authority on promotion (NEP 50); this module only names and checks them."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# The dtypes the IR carries end to end.
SUPPORTED_DTYPES = tuple(
    np.dtype(t)
    for t in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
              "float16", "float32", "float64", "complex64", "complex128")
)

_SHORT = {
    "bool": "bool", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "float32": "f32", "float64": "f64", "complex64": "c64", "complex128": "c128",
}
_FROM_SHORT = {v: np.dtype(k) for k, v in _SHORT.items()}


def short_name(dtype: np.dtype) -> str:
    return _SHORT.get(np.dtype(dtype).name, np.dtype(dtype).name)


def dtype_from_short(name: str) -> np.dtype:
    if name in _FROM_SHORT:
        return _FROM_SHORT[name]
    return as_dtype(name)


def as_dtype(x) -> np.dtype:
    """NumPy's own reading of a dtype-like, restricted to what pyjitc compiles."""
    dt = np.dtype(x)
    if dt not in SUPPORTED_DTYPES:
        raise TypeError(f"dtype {dt} is not supported by pyjitc (supported: "
                        + ", ".join(d.name for d in SUPPORTED_DTYPES) + ")")
    return dt


def is_float(dt: np.dtype) -> bool:
    return dt.kind == "f"


def is_complex(dt: np.dtype) -> bool:
    return dt.kind == "c"


def real_dtype(dt: np.dtype) -> np.dtype:
    """The dtype of a complex dtype's parts (float32 for complex64); other dtypes unchanged."""
    return np.dtype(np.float32 if dt == np.complex64 else np.float64) if dt.kind == "c" else dt


def is_int(dt: np.dtype) -> bool:
    return dt.kind in "iu"


def is_bool(dt: np.dtype) -> bool:
    return dt.kind == "b"


@dataclass(frozen=True)
class TensorType:
    """A value's static shape and dtype. Every IR value has one."""
    shape: tuple[int, ...]
    dtype: np.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def with_shape(self, shape) -> "TensorType":
        return TensorType(tuple(shape), self.dtype)

    def with_dtype(self, dtype) -> "TensorType":
        return TensorType(self.shape, np.dtype(dtype))

    def __str__(self) -> str:
        return f"{short_name(self.dtype)}[{','.join(map(str, self.shape))}]"
