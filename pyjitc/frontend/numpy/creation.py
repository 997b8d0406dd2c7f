"""creation: NumPy's functions that make arrays (zeros, arange, full, *_like, array, asarray, copy).
Shapes and dtypes are known at compile time, so NumPy itself makes most of these arrays: the program
holds the result as an array whose contents are known (values.Emitter.array)."""
from __future__ import annotations

import numpy as np

from ...errors import NotSupportedError, ShapeError
from ...ir.types import SUPPORTED_DTYPES
from ..registry import FUNCTIONS, register
from ..values import Traced, fold, is_static
from .dtypes import cast_impl, static_dtype
from .shapes import ravel, reshape, stack

def _creation(np_fn):
    """Creation functions take compile-time shapes and dtypes; NumPy computes the result."""
    def impl(em, *args, **kwargs):
        args = em.static(list(args), f"np.{np_fn.__name__}: its arguments")
        kwargs = {k: em.static(v, f"np.{np_fn.__name__}: {k}") for k, v in kwargs.items()}
        if "dtype" in kwargs and kwargs["dtype"] is not None:
            kwargs["dtype"] = static_dtype(em, kwargs["dtype"])
        out = fold(np_fn, *args, **kwargs)
        if out.dtype not in SUPPORTED_DTYPES:
            raise NotSupportedError(f"np.{np_fn.__name__} made dtype {out.dtype}, which pyjitc does not support")
        return out
    return impl


for _fn in (np.zeros, np.ones, np.arange, np.linspace, np.eye, np.identity, np.tri):
    register(f"numpy.{_fn.__name__}", complex_ok=_fn in (np.zeros, np.ones))(_creation(_fn))
for _fn in (np.logspace, np.geomspace):
    register(f"numpy.{_fn.__name__}", note="compile-time endpoints")(_creation(_fn))
# deterministic: NumPy's empty is uninitialised
register("numpy.empty", complex_ok=True, note="zero-filled")(_creation(np.zeros))


@register("numpy.full", complex_ok=True)
def full(em, shape, fill_value, dtype=None):
    shape = em.static(shape, "np.full: shape")
    if is_static(fill_value):
        return fold(np.full, shape, fill_value, dtype=None if dtype is None else static_dtype(em, dtype))
    dt = static_dtype(em, dtype) if dtype is not None else fill_value.dtype
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return em.broadcast(em.cast(fill_value, dt), shape)


def _like_dtype(em, a, dtype):
    """The dtype of an np.*_like result: `dtype=` if given, else the prototype's."""
    if dtype is not None:
        return static_dtype(em, dtype)
    return a.dtype if isinstance(a, Traced) else np.asarray(a).dtype


def _like(value):
    def impl(em, a, dtype=None, shape=None):
        dt = _like_dtype(em, a, dtype)
        shape = em.shape_of(a) if shape is None else em.static(shape, "shape")
        return np.full(shape, value, dtype=dt)
    return impl


register("numpy.zeros_like", "numpy.empty_like", complex_ok=True)(_like(0))
register("numpy.ones_like", complex_ok=True)(_like(1))


@register("numpy.full_like", complex_ok=True)
def full_like(em, a, fill_value, dtype=None):
    dt = _like_dtype(em, a, dtype)
    return full(em, em.shape_of(a), fill_value if not is_static(fill_value) else np.asarray(fill_value).astype(dt), dt)


@register(method="flatten", complex_ok=True)
def flatten(em, a, order="C"):
    return numpy_copy(em, ravel(em, a, order))


@register("numpy.copy", method="copy", complex_ok=True)
def numpy_copy(em, a, order="C"):
    if is_static(a):
        return np.copy(a)
    return Traced(a.value, None, a.params)   # a new array object: in-place updates don't reach `a`


@register("numpy.asarray", complex_ok=True)
def asarray(em, a, dtype=None, copy=None, order=None):
    if isinstance(a, (list, tuple)) and _holds_run_time_values(a):   # nested lists: rows stacked
        rows = [asarray(em, r) if isinstance(r, (list, tuple)) else r for r in a]
        return stack(em, rows) if dtype is None else cast_impl(em, stack(em, rows), dtype)
    if is_static(a):
        return np.asarray(a, dtype=dtype)
    out = a if dtype is None or static_dtype(em, dtype) == a.dtype else cast_impl(em, a, dtype)
    if copy is False and out is not a:
        raise NotSupportedError("copy=False: the dtype can't change without a copy (NumPy raises ValueError)",
                                hint="leave out copy=False, or pass copy=None")
    return numpy_copy(em, out) if copy and out is a else out


@register("numpy.asanyarray", complex_ok=True)
def asanyarray(em, a, dtype=None, order=None):
    return asarray(em, a, dtype=dtype)


@register("numpy.ascontiguousarray", "numpy.asfortranarray", complex_ok=True,
          note="memory layout has no meaning for compiled arrays; a 0-d input gives shape (1,) as NumPy's")
def ascontiguousarray(em, a, dtype=None):
    out = asarray(em, a, dtype=dtype)
    if is_static(out):
        return np.ascontiguousarray(out)
    return reshape(em, out, (1,)) if out.ndim == 0 else out


@register("numpy.asarray_chkfinite", complex_ok=True, note="a NaN or infinity raises ValueError at run time")
def asarray_chkfinite(em, a, dtype=None, order=None):
    out = asarray(em, a, dtype=dtype)
    if is_static(out):
        return fold(np.asarray_chkfinite, out)
    if np.dtype(out.dtype).kind in "fc":
        finite = em.emit("reduce", em.emit("is_finite", FUNCTIONS["numpy.real"](em, out)
                                           if np.dtype(out.dtype).kind == "c" else out), kind="and",
                         axes=tuple(range(out.ndim))) if out.ndim else em.emit("is_finite", out)
        if np.dtype(out.dtype).kind == "c":
            im = FUNCTIONS["numpy.imag"](em, out)
            finite = em.emit("and", finite, em.emit("reduce", em.emit("is_finite", im), kind="and",
                                                    axes=tuple(range(im.ndim))) if im.ndim else em.emit("is_finite", im))
        em.check(em.emit("not", finite), "ValueError: array must not contain infs or NaNs")
    return out


@register("numpy.array", complex_ok=True)
def array(em, a, dtype=None, copy=True, order=None):
    """np.array copies unless told `copy=False`/`None` (then it is np.asarray)."""
    return asarray(em, a, dtype=dtype, copy=copy, order=order)


def as_array(em, a) -> Traced:
    """np.asarray(a) as a traced array, for functions that convert their arguments first: lists of
    arrays are stacked, and a Python scalar becomes a strongly typed 0-d array (int64, float64)."""
    t = em.asarray(asarray(em, a))
    return em.cast(t, t.dtype) if t.weak else t


def _holds_run_time_values(a) -> bool:
    return any(_holds_run_time_values(x) if isinstance(x, (list, tuple)) else not is_static(x) for x in a)


@register("numpy.copyto", complex_ok=True, note="writes into dst in place (views and arguments see it), with NumPy's casting rule")
def copyto(em, dst, src, casting="same_kind", where=True):
    from ..assignment import store
    casting = em.static(casting, "copyto: casting")
    if not isinstance(dst, Traced):
        raise ShapeError("TypeError: copyto() argument 1 must be a numpy.ndarray")
    src_dt = em.dtype_of(src)
    if not np.can_cast(src_dt if isinstance(src_dt, np.dtype) else np.result_type(src_dt(0), dst.dtype),
                       dst.dtype, casting=casting):
        raise ShapeError(f"TypeError: Cannot cast array data from {src_dt} to {dst.dtype} according to the rule "
                         f"'{casting}'")
    value = FUNCTIONS["numpy.broadcast_to"](em, em.asarray(src, dst.dtype) if not isinstance(src, Traced)
                                            else em.cast(src, dst.dtype), dst.shape)
    if where is not True:
        value = FUNCTIONS["numpy.where"](em, where, value, dst)
    store(em, dst, Ellipsis, value, "np.copyto")
