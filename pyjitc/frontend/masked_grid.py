"""masked_grid: arrays whose length along two axes is known only at run time: `A[k + 1:, k + 1:]`,
`L[j + 1:, :j]`, `np.outer(A[k + 1:, k], A[k, k + 1:])`, as LU, Cholesky and Householder steps
write them (a loop over such slices was unrolled: 100 steps of a Cholesky took minutes to compile,
and IREE failed on some).

Held as masked.py holds one axis: a Masked whose data is the base's view over both whole axes and
whose `where` is ("grid", parts), one part (axis, lo, hi, key) per axis with run-time bounds. The
rules here work on the data with both masks: elementwise operations (with scalars, arrays of length
1 along both axes, grids of the same bounds, and one-axis slices of the same bounds along one of the
axes), products over a masked axis (zero-filled on both sides), np.outer of two run-time slices,
reductions, and writes into a region with the same bounds (indexing.py). Anything else asks for
the bounds at compile time (the loop is unrolled), as for one axis: deny by default."""
from __future__ import annotations

import numpy as np

from .masked import GRIDS, Masked, _join, filled, fixed_along, need, never_wins, reduced_axes
from .masked_calls import astype_method, elementwise_functions
from .values import Traced

GRID = "grid"


def is_grid(v) -> bool:
    return isinstance(v, Masked) and v.where[0] == GRID


def make(data: Traced, parts, params, own: bool = False) -> Masked:
    """A grid of `data` masked by parts (axis, lo, hi, key), one per axis with run-time bounds."""
    parts = tuple(sorted(parts, key=lambda p: p[0]))
    key = (GRID, tuple((p[0], p[3]) for p in parts))
    return Masked(data, parts[0][0], (GRID, parts), key, params, own=own)


def _parts(em, v) -> dict:
    """axis -> (lo, hi, key) of each axis of v with run-time bounds; {} for an ordinary value."""
    if is_grid(v):
        return {p[0]: p[1:] for p in v.where[1]}
    if isinstance(v, Masked):
        if v.where[0] != "bounds" or v.key is None:
            need(v, "combining it with a slice with run-time bounds along two axes")
        return {v.axis: (v.where[1], v.where[2], v.key)}
    return {}


def _result(out: Traced, parts: list, params):
    """out with the masked axes `parts` (axis, lo, hi, key): a value, a one-axis Masked or a grid."""
    if not parts:
        return out
    if len(parts) == 1:
        ax, lo, hi, key = parts[0]
        return Masked(out, ax, ("bounds", lo, hi), key, params)
    return make(out, parts, params)


def spans_two_axes(args) -> bool:
    """Whether one-axis slices among `args` have run-time bounds on two different axes, counted
    from the end (`A[k + 1:, k:k + 1] * A[k:k + 1, k + 1:]`: an outer product by broadcasting)."""
    ends = {a.data.ndim - a.axis for a in args if isinstance(a, Masked) and a.where[0] == "bounds" and a._data is not None}
    return len(ends) > 1


def call(em, impl, shown: str, args, kwargs):
    """impl(em, *args, **kwargs) where some argument is a grid."""
    from .registry import BUILTINS, FUNCTIONS, METHODS
    grids = [a for a in (*args, *kwargs.values()) if is_grid(a)]
    ref = grids[0]
    if impl is BUILTINS.get("len") and len(args) == 1 and not kwargs:
        return shape(em, ref)[0]
    if impl is BUILTINS.get("abs") and len(args) == 1 and not kwargs:
        impl = FUNCTIONS["numpy.absolute"]
    ufunc = getattr(impl, "ufunc", None)
    if (ufunc is not None and ufunc.signature is None and ufunc.nout == 1 and not kwargs) or (
            impl in (FUNCTIONS["numpy.where"], FUNCTIONS["numpy.clip"]) and len(args) == 3 and not kwargs) or (
            impl in elementwise_functions() and len(args) == 1 and not kwargs):
        return _elementwise(em, impl, shown, args)
    if impl is astype_method() and len(args) == 2 and is_grid(args[0]) and not kwargs:
        return make(impl(em, ref.data, args[1]), ref.where[1], ref.params)
    if impl in _copies() and len(args) == 1 and not kwargs:
        return make(impl(em, ref.data), ref.where[1], ref.params, own=True)
    if impl is FUNCTIONS["numpy.transpose"] and len(args) == 1 and not kwargs and ref.data.ndim == 2:
        return make(impl(em, ref.data), [(1 - p[0],) + p[1:] for p in ref.where[1]], ref.params, own=ref.own)
    if impl in (FUNCTIONS["numpy.dot"], FUNCTIONS["numpy.matmul"]) and len(args) == 2 and not kwargs:
        return _contraction(em, impl, shown, *args)
    if impl in (FUNCTIONS["numpy.tril"], FUNCTIONS["numpy.triu"], FUNCTIONS["numpy.trace"]) and is_grid(args[0]) \
            and ref.data.ndim == 2 and len(args) <= 2 and set(kwargs) <= {"k", "offset"}:
        k = em.static(args[1] if len(args) == 2 else kwargs.get("k", kwargs.get("offset", 0)), f"{shown}: the diagonal")
        return _triangle(em, impl is FUNCTIONS["numpy.trace"], impl is FUNCTIONS["numpy.tril"], ref, int(k))
    names = ("sum", "prod", "max", "min", "mean")
    reductions = {FUNCTIONS[f"numpy.{n}"]: n for n in names} | {METHODS[n]: n for n in names if n in METHODS}
    if impl in reductions and 1 <= len(args) <= 2 and is_grid(args[0]) and set(kwargs) <= {"axis", "keepdims"} \
            and not (len(args) == 2 and "axis" in kwargs):
        axis = args[1] if len(args) == 2 else kwargs.get("axis")
        out = _reduction(em, FUNCTIONS[f"numpy.{reductions[impl]}"], reductions[impl], ref, axis)
        return _kept_dims(em, ref, axis, out) if em.static(kwargs.get("keepdims", False), "keepdims") else out
    need(ref, shown)


def _triangle(em, trace: bool, lower: bool, m: Masked, k: int):
    """np.tril / np.triu of a 2-D grid (`np.tril(A[k:, k:])`), the diagonals counted from the
    block's corner: the same grid with the other elements zero; np.trace: the sum of the block's
    diagonal k (0.0 where the block has none)."""
    shape = m.data.shape
    (_, lo0, _, _), (_, lo1, _, _) = m.where[1]
    rows = em.emit("sub", em.emit("iota", shape=shape, dim=0, dtype=np.dtype(np.int64)), em.broadcast(lo0, shape))
    cols = em.emit("sub", em.emit("iota", shape=shape, dim=1, dtype=np.dtype(np.int64)), em.broadcast(lo1, shape))
    offset = em.emit("sub", cols, rows)           # the block's diagonal each element is on
    at = em.full(k, np.int64, shape)
    if trace:
        on = em.emit("and", em.emit("compare", offset, at, direction="EQ"), mask(em, m.where[1], shape))
        from .registry import FUNCTIONS
        return FUNCTIONS["numpy.sum"](em, em.emit("select", on, m.data, em.full(0, m.data.dtype, shape)))
    keep = em.emit("compare", offset, at, direction="LE" if lower else "GE")
    return make(em.emit("select", keep, m.data, em.full(0, m.data.dtype, shape)), m.where[1], m.params)


def _kept_dims(em, m: Masked, axis, out):
    """A reduction's result with the reduced axes kept, of length 1 (keepdims=True)."""
    axes = reduced_axes(em, axis, m.data.ndim)
    data = out.data if isinstance(out, Masked) else em.asarray(out)
    kept = em.emit("reshape", data, shape=tuple(1 if i in axes else d for i, d in enumerate(m.data.shape)))
    parts = [p for p in m.where[1] if p[0] not in axes]
    return _result(kept, parts, m.params) if parts else Traced(kept.value, None, m.params)


def shape(em, m: Masked) -> tuple:
    """m.shape: each masked axis's length a run-time int."""
    from .masked import _count
    lengths = {p[0]: _count(m, _length(em, p)) for p in m.where[1]}
    return tuple(lengths.get(i, d) for i, d in enumerate(m.data.shape))


def _length(em, part) -> Traced:
    _, lo, hi, _ = part
    return em.emit("max", em.emit("sub", hi, lo), em.constant(np.int64(0)))


def mask(em, parts, shape) -> Traced:
    """Which elements of an array of `shape` lie inside every part's bounds (bool)."""
    from .masked import mask as axis_mask
    out = None
    for ax, lo, hi, _ in parts:
        inside = axis_mask(em, ("bounds", lo, hi), shape, ax)
        out = inside if out is None else em.emit("and", out, inside)
    return out


def _elementwise(em, impl, shown, args):
    """An elementwise function of grids with the same bounds, scalars, arrays of length 1 along
    both masked axes, and one-axis slices whose bounds are those of one of the grid's axes (or,
    without a grid, one-axis slices along two axes, each of length 1 along the other's)."""
    ref = next((a for a in args if is_grid(a)), None)
    if ref is not None:
        rank = ref.data.ndim
        from_end = {rank - ax: (lo, hi, key) for ax, lo, hi, key in ref.where[1]}   # axes counted from the end
    else:
        ms = [a for a in args if isinstance(a, Masked)]
        ref = ms[0]
        from_end = {}
        for m in ms:
            e = m.data.ndim - m.axis
            if m.where[0] != "bounds" or from_end.setdefault(e, (m.where[1], m.where[2], m.key))[2] != m.key:
                need(m, f"{shown} with a slice of other bounds")
        if len(from_end) != 2:
            need(ref, shown)
    if any(key is None for _, _, key in from_end.values()):
        need(ref, shown)
    for a in args:
        if is_grid(a):
            if {a.data.ndim - ax: key for ax, _, _, key in a.where[1]} != {e: k for e, (_, _, k) in from_end.items()}:
                need(a, f"{shown} with a slice of other bounds")
        elif isinstance(a, Masked):
            if a.where[0] != "bounds" or a.key is None or from_end.get(a.data.ndim - a.axis, (None,) * 3)[2] != a.key:
                need(a, f"{shown} with a slice of other bounds")
            if any(fixed_along(a.data.shape, e) for e in from_end if e != a.data.ndim - a.axis):
                need(a, f"{shown} with an array of fixed length on its axis")
        elif any(fixed_along(em.shape_of(a), e) for e in from_end):
            need(ref, f"{shown} with an array of fixed length on its axis")
    out = impl(em, *[a.data if isinstance(a, Masked) else a for a in args])
    if not isinstance(out, Traced) or out.ndim < max(from_end):
        need(ref, shown)
    parts = [(out.ndim - e, lo, hi, key) for e, (lo, hi, key) in from_end.items()]
    return make(out, parts, _join(*args))


def _contraction(em, impl, shown, a, b):
    """dot/matmul of 1-D and 2-D operands, one of them a grid: a contracted axis masked on both
    sides with the same bounds (`L[j + 1:, :j] @ L[j, :j]`, `v @ R[k:, k:]`) is zero-filled on both;
    masked free axes stay masked in the result."""
    da = a.data if isinstance(a, Masked) else em.asarray(a)
    db = b.data if isinstance(b, Masked) else em.asarray(b)
    if da.ndim not in (1, 2) or db.ndim not in (1, 2):
        need(next(v for v in (a, b) if is_grid(v)), f"{shown} of arrays with more than 2 dimensions")
    pa, pb = _parts(em, a), _parts(em, b)
    ca, cb = da.ndim - 1, (0 if db.ndim == 1 else db.ndim - 2)
    if (ca in pa) != (cb in pb) or (ca in pa and (pa[ca][2] is None or pa[ca][2] != pb[cb][2])):
        need(next(v for v in (a, b) if is_grid(v)), f"{shown} over a slice of other bounds")
    fa = filled(em, a, 0) if ca in pa else da
    fb = filled(em, b, 0) if cb in pb else db
    out = impl(em, fa, fb)
    parts = []
    if da.ndim == 2 and 0 in pa:
        parts.append((0,) + pa[0])
    if db.ndim == 2 and 1 in pb:
        parts.append((out.ndim - 1,) + pb[1])
    return _result(out, parts, _join(a, b))


def outer(em, impl, shown, a: Masked, b: Masked) -> Masked:
    """np.outer of two run-time slices (`np.outer(A[k + 1:, k], A[k, k + 1:])`, an LU step): the
    product of the whole vectors, a grid with a's bounds on its rows and b's on its columns."""
    for m in (a, b):
        if m.where[0] != "bounds" or m.key is None or m.data.ndim != 1:
            need(m, f"{shown} of it")
    out = impl(em, a.data, b.data)
    return make(out, [(0, a.where[1], a.where[2], a.key), (1, b.where[1], b.where[2], b.key)], _join(a, b))


def _reduction(em, impl, name: str, m: Masked, axis):
    data = m.data
    parts = {p[0]: p for p in m.where[1]}
    axes = reduced_axes(em, axis, data.ndim)
    reduced = [p for ax, p in parts.items() if ax in axes]
    kept = [(ax - sum(1 for r in axes if r < ax),) + p[1:] for ax, p in parts.items() if ax not in axes]
    if name in ("max", "min"):
        empty = None
        for p in reduced:
            zero = em.emit("compare", _length(em, p), em.constant(np.int64(0)), direction="EQ")
            empty = zero if empty is None else em.emit("or", empty, zero)
        if empty is not None:
            em.check(empty, f"ValueError: zero-size array to reduction operation {'maximum' if name == 'max' else 'minimum'} "
                            "which has no identity")
        fill = never_wins(data.dtype, largest=name == "max")
        if fill is None:
            need(m, f"np.{name} of {data.dtype}")
        out = impl(em, filled(em, m, fill), axis=axis)
    elif name == "mean":
        from .registry import FUNCTIONS
        total = em.asarray(FUNCTIONS["numpy.sum"](em, filled(em, m, 0), axis=axis,
                                                  dtype=np.float64 if data.dtype.kind in "biu" else None))
        count = em.constant(np.int64(1))
        for ax in axes:
            count = em.emit("mul", count, _length(em, parts[ax]) if ax in parts else em.constant(np.int64(data.shape[ax])))
        out = em.wrap(em.emit("div", total, em.broadcast(em.cast(count, total.dtype), total.shape)).value, m)
    else:
        out = impl(em, filled(em, m, 1 if name == "prod" else 0), axis=axis)
    return _result(out, kept, m.params) if kept else out


GRIDS.update(call=call, outer=outer, shape=shape, mask=mask, make=make, spans_two_axes=spans_two_axes,
             elementwise=_elementwise)


def _copies() -> tuple:
    """np.copy and the .copy() method (two registrations: a NumPy scalar's method keeps a scalar)."""
    from .registry import FUNCTIONS, METHODS
    return FUNCTIONS["numpy.copy"], METHODS["copy"]
