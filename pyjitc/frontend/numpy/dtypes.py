"""dtypes: casts (ndarray.astype) and the scalar types as functions (np.float32(x), np.int64(x)).
A dtype argument must be known at compile time."""
from __future__ import annotations

import numpy as np

from ...errors import NotSupportedError
from ...ir.types import SUPPORTED_DTYPES, as_dtype
from ..registry import register
from ..values import Traced, fold, is_static


def static_dtype(em, dtype, what="dtype"):
    dtype = em.static(dtype, what)
    try:
        return as_dtype(dtype)
    except TypeError as e:
        raise NotSupportedError(str(e)) from None


@register(method="astype", complex_ok=True, views="copy")
def cast_impl(em, x, dtype, order="K", casting="unsafe", subok=True, copy=True):
    dt = static_dtype(em, dtype)
    if is_static(x):
        return np.asarray(x).astype(dt)
    if copy is False and isinstance(x, Traced) and x.dtype == dt and x.weak is None:
        return x     # `a.astype(a.dtype, copy=False)` is a itself: writes into it reach a
    x = em.asarray(x)
    return em.cast(x, dt) if x.dtype != dt else Traced(x.value, None, x.params)


def _scalar_type(dt):
    def impl(em, x=0):
        if is_static(x):
            return fold(dt.type, x)
        if isinstance(x, Traced) and x.ndim and x.dtype == dt and x.weak is None:
            return x     # np.float64(a) of a float64 array is a itself, as NumPy returns it
        return cast_impl(em, x, dt)
    return impl


for _dt in SUPPORTED_DTYPES:
    register(f"numpy.{_dt.type.__name__}", *(["numpy.bool_"] if _dt == np.bool_ else []),
             complex_ok=_dt.kind == "c", views=True)(_scalar_type(_dt))
