"""elementwise: small building blocks the NumPy functions' lowerings share: a constant shaped like
an operand, compare and select, NaN and sign-bit tests, picking a lowering by dtype kind, and
computing in float64 where IREE's float32 is not accurate enough."""
from __future__ import annotations

import numpy as np

from ...ir.types import is_complex
from ..values import Traced


def const(em, value, like: Traced) -> Traced:
    """`value` in the dtype and shape of `like`."""
    return em.full(value, like.dtype, like.shape)


def zero_like(em, x):
    return em.full(0, x.dtype, x.shape)


def cmp(em, a, b, d):
    return em.emit("compare", a, b, direction=d)


def sel(em, p, a, b):
    return em.emit("select", p, a, b)


def isnan(em, x):
    return cmp(em, x, x, "NE")


def signbit(em, x):
    """The sign bit: of a float, read from its bits (-0.0 and a NaN with the sign set included, as
    NumPy's signbit and copysign see them); of an integer, x < 0."""
    if x.dtype.kind != "f":
        return cmp(em, x, zero_like(em, x), "LT")
    bits = em.emit("bitcast", x, dtype=np.dtype(f"i{x.dtype.itemsize}"))
    return cmp(em, bits, em.full(0, bits.dtype, bits.shape), "LT")


def identity(em, x, out_dtype):
    return x


def prim(name):
    """A lowering that is one IR primitive."""
    return lambda em, *xs, out_dtype: em.emit(name, *xs)


def by_kind(**lowers):
    """Pick a lowering by the loop dtype's kind: keys b (bool), i, u, f, c, iu (either integer
    kind), any (the rest)."""
    def lower(em, *xs, out_dtype):
        kind = xs[0].dtype.kind
        fn = lowers.get(kind) or lowers.get("iu" if kind in "iu" else "_") or lowers["any"]
        return fn(em, *xs, out_dtype=out_dtype)
    return lower


def in_double(fn):
    """A lowering that computes fn(em, *xs) in float64 (complex128 for complex values) and rounds
    back. IREE's float32 sin/cos/tan lose up to ~5e5 ulp near their zeros, and its float32 atan2
    (also inside complex log and sqrt) gives NaN at (0, 0) and at infinities (measured)."""
    def lower(em, *xs, out_dtype=None):
        dt = xs[0].dtype
        if dt in (np.float64, np.complex128):
            return fn(em, *xs)
        wide = np.complex128 if is_complex(dt) else np.float64
        return em.cast(fn(em, *[em.cast(x, wide) for x in xs]), dt)
    return lower


def via_float64(name):
    """One IR primitive, computed in float64 (see in_double)."""
    return in_double(lambda em, *xs: em.emit(name, *xs))
