"""editing: functions that insert, delete, pick or replace elements at positions: insert, delete,
compress, choose (new arrays) and put, putmask, place (in place). Positions that decide the
result's shape must be known at compile time; NumPy's own function is then run on an array of
element numbers to find where each result element comes from, so the layout is NumPy's by
construction."""
from __future__ import annotations

import numpy as np

from ...errors import NotSupportedError, ShapeError
from .. import masked
from ..operators import apply_operator
from ..registry import FUNCTIONS, register
from ..values import Traced, fold, is_static
from .elementwise import cmp, sel
from .shapes import normalize_axis, reshape


def _static_positions(em, obj, name):
    return em.static(obj, f"{name}: the positions (they decide the result's shape)")


def _gather(em, source: Traced, picks: np.ndarray) -> Traced:
    """source (1-D) at the compile-time element numbers `picks`, shaped as `picks`."""
    if picks.size == 0:
        return em.full(0, source.dtype, picks.shape)
    return FUNCTIONS["numpy.take"](em, source, picks)


def _numbered(em, arr, axis):
    """The array (raveled where axis is None) and an int64 array of its element numbers."""
    a = em.asarray(arr)
    if axis is None:
        a = reshape(em, a, (-1,))
    return a, np.arange(int(np.prod(a.shape)), dtype=np.int64).reshape(a.shape)


@register("numpy.delete", note="compile-time positions (an int, slice, list or boolean mask)")
def delete(em, arr, obj, axis=None):
    axis = em.static(axis, "delete: axis")
    obj = _static_positions(em, obj, "delete")
    if is_static(arr):
        return fold(np.delete, arr, obj, axis=axis)
    a, numbers = _numbered(em, arr, axis)
    try:
        picks = np.delete(numbers, obj, axis=axis if axis is None else normalize_axis(axis, a.ndim, "delete"))
    except (IndexError, ValueError, TypeError) as e:
        raise ShapeError(f"{type(e).__name__}: {e}") from None
    return _gather(em, reshape(em, a, (-1,)), picks)


@register("numpy.append", complex_ok=True, note="concatenate: raveled where axis is None; a selection or run-time "
                                                 "slice among the parts makes the result a selection")
def append(em, arr, values, axis=None):
    axis = em.static(axis, "append: axis")
    if is_static(arr, values):
        return fold(np.append, arr, values, axis=axis)
    if axis is None:
        return FUNCTIONS["numpy.concatenate"](em, [reshape(em, em.asarray(arr), (-1,)), reshape(em, em.asarray(values), (-1,))])
    return FUNCTIONS["numpy.concatenate"](em, [arr, values], axis=axis)


def _append_selections(em, arr, values, axis=None):
    """np.append(np.where(y), n - 1) (run-length encoding) where np.where(y) is a selection."""
    if axis is not None:
        return NotImplemented
    parts = []
    for x in (arr, values):
        if isinstance(x, (tuple, list)) and len(x) == 1 and isinstance(x[0], masked.Masked):
            x = x[0]    # (a 1-tuple of a 1-D array ravels to it)
        if masked.contains(x) and not (isinstance(x, masked.Masked) and x.data.ndim == 1):
            return NotImplemented
        parts.append(x if isinstance(x, masked.Masked) else reshape(em, em.asarray(x), (-1,)))
    return FUNCTIONS["numpy.concatenate"].on_masked(em, parts)


append.on_masked = _append_selections


@register("numpy.insert", note="compile-time positions; the values may be run-time arrays (cast to the array's "
                               "dtype, as NumPy casts them)")
def insert(em, arr, obj, values, axis=None):
    axis = em.static(axis, "insert: axis")
    obj = _static_positions(em, obj, "insert")
    if is_static(arr, values):
        return fold(np.insert, arr, obj, values, axis=axis)
    a, numbers = _numbered(em, arr, axis)
    v = em.asarray(values)
    v = em.cast(v, a.dtype)
    tags = -1 - np.arange(int(np.prod(v.shape)), dtype=np.int64).reshape(v.shape)   # values: -1, -2, ...
    try:
        layout = np.insert(numbers, obj, tags, axis=axis if axis is None else normalize_axis(axis, a.ndim, "insert"))
    except (IndexError, ValueError, TypeError) as e:
        raise ShapeError(f"{type(e).__name__}: {e}") from None
    source = FUNCTIONS["numpy.concatenate"](em, [reshape(em, a, (-1,)), reshape(em, v, (-1,))])
    picks = np.where(layout >= 0, layout, numbers.size - 1 - layout)
    return _gather(em, source, picks)


@register("numpy.compress", note="a compile-time condition, or a run-time one along the first axis or over the "
                                 "raveled array (then a selection, as x[condition])")
def compress(em, condition, a, axis=None, out=None):
    if out is not None:
        raise NotSupportedError("compress: out= is not supported; assign the result instead")
    axis = em.static(axis, "compress: axis")
    if isinstance(condition, Traced) and condition.ndim == 1:
        x = em.asarray(a)
        x = reshape(em, x, (-1,)) if axis is None else x
        if (axis in (None, 0, -x.ndim)) and condition.shape[0] == x.shape[0]:   # x[condition]: a selection
            from ..indexing import getitem
            return getitem(em, x, em.cast(condition, np.bool_))
    cond = np.asarray(_static_positions(em, condition, "compress"))
    if is_static(a):
        return fold(np.compress, cond, a, axis=axis)
    if cond.ndim != 1:
        raise ShapeError("ValueError: condition must be a 1-d array")
    x = em.asarray(a)
    if axis is None:
        x, axis = reshape(em, x, (-1,)), 0
    ax = normalize_axis(axis, x.ndim, "compress")
    picks = np.nonzero(cond)[0]
    if picks.size and picks[-1] >= x.shape[ax]:
        raise ShapeError(f"IndexError: index {picks[-1]} is out of bounds for axis {ax} with size {x.shape[ax]}")
    return FUNCTIONS["numpy.take"](em, x, picks, axis=ax)


@register("numpy.extract", note="the raveled array where the raveled condition holds: a selection (as x[condition]) "
                                "for a run-time condition of the array's size")
def extract(em, condition, arr):
    if is_static(condition) and is_static(arr):
        return fold(np.extract, condition, arr)
    # NumPy: "equivalent to np.compress(np.ravel(condition), np.ravel(arr))"
    return compress(em, reshape(em, em.asarray(condition), (-1,)), arr)


@register(method="compress", note="a compile-time condition, or a run-time one along the first axis (then a "
                                   "selection, as x[condition])")
def compress_method(em, a, condition, axis=None, out=None):
    return compress(em, condition, a, axis=axis, out=out)


def _result_dtype_of(np_fn, *examples):
    """The dtype NumPy's own function gives on stand-ins of the arguments' types."""
    return np.asarray(np_fn(*examples)).dtype


@register("numpy.choose", method="choose", note="mode='raise' (an index out of range is a run-time ValueError), "
                                                "'wrap' and 'clip'")
def choose(em, a, choices, out=None, mode="raise"):
    if out is not None:
        raise NotSupportedError("choose: out= is not supported; assign the result instead")
    mode = em.static(mode, "choose: mode")
    if mode not in ("raise", "wrap", "clip"):
        raise ShapeError(f"ValueError: clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    if isinstance(choices, Traced):   # an array: its first axis lists the choices
        choices = [FUNCTIONS["numpy.take"](em, choices, i, axis=0) for i in range(choices.shape[0])]
    choices = list(choices)
    if is_static(a, *choices):
        return fold(np.choose, a, choices, mode=mode)
    idx = em.asarray(a)
    if idx.dtype.kind not in "iub":
        raise ShapeError(f"TypeError: Cannot cast array data from dtype('{idx.dtype}') to dtype('int64') "
                         "according to the rule 'safe'")
    stand_ins = [np.zeros((), em.dtype_of(c)) if not isinstance(em.dtype_of(c), type) else em.dtype_of(c)(0)
                 for c in choices]
    dt = _result_dtype_of(lambda *cs: np.choose(0, list(cs)), *stand_ins)
    shape = np.broadcast_shapes(idx.shape, *[tuple(em.shape_of(c)) for c in choices])
    n = len(choices)
    i = em.broadcast(em.cast(idx, np.int64), shape)
    if mode == "wrap":
        i = apply_operator(em, "Mod", i, n)
    elif mode == "clip":
        i = em.emit("max", em.emit("min", i, em.full(n - 1, np.int64, shape)), em.full(0, np.int64, shape))
    else:
        outside = apply_operator(em, "BitOr", apply_operator(em, "Lt", i, 0), apply_operator(em, "GtE", i, n))
        em.check(FUNCTIONS["numpy.any"](em, outside), "ValueError: invalid entry in choice array")
    out_ = em.operand(choices[0], dt, shape)
    for k in range(1, n):
        out_ = sel(em, cmp(em, i, em.full(k, np.int64, shape), "EQ"), em.operand(choices[k], dt, shape), out_)
    return out_


def _cycled(em, values, dtype, n: int) -> Traced:
    """The values, raveled and repeated (or cut) to n elements, as NumPy's put/putmask/place use them."""
    v = reshape(em, em.cast(em.asarray(values), dtype), (-1,))
    m = v.shape[0]
    if m == n:
        return v
    if m == 0:
        raise ShapeError("ValueError: cannot replace elements with an empty array of values")
    return em.broadcast(v, (n,)) if m == 1 else _gather(em, v, np.arange(n) % m)


@register("numpy.put", method="put", note="in place; mode='raise' (an index out of range is a run-time IndexError)")
def put(em, a, ind, v, mode="raise"):
    from ..assignment import store
    if em.static(mode, "put: mode") != "raise":
        raise NotSupportedError("put: only mode='raise' is supported")
    if not isinstance(a, Traced):
        raise ShapeError("TypeError: argument 1 must be numpy.ndarray")
    size = int(np.prod(a.shape))
    if is_static(ind):
        flat = np.asarray(ind, dtype=np.int64).ravel()
        if flat.size and not (-size <= flat.min() and flat.max() < size):
            bad = flat[(flat < -size) | (flat >= size)][0]
            raise ShapeError(f"IndexError: index {bad} is out of bounds for axis 0 with size {size}")
        flat = flat % max(size, 1)
        if flat.size == 0:
            return None
        index = np.unravel_index(flat, a.shape) if a.ndim else ()
    else:
        flat = reshape(em, em.cast(em.asarray(ind), np.int64), (-1,))
        outside = apply_operator(em, "BitOr", apply_operator(em, "Lt", flat, -size),
                                 apply_operator(em, "GtE", flat, size))
        em.check(FUNCTIONS["numpy.any"](em, outside), f"IndexError: index out of bounds for axis 0 with size {size}")
        flat = apply_operator(em, "Mod", flat, size)
        index = FUNCTIONS["numpy.unravel_index"](em, flat, a.shape)
    n = int(np.prod(np.shape(index[0]))) if a.ndim else 1
    store(em, a, tuple(index), _cycled(em, v, a.dtype, n), "np.put")
    return None


def _mask_of_array(em, a, mask, name) -> Traced:
    """`mask` as booleans in `a`'s shape; NumPy's errors where `a` is not an array or sizes differ."""
    if not isinstance(a, Traced):
        raise ShapeError(f"TypeError: {name}: the first argument must be a numpy array")
    m = em.asarray(mask)
    if int(np.prod(m.shape)) != int(np.prod(a.shape)):
        raise ShapeError(f"ValueError: {name}: mask and data must be the same size")
    return reshape(em, em.cast(m, np.bool_), a.shape)


@register("numpy.putmask", note="in place; the values repeat over the whole array (a.flat[i] = values[i % len])")
def putmask(em, a, mask, values):
    from ..assignment import store
    m = _mask_of_array(em, a, mask, "putmask")
    v = reshape(em, _cycled(em, values, a.dtype, int(np.prod(a.shape))), a.shape)
    store(em, a, Ellipsis, sel(em, m, v, a), "np.putmask")
    return None


@register("numpy.place", note="in place; the k-th True position takes values[k % len(values)]")
def place(em, arr, mask, vals):
    from ..assignment import store
    flags = reshape(em, _mask_of_array(em, arr, mask, "place"), (-1,))
    v = reshape(em, em.cast(em.asarray(vals), arr.dtype), (-1,))
    k = v.shape[0]
    if k == 0:
        em.check(FUNCTIONS["numpy.any"](em, flags), "ValueError: Cannot insert from an empty array!")
        return None
    rank = apply_operator(em, "Sub", FUNCTIONS["numpy.cumsum"](em, flags, dtype=np.int64), 1)
    picked = FUNCTIONS["numpy.take"](em, v, apply_operator(em, "Mod", em.emit("max", rank, em.full(0, np.int64, rank.shape)), k))
    new = sel(em, flags, picked, reshape(em, arr, (-1,)))
    store(em, arr, Ellipsis, reshape(em, new, arr.shape), "np.place")
    return None
