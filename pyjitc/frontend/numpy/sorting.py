"""sorting: sorting and searching (sort, argsort, searchsorted), picking elements by index (take,
take_along_axis), and the functions whose result's shape depends on the data (nonzero, unique, ...),
registered only to give a located error."""
from __future__ import annotations

import numpy as np

from ...errors import NotSupportedError, ShapeError
from ...ir.types import is_float
from ..indexing import getitem
from ..registry import FUNCTIONS, register
from ..values import fold, is_static
from .elementwise import cmp, isnan, sel
from .shapes import normalize_axis, reshape

@register("numpy.sort", method="sort", note="NaN sorts last, as in NumPy; IREE's sort takes time growing as n^2 "
                                            "along the axis (16,000 elements: 1.1 s)")
def sort(em, a, axis=-1, kind=None, order=None, stable=None):
    if order is not None:
        raise NotSupportedError("sort: order= is not supported")
    axis = em.static(axis, "sort: axis")
    if is_static(a):
        return fold(np.sort, a, axis=axis)
    x = em.asarray(a)
    if axis is None:
        x, axis = reshape(em, x, -1), 0
    ax = normalize_axis(axis, x.ndim, "sort")
    return em.emit("sort", x, axis=ax, with_index=False)


@register("numpy.argsort", method="argsort",
          note="stable: equal keys keep their order (NumPy's default quicksort leaves their order unspecified; "
               "kind='stable' matches exactly)")
def argsort(em, a, axis=-1, kind=None, order=None, stable=None):
    if order is not None:
        raise NotSupportedError("argsort: order= is not supported")
    axis = em.static(axis, "argsort: axis")
    x = em.asarray(a)
    if axis is None:
        x, axis = reshape(em, x, -1), 0
    ax = normalize_axis(axis, x.ndim, "argsort")
    values, idx = em.emit_multi("sort", x, axis=ax, with_index=True)
    return idx


@register("numpy.take", complex_ok=True)
def take(em, a, indices, axis=None, out=None, mode=None):
    if mode not in (None, "raise"):
        raise NotSupportedError("take: only mode='raise' is supported")
    x = em.asarray(a)
    if axis is None:
        return getitem(em, reshape(em, x, -1), indices if not isinstance(indices, list) else np.asarray(indices))
    ax = normalize_axis(em.static(axis, "take: axis"), x.ndim, "take")
    idx = np.asarray(indices) if isinstance(indices, list) else indices
    return getitem(em, x, (slice(None),) * ax + (idx,))


@register("numpy.nonzero", "numpy.argwhere", "numpy.unique", "numpy.flatnonzero",
          note="located error: the result's shape depends on the data")
def _dynamic_shape(em, *args, **kwargs):
    raise NotSupportedError("this function's result has a shape that depends on the data",
                            hint="use a mask with np.where(mask, x, 0) or a fixed-size computation")


@register("numpy.take_along_axis", complex_ok=True)
def take_along_axis(em, arr, indices, axis):
    x = em.asarray(arr)
    axis = em.static(axis, "take_along_axis: axis")
    if axis is None:
        x, axis = reshape(em, x, -1), 0
    ax = normalize_axis(axis, x.ndim, "take_along_axis")
    idx = indices if not isinstance(indices, list) else np.asarray(indices)
    ishape = idx.shape if hasattr(idx, "shape") else np.shape(idx)
    if len(ishape) != x.ndim:
        raise ShapeError("`indices` and `arr` must have the same number of dimensions")
    index = []
    for d in range(x.ndim):
        if d == ax:
            index.append(idx)
        else:
            shape = [1] * x.ndim
            shape[d] = x.shape[d]
            index.append(np.arange(x.shape[d]).reshape(shape))
    return getitem(em, x, tuple(index))


@register("numpy.searchsorted", note="a binary search (len(a).bit_length() steps of one gather each); no sorter=")
def searchsorted(em, a, v, side="left", sorter=None):
    if sorter is not None:
        raise NotSupportedError("searchsorted: sorter= is not supported")
    side = em.static(side, "searchsorted: side")
    if side not in ("left", "right"):
        raise ShapeError(f"searchsorted: side must be 'left' or 'right' (got {side!r})")
    a, v = em.asarray(a), em.asarray(v)
    if a.ndim != 1:
        raise ShapeError("object too deep for desired array")
    dt = np.result_type(a.dtype, v.dtype)
    return count_before(em, em.cast(a, dt), em.cast(v, dt), side)


def _before(em, x, v, side):
    """x sorts before v in NumPy's order (NaN last): x < v for side 'left', x <= v for 'right'."""
    before = cmp(em, x, v, "LT" if side == "left" else "LE")
    if is_float(x.dtype):
        nan_v, num_x = isnan(em, v), em.emit("not", isnan(em, x))
        before = em.emit("or", before, em.emit("and", nan_v, num_x) if side == "left" else nan_v)
    return before


def count_before(em, a, v, side):
    """For each v, how many elements of the sorted 1-D array a sort before it (side 'left': a < v,
    'right': a <= v), as int64: a binary search, each step one gather of a at the midpoints."""
    n = a.shape[0]
    lo, hi = em.full(0, np.int64, v.shape), em.full(n, np.int64, v.shape)
    one, last = em.full(1, np.int64, v.shape), em.full(max(n - 1, 0), np.int64, v.shape)
    for _ in range(n.bit_length()):     # the interval [lo, hi) at least halves each step
        mid = em.emit("shift_right_logical", em.emit("add", lo, hi), one)
        active = cmp(em, lo, hi, "LT")
        before = _before(em, em.emit("take", a, em.emit("min", mid, last)), v, side)
        lo = sel(em, em.emit("and", active, before), em.emit("add", mid, one), lo)
        hi = sel(em, em.emit("and", active, em.emit("not", before)), mid, hi)
    return lo
