"""store_values: what `x[idx] = value` writes, as NumPy's setitem converts the value: arrays cast
(unsafe), Python numbers checked for range, one number through a Python int where NumPy does that
(`b[0] = a[1]` into a signed int array), sequences of run-time numbers stacked, the result
broadcast to the region written. frontend/indexing.py's writes call values_for."""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..ir import dims
from ..ir.types import is_bool, is_int
from .registry import FUNCTIONS
from .values import Traced, items_of


def converted(em, value, dtype, what, scalar=False) -> Traced:
    """value as an array of x's dtype, as NumPy's setitem converts it: arrays cast (unsafe),
    Python numbers checked for range, and a sequence holding run-time values element by element
    (`out[t] = S, I, R`), its rows stacked. `scalar`: a store through integers and slices only,
    where NumPy converts a single number through a Python int (see _scalar_checks)."""
    if isinstance(value, (list, tuple)) and next(items_of(value, Traced), None) is not None:
        return FUNCTIONS["numpy.stack"](em, [converted(em, e, dtype, what, scalar=True) for e in value])
    if isinstance(value, Traced):
        if scalar and value.ndim == 0:
            _scalar_checks(em, value, dtype)
        v = em.cast(value, dtype) if value.dtype != dtype else Traced(value.value, None, value.params)
        if value.weak is int and is_int(dtype) and np.dtype(dtype).itemsize < 8:
            em.check(python_int_past(em, value, dtype), f"OverflowError: a Python integer is out of bounds for {dtype}")
    else:
        arr = np.asarray(value)
        if arr.dtype == object:
            raise ShapeError(f"{what}: can't store a {type(value).__name__} in an array")
        try:
            if arr.ndim == 0 and (scalar or type(value) in (bool, int, float, complex)):
                tmp = np.empty((), dtype)
                tmp[()] = value          # NumPy's own rules (OverflowError for out-of-range ints)
                arr = tmp
            else:
                with np.errstate(all="ignore"):
                    arr = arr.astype(dtype)
        except (OverflowError, ValueError, TypeError) as e:
            raise ShapeError(f"{what}: {type(e).__name__}: {e}") from None
        v = em.constant(arr)
    return v


def _scalar_checks(em, value: Traced, dtype) -> None:
    """NumPy stores one number into a signed integer array through a Python int (`b[0] = a[1]`,
    `b[:] = x.max()`, each number of a list): a float that is NaN (ValueError), infinite or past
    int64, or a number past the array's range, raises OverflowError where an array would wrap.
    (A 0-d array, which NumPy casts, is checked too: pyjitc doesn't tell it from a number.)"""
    dt, src = np.dtype(dtype), np.dtype(value.dtype)
    if not is_int(dt) or dt.kind == "u" or is_bool(src) or src.kind == "c" or value.weak is int:
        return        # unsigned targets wrap; Python ints have their own check (below)
    v = Traced(value.value, None, value.params)
    info = np.iinfo(dt)
    if src.kind == "f":
        nan = em.emit("compare", v, v, direction="NE")
        em.check(nan, "ValueError: cannot convert float NaN to integer")
        inf = em.emit("and", em.emit("not", em.emit("is_finite", v)), em.emit("not", nan))
        em.check(inf, "OverflowError: cannot convert float infinity to integer")
        big = em.constant(np.asarray(2.0 ** 63, src))
        past = em.emit("or", em.emit("compare", v, big, direction="GE"),
                       em.emit("compare", v, em.emit("neg", big), direction="LT"))
        past = em.emit("and", past, em.emit("is_finite", v))
        em.check(past, "OverflowError: Python int too large to convert to C long")
        if dt.itemsize < 8:    # truncated past the range: at or past min - 1 or max + 1 (exact in f64)
            w = em.cast(v, np.float64)
            out = em.emit("or", em.emit("compare", w, em.constant(np.float64(info.min - 1)), direction="LE"),
                          em.emit("compare", w, em.constant(np.float64(info.max + 1)), direction="GE"))
            em.check(em.emit("and", out, em.emit("not", past)), f"OverflowError: a number is out of bounds for {dt}")
        return
    if src == np.uint64:
        em.check(em.emit("compare", v, em.constant(np.uint64(2 ** 63 - 1)), direction="GT"),
                 "OverflowError: Python int too large to convert to C long")
    if np.can_cast(src, dt):
        return
    wide = np.dtype(np.uint64) if src == np.uint64 else np.dtype(np.int64)
    w = em.cast(v, wide)
    lo = em.emit("compare", w, em.constant(np.asarray(info.min, wide)), direction="LT") if src.kind == "i" else None
    hi = em.emit("compare", w, em.constant(np.asarray(info.max, wide)), direction="GT")
    em.check(hi if lo is None else em.emit("or", lo, hi), f"OverflowError: a number is out of bounds for {dt}")


def values_for(em, value, dtype, shape, what, scalar=False) -> Traced:
    """What x[idx] = value stores: value cast to x's dtype as NumPy's setitem does, broadcast."""
    v = converted(em, value, dtype, what, scalar)
    # NumPy drops leading length-1 axes of the value, then broadcasts
    while v.ndim > len(shape) and v.shape[0] == 1:
        v = em.emit("reshape", v, shape=v.shape[1:])
    try:
        dims.broadcast_to(v.shape, shape)
    except ValueError:
        raise ShapeError(f"{what}: could not broadcast input array from shape {v.shape} into shape {tuple(shape)}") from None
    return em.broadcast(v, shape)


def python_int_past(em, value: Traced, dtype) -> Traced:
    """Whether the run-time Python int `value` (held in int64) is past the range of the integer
    `dtype`, where NumPy raises OverflowError (NEP 50): below its least value or above its largest
    (uint64's largest is past every int64)."""
    info = np.iinfo(dtype)
    raw = em.cast(Traced(value.value), np.int64)
    below = em.emit("compare", raw, em.constant(np.int64(info.min)), direction="LT")
    if info.max > np.iinfo(np.int64).max:
        return below
    return em.emit("or", below, em.emit("compare", raw, em.constant(np.int64(info.max)), direction="GT"))
