"""Hypothesis strategies: arrays of the supported dtypes, broadcast-compatible shape pairs."""
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float16, np.float32, np.float64]
ALL = [np.bool_] + INTS + FLOATS
COMPLEX = [np.complex64, np.complex128]

# Small pools keep the number of distinct templates (= IREE compiles) bounded.
SHAPES = [(), (1,), (3,), (2, 3), (4, 1), (1, 3), (2, 1, 3), (0,), (2, 0)]


def shapes():
    return st.sampled_from(SHAPES)


def broadcast_pair():
    pairs = [((3,), (3,)), ((2, 3), (3,)), ((4, 1), (1, 3)), ((), (2, 3)), ((2, 1, 3), (4, 1)),
             ((0,), (1,)), ((1,), ()), ((2, 3), (2, 3))]
    return st.sampled_from(pairs)


def _complex_from_parts(re, im, dtype):
    out = np.empty(re.shape, dtype)
    out.real, out.imag = re, im
    return out


def arrays(dtype, shape, allow_nan=True, min_value=None, max_value=None, min_magnitude=None):
    """`min_magnitude`: smaller nonzero values are drawn as 0 (for products, which would otherwise
    go subnormal, which IREE flushes)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        elements = st.floats(min_value=min_value if min_value is not None else -1e3,
                             max_value=max_value if max_value is not None else 1e3,
                             allow_nan=False, allow_infinity=False, width=dtype.itemsize * 8,
                             allow_subnormal=False)   # IREE's CPU code flushes subnormals (README: Known limits)
        if min_magnitude is not None:
            elements = elements.map(lambda v: 0.0 if abs(v) < min_magnitude else v)
        elements = st.one_of(elements, st.sampled_from([np.nan, np.inf, -np.inf, 0.0, -0.0])) if allow_nan else elements
        return hnp.arrays(dtype, shape, elements=elements)
    if dtype.kind == "c":   # real and imaginary parts drawn as floats of half the width
        part = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
        re, im = (arrays(part, shape, allow_nan, min_value, max_value, min_magnitude) for _ in range(2))
        return st.builds(lambda a, b: _complex_from_parts(a, b, dtype), re, im)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo = info.min if min_value is None else max(info.min, min_value)
        hi = info.max if max_value is None else min(info.max, max_value)
        edge = [v for v in (info.min, info.max, 0, 1, -1) if lo <= v <= hi]
        return hnp.arrays(dtype, shape, elements=st.one_of(st.integers(lo, hi), st.sampled_from(edge)))
    return hnp.arrays(dtype, shape)
