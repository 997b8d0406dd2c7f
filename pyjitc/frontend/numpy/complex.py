"""complex: the functions about complex numbers (conjugate, real, imag, angle) and the ndarray
attributes real and imag. Which other functions take complex values is said where each is
registered (complex_ok); the rest refuse them (registry.refuse_complex)."""
from __future__ import annotations

import numpy as np

from ...ir.types import is_complex
from ..registry import register
from ..values import fold, is_static, make_view
from .elementwise import by_kind, via_float64
from .ufuncs import ufunc

def _conjugate(em, x, out_dtype):
    return em.emit("complex", em.emit("real", x), em.emit("neg", em.emit("imag", x)))


ufunc(np.conjugate, by_kind(c=_conjugate, any=lambda em, x, out_dtype: x), "numpy.conjugate", "numpy.conj",
      method=("conj", "conjugate"), complex_ok=True)


@register("numpy.real", attribute="real", complex_ok=True, views=True)
def real(em, val):
    if is_static(val):
        return fold(np.real, val)
    x = em.asarray(val)
    if not is_complex(x.dtype):
        return x          # NumPy's x.real of a real array is x's own memory
    # a view, as NumPy's: `c.real[2] = 5` and `r = c.real; r += 1` write into c
    return make_view(x, em.emit("real", x), lambda base: em.b.emit("real", base),
                     lambda base, v: em.b.emit("complex", v, em.b.emit("imag", base)), ("real", None))


@register("numpy.imag", attribute="imag", complex_ok=True, views=True)
def imag(em, val):
    if is_static(val):
        return fold(np.imag, val)
    x = em.asarray(val)
    if not is_complex(x.dtype):
        return make_view(x, em.full(0, x.dtype, x.shape), None, None)   # read-only in NumPy: writes are refused
    return make_view(x, em.emit("imag", x), lambda base: em.b.emit("imag", base),
                     lambda base, v: em.b.emit("complex", em.b.emit("real", base), v), ("imag", None))


@register("numpy.angle", complex_ok=True)
def angle(em, z, deg=False):
    """arctan2(imag, real), as NumPy computes it; integers give float64."""
    if is_static(z):
        return fold(np.angle, z, deg=em.static(deg, "angle: deg"))
    x = em.asarray(z)
    if is_complex(x.dtype):
        re, im = em.emit("real", x), em.emit("imag", x)
    else:
        re = em.cast(x, np.result_type(x.dtype, np.float16) if x.dtype.kind == "f" else np.float64)
        im = em.full(0, re.dtype, re.shape)
    a = via_float64("atan2")(em, im, re, out_dtype=re.dtype)
    if em.static(deg, "angle: deg"):
        a = em.emit("mul", a, em.full(180 / np.pi, a.dtype, a.shape))
    return a
