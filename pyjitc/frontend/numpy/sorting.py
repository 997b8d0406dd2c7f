"""sorting: sorting and searching (sort, argsort, searchsorted), picking elements by index (take,
take_along_axis), and the functions whose result's shape depends on the data (nonzero, unique, ...),
registered only to give a located error."""
from __future__ import annotations

import numpy as np

from ...errors import NotSupportedError, ShapeError
from ...ir import dims
from ...ir.dims import NeedsStaticShape
from ...ir.types import is_float, is_int
from .. import masked
from ..indexing import getitem, mask_key
from ..operators import apply_operator
from ..registry import FUNCTIONS, register
from ..values import Traced, fold, is_static
from .elementwise import cmp, isnan, sel
from .shapes import normalize_axis, reshape, take_slice

@register("numpy.sort", note="NaN sorts last, as in NumPy; on CPU a merge sort in one native loop, on GPU "
                               "targets IREE's sort or (axes of 4096+ elements) a bitonic network")
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
    return sort_along(em, x, ax, with_index=False)[0]


@register(method="sort", note="sorts the array in place (every name and view bound to it sees it) and returns None")
def sort_in_place(em, a, axis=-1, kind=None, order=None, stable=None):
    from ..assignment import store
    if axis is None:
        raise ShapeError("TypeError: ndarray.sort(): axis=None is not supported; use np.sort(a, axis=None)")
    store(em, a, Ellipsis, sort(em, a, axis=axis, kind=kind, order=order, stable=stable), "a.sort()")
    return None


@register(method="fill", complex_ok=True, note="in place; the value cast to the array's dtype as NumPy casts it")
def fill(em, a, value):
    from ..assignment import store
    v = em.asarray(value) if not isinstance(value, Traced) else value
    store(em, a, Ellipsis, FUNCTIONS["numpy.broadcast_to"](em, em.cast(v, a.dtype), a.shape), "a.fill()")
    return None


@register("numpy.fill_diagonal", complex_ok=True, note="in place; wrap= and arrays of more than 2 axes are refused")
def fill_diagonal(em, a, val, wrap=False):
    from ..assignment import store
    if not isinstance(a, Traced) or a.ndim != 2:
        raise NotSupportedError("np.fill_diagonal: a 2-D array is supported")
    if wrap and a.shape[0] > a.shape[1] + 1:
        raise NotSupportedError("np.fill_diagonal: wrap=True on a tall matrix is not supported")
    k = min(a.shape)
    idx = np.arange(k)
    vals = FUNCTIONS["numpy.resize"](em, val, (k,)) if "numpy.resize" in FUNCTIONS else \
        FUNCTIONS["numpy.broadcast_to"](em, val, (k,))
    store(em, a, (idx, idx), vals, "np.fill_diagonal")


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
    return sort_along(em, x, ax, with_index=True)[1]


# IREE 3.13's sort takes time growing as n^2 along the axis on CPU (float64, one call: 1,000
# elements 4.6 ms, 2,048 18 ms, 4,096 81 ms, 16,384 1.1 s; NumPy 0.2 ms). Longer axes are sorted by
# a bitonic network instead (log2(n)^2 / 2 steps, each a reverse, a comparison and a select over
# the whole array): 4,096 elements 0.6 ms, 16,384 3.8 ms, 1e5 82 ms, 1e6 0.64 s, but about 5 s more
# to compile (7-14 s from 16,384 to 1e6 elements), so only from 4,096 elements on.
def sort_along(em, x, ax, with_index):
    """x sorted along axis ax in NumPy's order (NaN last), and with_index: (values, the stable
    argsort). One IR op; how it runs is the lowering's choice for the target (lowering/sorts.py:
    a native merge sort on CPU, IREE's sort or a bitonic network elsewhere). Along an axis of a
    run-time length, a compile per size: the merge sort and the network need the length, and
    IREE's own sort grows as n^2 (a function called with two sizes switched to it, and its
    1e6-element call ran for minutes)."""
    if dims.is_symbolic((x.shape[ax],)):
        raise NeedsStaticShape("sorting along an axis of a run-time length (its sort needs the length)")
    if with_index:
        return em.emit_multi("sort", x, axis=ax, with_index=True)
    return em.emit("sort", x, axis=ax, with_index=False), None


@register("numpy.take", method="take", complex_ok=True)
def take(em, a, indices, axis=None, out=None, mode=None):
    mode = em.static(mode, "take: mode")
    if mode not in (None, "raise", "wrap", "clip"):
        raise ShapeError(f"ValueError: clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if out is not None:
        raise NotSupportedError("take: out= is not supported", hint="assign the result instead")
    x = em.asarray(a)
    if axis is None:
        x, ax = reshape(em, x, -1), 0
    else:
        ax = normalize_axis(em.static(axis, "take: axis"), x.ndim, "take")
    idx = np.asarray(indices) if isinstance(indices, (list, tuple)) else indices
    if mode in ("wrap", "clip"):   # every index lands in range: wrapped (Python's modulo) or clipped
        n = x.shape[ax]
        if n == 0:
            raise ShapeError("IndexError: cannot do a non-empty take from an empty axes.")
        idx = FUNCTIONS["numpy.mod"](em, idx, n) if mode == "wrap" else FUNCTIONS["numpy.clip"](em, idx, 0, n - 1)
    return getitem(em, x, (slice(None),) * ax + (idx,))


def _dynamic_shape(em, *args, **kwargs):
    raise NotSupportedError("this function's result has a shape that depends on the data",
                            hint="use a mask with np.where(mask, x, 0) or a fixed-size computation")


def _coordinates(em, flags: Traced, shape: tuple) -> list:
    """For each axis of `shape`, the coordinates of the elements where the (flattened) flags
    hold: np.nonzero of an N-D array, a selection of each axis's index like x[mask]."""
    n = flags.shape[0]
    flat = em.emit("iota", shape=(n,), dim=0, dtype=np.dtype(np.int64))
    key = ("flags", mask_key(em, flags), shape)
    out = []
    for i, d in enumerate(shape):
        stride = int(np.prod(shape[i + 1:], dtype=np.int64))
        c = em.emit("div", flat, em.full(stride, np.int64, (n,))) if stride != 1 else flat
        c = em.emit("rem", c, em.full(d, np.int64, (n,))) if i else c
        out.append(masked.Masked(Traced(c.value, None, frozenset()), 0, ("flags", flags), key, None))
    return out


@register("numpy.nonzero", method="nonzero",
          note="of a run-time array: a 1-D one's positions are usable as an index (x[idx], y[idx] = v); "
               "positions work in elementwise operations, reductions, len() and as results, like x[mask]")
def nonzero(em, a):
    if is_static(a):
        return fold(np.nonzero, a)
    a = em.asarray(a)
    if a.ndim == 0:
        raise ShapeError("ValueError: Calling nonzero on 0d arrays is not allowed. Use np.atleast_1d(scalar).nonzero() instead.")
    flags = em.cast(a, np.bool_)
    if a.ndim == 1:
        return (masked.positions(em, flags, ("flags", mask_key(em, flags), a.shape)),)
    return tuple(_coordinates(em, reshape(em, flags, -1), a.shape))


@register("numpy.argwhere", note="as np.nonzero, stacked: (number of nonzero elements, a.ndim)")
def argwhere(em, a):
    if is_static(a):
        return fold(np.argwhere, a)
    a = em.asarray(a)
    if a.ndim == 0:
        _dynamic_shape(em, a)
    flags = reshape(em, em.cast(a, np.bool_), -1)
    coords = _coordinates(em, flags, a.shape)
    n = flags.shape[0]
    stacked = em.emit("concatenate", *[em.emit("reshape", c.data, shape=(n, 1)) for c in coords], axis=1)
    return masked.Masked(Traced(stacked.value, None, frozenset()), 0, coords[0].where, coords[0].key, None)


@register("numpy.unique", note="of a run-time array: sorted, NaNs as one (equal_nan=True); axis=0 (or the "
                                "first axis given as negative): unique rows (sub-arrays), ordered as NumPy's (each "
                                "column in turn, NaN last; rows holding NaN all distinct); the values, and "
                                "return_index / return_counts, are selections (usable in elementwise operations, "
                                "reductions, len(), .size and as results); return_inverse has the array's shape "
                                "(axis=None) or one entry per row; other axes are refused")
def unique(em, ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True):
    if is_static(ar):
        return fold(np.unique, ar, return_index=return_index, return_inverse=return_inverse,
                    return_counts=return_counts, axis=axis, equal_nan=equal_nan)
    a = em.asarray(ar)
    extras = return_index or return_inverse or return_counts
    if axis is None:
        flat = reshape(em, a, -1)
        x, order = sort_along(em, flat, 0, with_index=True) if extras else (sort(em, flat, axis=0), None)
        inverse_shape = a.shape
    else:
        x, order = _sorted_rows(em, a, em.static(axis, "unique: axis"))
        inverse_shape = (x.shape[0],)
    n = x.shape[0]
    if n == 0:
        empty = em.asarray(np.zeros((0,), np.int64))
        outs = [x] + [empty] * bool(return_index) + [reshape(em, empty, inverse_shape)] * bool(return_inverse) \
            + [empty] * bool(return_counts)
        return tuple(outs) if extras else x
    flags = run_starts(em, x, equal_nan and axis is None)
    key = ("flags", mask_key(em, flags), (n,))

    def selected(values):
        return masked.Masked(Traced(values.value, None, x.params), 0, ("flags", flags), key, None)
    outs = [selected(x)]
    if return_index:   # the stable order's first of each run: the first occurrence
        outs.append(selected(order))
    if return_inverse:   # each element's run number, sent back to where the sort took it from
        run = em.emit("sub", FUNCTIONS["numpy.cumsum"](em, em.cast(flags, np.int64)), em.full(1, np.int64, (n,)))
        inverse = em.emit("scatter_add", em.full(0, np.int64, (n,)), order, run)
        outs.append(reshape(em, inverse, inverse_shape))
    if return_counts:   # the next run's start minus this one's
        iota = em.emit("iota", shape=(n,), dim=0, dtype=np.dtype(np.int64))
        starts = em.emit("select", flags, iota, em.full(n, np.int64, (n,)))
        later = FUNCTIONS["numpy.minimum.accumulate"](em, em.emit("reverse", starts, dims=(0,)))
        later = em.emit("reverse", later, dims=(0,))      # later[i]: the first start at or after i
        following = em.emit("concatenate", em.emit("slice", later, start=(1,), limit=(n,), strides=(1,)),
                            em.full(n, np.int64, (1,)), axis=0)
        outs.append(selected(em.emit("sub", following, iota)))
    return tuple(outs) if extras else outs[0]


def _sorted_rows(em, a: Traced, axis):
    """np.unique(a, axis=0)'s order: the sub-arrays along axis 0 sorted by their first entry, then
    the next, ... (NumPy compares them as records of their entries; NaN last), stably; and that
    order (the sort's indices)."""
    if a.ndim == 0 or normalize_axis(axis, a.ndim, "unique") != 0:
        raise NotSupportedError("np.unique: axis=0 (unique rows) is supported; other axes are not",
                                hint="move the axis first: np.unique(np.moveaxis(a, k, 0), axis=0)")
    n = a.shape[0]
    rows = reshape(em, a, (n, -1))
    if rows.shape[1] == 0 or n == 0:
        raise NotSupportedError("np.unique(axis=0) of an array with no rows or empty rows")
    columns = [FUNCTIONS["numpy.take"](em, rows, j, axis=1) for j in reversed(range(rows.shape[1]))]
    order = lexsort(em, columns)
    return FUNCTIONS["numpy.take"](em, a, order, axis=0), order


def run_starts(em, x: Traced, equal_nan: bool) -> Traced:
    """Over x sorted along its first axis (n >= 1): whether each element starts a run of equal
    values (NaNs one run where equal_nan, as np.unique); of an N-D x, whether each row differs
    from the one before in some entry (np.unique(axis=0), where NaN differs from everything)."""
    n = x.shape[0]
    first = em.full(True, np.bool_, (1,))
    if n == 1:
        return first
    rows = x if x.ndim == 1 else reshape(em, x, (n, -1))
    rest = rows.shape[1:]
    later = em.emit("slice", rows, start=(1,) + (0,) * len(rest), limit=rows.shape, strides=(1,) * rows.ndim)
    earlier = em.emit("slice", rows, start=(0,) * rows.ndim, limit=(n - 1,) + rest, strides=(1,) * rows.ndim)
    new = cmp(em, later, earlier, "NE")
    if is_float(x.dtype) and equal_nan:
        new = em.emit("and", new, em.emit("not", em.emit("and", isnan(em, later), isnan(em, earlier))))
    if rest:
        new = em.emit("reduce", new, kind="or", axes=(1,))
    return em.emit("concatenate", first, new, axis=0)


@register("numpy.flatnonzero", note="as np.nonzero")
def flatnonzero(em, a):
    if is_static(a):
        return fold(np.flatnonzero, a)
    a = em.asarray(a)
    return nonzero(em, a if a.ndim == 1 else FUNCTIONS["numpy.reshape"](em, a, -1))[0]


def _along_axis(em, x, indices, axis, name):
    """x (raveled for axis=None) and the index that pairs `indices` along `axis` with every
    position of the other axes (np.take_along_axis / put_along_axis)."""
    axis = em.static(axis, f"{name}: axis")
    if axis is None:
        x, axis = reshape(em, x, -1), 0
    ax = normalize_axis(axis, x.ndim, name)
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
    return x, tuple(index)


@register("numpy.take_along_axis", complex_ok=True)
def take_along_axis(em, arr, indices, axis):
    return getitem(em, *_along_axis(em, em.asarray(arr), indices, axis, "take_along_axis"))


@register("numpy.put_along_axis", complex_ok=True,
          note="in place, as arr[index] = values with the index take_along_axis reads (a repeated position "
               "keeps the last value); axis=None writes the raveled array")
def put_along_axis(em, arr, indices, values, axis):
    from ..assignment import store
    if not isinstance(arr, Traced):
        raise ShapeError("TypeError: put_along_axis: arr must be a numpy array")
    flat, index = _along_axis(em, arr, indices, axis, "put_along_axis")
    if flat is not arr:      # axis=None: the positions in the raveled array, as indices into arr
        i, n = em.cast(em.asarray(index[0]), np.int64), flat.shape[0]
        _check_below(em, apply_operator(em, "Add", i, n), 2 * n,
                     f"IndexError: index out of bounds for axis 0 with size {n}")
        index = FUNCTIONS["numpy.unravel_index"](em, apply_operator(em, "Mod", i, max(n, 1)), arr.shape)
    store(em, arr, tuple(index), values, "np.put_along_axis")
    return None


def _check_below(em, i, n: int, message: str) -> None:
    """A run-time error (NumPy's `message`) where any of the int64 indices `i` is outside [0, n)."""
    outside = apply_operator(em, "BitOr", apply_operator(em, "Lt", i, 0), apply_operator(em, "GtE", i, n))
    em.check(outside if not outside.ndim else em.emit("reduce", outside, kind="or", axes=tuple(range(outside.ndim))),
             message)


@register("numpy.unravel_index", note="the shape known at compile time; an index out of range is a run-time "
                                     "ValueError, as in NumPy")
def unravel_index(em, indices, shape, order="C"):
    shape = em.static(shape, "unravel_index: the shape")
    shape = (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(n) for n in shape)
    order = em.static(order, "unravel_index: order")
    if order not in ("C", "F"):
        raise ShapeError("ValueError: only 'C' or 'F' order is permitted")
    x = em.asarray(indices)
    if not is_int(x.dtype):
        raise ShapeError("TypeError: only int indices permitted")
    x = em.cast(x, np.int64)
    size = int(np.prod(shape))
    _check_below(em, x, size, f"ValueError: index out of bounds for array with size {size}")
    out, rest = [None] * len(shape), x
    for d in (reversed(range(len(shape))) if order == "C" else range(len(shape))):
        out[d] = apply_operator(em, "Mod", rest, shape[d])
        rest = apply_operator(em, "FloorDiv", rest, shape[d])
    return tuple(out)


@register("numpy.ravel_multi_index", note="the shape known at compile time; mode='raise' only (an index out of "
                                          "range is a run-time ValueError, as in NumPy)")
def ravel_multi_index(em, multi_index, dims, mode="raise", order="C"):
    dims = em.static(dims, "ravel_multi_index: dims")
    dims = (int(dims),) if isinstance(dims, (int, np.integer)) else tuple(int(n) for n in dims)
    if em.static(mode, "ravel_multi_index: mode") != "raise":
        raise NotSupportedError("ravel_multi_index: only mode='raise' is supported")
    order = em.static(order, "ravel_multi_index: order")
    if order not in ("C", "F"):
        raise ShapeError("ValueError: only 'C' or 'F' order is permitted")
    if len(multi_index) != len(dims):
        raise ShapeError(f"ValueError: parameter multi_index must be a sequence of length {len(dims)}")
    strides = [int(np.prod(dims[d + 1:])) if order == "C" else int(np.prod(dims[:d])) for d in range(len(dims))]
    out = None
    for idx, n, stride in zip(multi_index, dims, strides):
        i = em.asarray(idx)
        if not is_int(i.dtype):
            raise ShapeError("TypeError: only int indices permitted")
        i = em.cast(i, np.int64)
        _check_below(em, i, n, "ValueError: invalid entry in coordinates array")
        term = apply_operator(em, "Mult", i, stride)
        out = term if out is None else apply_operator(em, "Add", out, term)
    return out


@register("numpy.searchsorted", note="a binary search (len(a).bit_length() steps of one gather each); "
                                     "sorter= reads a in that order")
def searchsorted(em, a, v, side="left", sorter=None):
    if sorter is not None:
        a = FUNCTIONS["numpy.take"](em, a, sorter)
    side = _side(em, side)
    a, v = em.asarray(a), em.asarray(v)
    if a.ndim != 1:
        raise ShapeError("object too deep for desired array")
    dt = np.result_type(a.dtype, v.dtype)
    return count_before(em, em.cast(a, dt), em.cast(v, dt), side)


def _side(em, side) -> str:
    side = em.static(side, "searchsorted: side")
    if side not in ("left", "right"):
        raise ShapeError(f"searchsorted: side must be 'left' or 'right' (got {side!r})")
    return side


def _searchsorted_in_window(em, a, v, side="left", sorter=None):
    """np.searchsorted(a[lo:hi], v) with run-time bounds (an insertion sort placing x[i] among
    out[:i]: the loop was unrolled, 74 s to compile at n = 200): the binary search runs on a's
    whole axis starting from [lo, hi), and its answer counts from lo."""
    if not (isinstance(a, masked.Masked) and a.where[0] == "bounds" and a.data.ndim == 1) \
            or masked.contains(v) or sorter is not None:
        return NotImplemented
    side = _side(em, side)
    v = em.asarray(v)
    dt = np.result_type(a.data.dtype, v.dtype)
    lo, hi = a.where[1], a.where[2]
    found = count_before(em, em.cast(a.data, dt), em.cast(v, dt), side, (lo, em.emit("max", lo, hi)))
    return em.emit("sub", found, em.broadcast(lo, found.shape))


searchsorted.on_masked = _searchsorted_in_window


def _before(em, x, v, side):
    """x sorts before v in NumPy's order (NaN last): x < v for side 'left', x <= v for 'right'."""
    before = cmp(em, x, v, "LT" if side == "left" else "LE")
    if is_float(x.dtype):
        nan_v, num_x = isnan(em, v), em.emit("not", isnan(em, x))
        before = em.emit("or", before, em.emit("and", nan_v, num_x) if side == "left" else nan_v)
    return before


def count_before(em, a, v, side, window=None):
    """For each v, how many elements of the sorted 1-D array a sort before it (side 'left': a < v,
    'right': a <= v), as int64: a binary search, each step one gather of a at the midpoints.
    window: run-time int64 bounds (lo, hi), lo <= hi, to search a[lo:hi] only (the answer then
    counts from 0, not lo)."""
    n = a.shape[0]
    if not isinstance(n, int):   # (dynamic=True: its steps are counted from the length)
        raise NeedsStaticShape("a binary search (np.searchsorted, a selection made compact) over a run-time length")
    alone = v.ndim == 0   # (see the end)
    if alone:
        v = em.emit("barrier", v)
    if window is None:
        lo, hi = em.full(0, np.int64, v.shape), em.full(n, np.int64, v.shape)
    else:
        lo, hi = em.broadcast(window[0], v.shape), em.broadcast(window[1], v.shape)
    one, last = em.full(1, np.int64, v.shape), em.full(max(n - 1, 0), np.int64, v.shape)
    # the bounds start behind barriers: past 1 MiB (131072 int64s) IREE 3.13 no longer hoists such
    # splats as constants, and fusing them into the chain of steps hung its compiler (x[x > 0.5]
    # of 131073 elements: no end after 400 s; a selection is compacted by this search)
    lo, hi = em.emit("barrier", lo), em.emit("barrier", hi)
    for _ in range(n.bit_length()):     # the interval [lo, hi) at least halves each step
        mid = em.emit("shift_right_logical", em.emit("add", lo, hi), one)
        active = cmp(em, lo, hi, "LT")
        before = _before(em, em.emit("take", a, em.emit("min", mid, last)), v, side)
        lo = sel(em, em.emit("and", active, before), em.emit("add", mid, one), lo)
        hi = sel(em, em.emit("and", active, em.emit("not", before)), mid, hi)
    # one value's search between barriers: IREE 3.13 fused its steps' element reads into a sum's
    # dispatch, the sum's consumer or its producer (`t += x.sum() + np.searchsorted(np.cumsum(x),
    # t)` in a loop, Gillespie's method), and crashed vectorizing it (iree-compile error code -11;
    # a probe of stochastic simulations)
    return em.emit("barrier", lo) if alone else lo


@register("numpy.digitize", note="bins known at compile time, or a run-time array checked at run time "
                                 "(not monotonic: NumPy's ValueError; NaN in run-time bins: an error)")
def digitize(em, x, bins, right=False):
    """NumPy's own definition: searchsorted on the bins (reversed where they decrease)."""
    right = em.static(right, "digitize: right")
    side = "left" if right else "right"
    x = em.asarray(x)
    if is_static(bins):
        bins = np.asarray(bins)
        if bins.ndim != 1:
            raise ShapeError("ValueError: object too deep for desired array" if bins.ndim > 1 else
                             "ValueError: object of too small depth for desired array")
        mono = _monotonic(bins)
        if mono == 0:
            raise ShapeError("ValueError: bins must be monotonically increasing or decreasing")
        b = em.asarray(bins[::-1] if mono == -1 else bins)
        found = searchsorted(em, b, x, side=side)
        return apply_operator(em, "Sub", len(bins), found) if mono == -1 else found
    b = em.asarray(bins)
    if b.ndim != 1:
        raise ShapeError("ValueError: object too deep for desired array")
    n = b.shape[0]
    if n >= 2:
        lo, hi = take_slice(em, b, 0, 0, n - 1), take_slice(em, b, 0, 1, n)
        rises = FUNCTIONS["numpy.any"](em, cmp(em, hi, lo, "GT"))
        falls = FUNCTIONS["numpy.any"](em, cmp(em, hi, lo, "LT"))
        em.check(em.emit("and", rises, falls), "ValueError: bins must be monotonically increasing or decreasing")
        if is_float(b.dtype):
            em.check(FUNCTIONS["numpy.any"](em, isnan(em, b)),
                     "digitize: NaN in bins known only at run time is not supported by pyjitc "
                     "(NumPy's order for them is its own); pass bins without NaN")
        up = searchsorted(em, b, x, side=side)
        down = apply_operator(em, "Sub", n, searchsorted(em, FUNCTIONS["numpy.flip"](em, b), x, side=side))
        return sel(em, em.broadcast(falls, up.shape), down, up)
    return searchsorted(em, b, x, side=side)


def _monotonic(bins) -> int:
    """NumPy's _monotonicity on compile-time bins: 1 increasing, -1 decreasing, 0 neither."""
    with np.errstate(invalid="ignore"):
        try:
            np.digitize(np.zeros(0, bins.dtype), bins)
        except ValueError:
            return 0
        if len(bins) < 2:
            return 1
        # NumPy decides the direction by the first pair of edges that differ (NaN compares unequal)
        first = bins[0]
        for b in bins[1:]:
            if not b == first:
                return 1 if first < b else -1
        return 1


@register("numpy.isin", note="compares with every test element (sorted and searched where there are more than 32)")
def isin(em, element, test_elements, assume_unique=False, invert=False, *, kind=None):
    invert = em.static(invert, "isin: invert")
    em.static(assume_unique, "isin: assume_unique")
    if em.static(kind, "isin: kind") not in (None, "sort", "table"):
        raise ShapeError(f"ValueError: Invalid kind: '{kind}'. Please use None, 'sort' or 'table'.")
    e, t = em.asarray(element), em.asarray(test_elements)
    dt = em.result_type(e, t)
    shape = e.shape
    flat_e, flat_t = reshape(em, em.cast(e, dt), (-1,)), reshape(em, em.cast(t, dt), (-1,))
    n, m = flat_e.shape[0], flat_t.shape[0]
    if m == 0:
        hit = em.full(False, np.bool_, (n,))
    elif m <= 32:
        grid = cmp(em, em.broadcast(reshape(em, flat_e, (n, 1)), (n, m)), em.broadcast(flat_t, (n, m)), "EQ")
        hit = em.emit("reduce", grid, kind="or", axes=(1,))
    else:
        st = sort(em, flat_t)
        pos = em.emit("min", searchsorted(em, st, flat_e), em.full(m - 1, np.int64, (n,)))
        hit = cmp(em, em.emit("take", st, pos), flat_e, "EQ")
    if invert:
        hit = em.emit("not", hit)
    return reshape(em, hit, shape)


def _isin_of_a_selection(em, element, test_elements, *args, **kwargs):
    """np.isin(a[a > 0], b) (a percolation test; probe AJ): elementwise on the selection's data, a
    selection of the same entries; the test elements may not be one."""
    if not isinstance(element, masked.Masked) or element._data is None or isinstance(test_elements, masked.Masked):
        return NotImplemented
    hit = isin(em, element.data, test_elements, *args, **kwargs)
    return masked.Masked(hit, element.axis, element.where, element.key, element.params, own=True)


isin.on_masked = _isin_of_a_selection


@register("numpy.lexsort", note="1-D keys: stable sorts by each key in turn, the last key deciding first, "
                                "NaN last as in NumPy")
def lexsort(em, keys, axis=-1):
    if em.static(axis, "lexsort: axis") not in (-1, 0):
        raise NotSupportedError("lexsort: only axis=-1 (1-D keys) is supported")
    rows = [FUNCTIONS["numpy.take"](em, keys, i, axis=0) for i in range(keys.shape[0])] \
        if isinstance(keys, Traced) else list(keys)
    if not rows:
        raise ShapeError("TypeError: need sequence of keys with len > 0 in lexsort")
    rows = [em.asarray(k) for k in rows]
    if any(k.ndim != 1 for k in rows) or len({k.shape for k in rows}) != 1:
        raise NotSupportedError("lexsort: keys of one dimension and one length are supported")
    order = None
    for key in rows:     # the least significant first: each later stable sort keeps its ties' order
        picked = key if order is None else FUNCTIONS["numpy.take"](em, key, order)
        step = argsort(em, picked, kind="stable")
        order = step if order is None else FUNCTIONS["numpy.take"](em, order, step)
    return order


@register("numpy.argpartition", "numpy.partition", method=("argpartition", "partition"),
          note="refused with the reason: the order on each side of the k-th element is NumPy's selection "
               "algorithm's (np.argsort / np.sort give the same k smallest, in order)")
def partition(em, a, kth, axis=-1, kind="introselect", order=None):
    raise NotSupportedError("np.partition / np.argpartition: the order of the elements on each side of the k-th "
                            "is whatever NumPy's introselect leaves, which pyjitc can't reproduce",
                            hint="use np.sort(a) or np.argsort(a) (then [..., :k] for the k smallest, in order); "
                                 "where only the set matters (a kNN vote), the results agree")
