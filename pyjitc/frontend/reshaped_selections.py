"""reshaped_selections: 1-D selections (masked.py's x[mask], np.flatnonzero) sliced (`pos[1:]`,
`sel[::2]`, `v[::-1]`), differenced (`np.diff(np.flatnonzero(d))`, gaps between events), sorted,
and selections of different masks combined elementwise (`pos[1:] - pos[:-1]`, `x[m1] * y[m2]`).
NumPy moves a selection's elements together; these rules do it too where order or neighbours
matter (compaction.compacted), and the result is a selection of the first len entries."""
from __future__ import annotations

import numpy as np

from ..errors import ShapeError
from ..ir.types import is_complex, is_int
from .compaction import compacted
from .masked import RESHAPED, Masked, _join, _mismatch, filled, length, need, sorts_last
from .registry import FUNCTIONS
from .values import Traced


def _prefix(em, data: Traced, count: Traced, key, params) -> Masked:
    """A selection of the first `count` entries of `data` (a compacted selection, reshaped)."""
    n = data.shape[0]
    flags = em.emit("compare", em.emit("iota", shape=(n,), dim=0, dtype=np.dtype(np.int64)),
                    em.broadcast(count, (n,)), direction="LT")
    return Masked(Traced(data.value, data.weak, params), 0, ("flags", flags), key, params)


def _sliced_selection(em, m: Masked, it: slice) -> Masked:
    """x[mask][a:b:s]: for a positive step, the same positions with the flags narrowed to the
    entries whose rank among the selected ones NumPy's slice keeps (`pos[1:]`, `sel[::2]`); for
    [::-s], the selection compacted, reversed, then every s-th entry."""
    step = em.static(it.step, "a slice step") if it.step is not None else 1
    if step == 0:
        raise ShapeError("ValueError: slice step cannot be zero")
    for v in (it.start, it.stop):
        if not (v is None or isinstance(v, (int, np.integer)) or isinstance(v, Traced) and v.ndim == 0
                and (v.weak is int or is_int(v.dtype))):
            need(m, "indexing it")
    count = length(em, m)
    if step < 0:
        if it.start is not None or it.stop is not None:
            need(m, "slicing it backwards between bounds")
        data, _ = compacted(em, m)
        n = data.shape[0]
        back = em.emit("sub", em.broadcast(em.emit("sub", count, em.constant(np.int64(1))), (n,)),
                       em.emit("iota", shape=(n,), dim=0, dtype=np.dtype(np.int64)))
        back = em.emit("max", back, em.full(0, np.int64, (n,)))
        flipped = _prefix(em, em.emit("take", data, back, weak=data.weak), count, ("reversed", m.key), m.params)
        return flipped if step == -1 else _sliced_selection(em, flipped, slice(None, None, -step))
    zero = em.constant(np.int64(0))

    def normalised(v, default):
        if v is None:
            return default
        v = em.cast(em.asarray(v), np.int64) if isinstance(v, Traced) else em.constant(np.int64(int(v)))
        v = em.emit("select", em.emit("compare", v, zero, direction="LT"), em.emit("add", v, count), v)
        return em.emit("min", em.emit("max", v, zero), count)
    lo, hi = normalised(it.start, zero), normalised(it.stop, count)
    flags = m.where[1]
    n = flags.shape[0]
    rank = em.emit("sub", FUNCTIONS["numpy.cumsum"](em, em.cast(flags, np.int64)), em.full(1, np.int64, (n,)))
    keep = em.emit("and", em.emit("compare", rank, em.broadcast(lo, (n,)), direction="GE"),
                   em.emit("compare", rank, em.broadcast(hi, (n,)), direction="LT"))
    if step > 1:
        offset = em.emit("rem", em.emit("sub", rank, em.broadcast(lo, (n,))), em.full(step, np.int64, (n,)))
        keep = em.emit("and", keep, em.emit("compare", offset, em.full(0, np.int64, (n,)), direction="EQ"))
    new = em.emit("and", flags, keep)
    static = tuple(v if not isinstance(v, Traced) else ("run time", id(v)) for v in (it.start, it.stop))
    return Masked(m.data, 0, ("flags", new), ("sliced", m.key, static, step), _join(m, *(v for v in (it.start, it.stop)
                                                                                          if isinstance(v, Traced))))


def _compacted_together(em, shown: str, args) -> list:
    """Elementwise operands that are selections of different masks (`pos[1:] - pos[:-1]`,
    `x[m1] * y[m2]`): each compacted to the front, combined there, a selection of the first L
    entries (L their common length; a selection of length 1 broadcast, as NumPy does; other
    lengths that differ raise NumPy's ValueError when the function runs)."""
    ms = [a for a in args if isinstance(a, Masked)]
    n = max(m.data.shape[0] for m in ms)
    one = em.constant(np.int64(1))
    parts = []
    for m in ms:
        data, count = compacted(em, m)
        if data.shape[0] < n:
            data = em.emit("pad", data, em.constant(np.zeros((), data.dtype)), low=(0,), high=(n - data.shape[0],),
                           interior=(0,))
        single = em.broadcast(em.emit("compare", count, one, direction="EQ"), (n,))
        first = em.broadcast(em.emit("take", data, em.constant(np.int64(0)), weak=data.weak) if n else data, (n,))
        parts.append((em.emit("select", single, first, data) if n else data, count))
    total = parts[0][1]
    for _, c in parts[1:]:
        total = em.emit("select", em.emit("compare", total, one, direction="EQ"), c, total)
    bad = None
    for _, c in parts:
        differs = _mismatch(em, c, total)
        bad = differs if bad is None else em.emit("or", bad, differs)
    em.check(bad, f"ValueError: operands could not be broadcast together ({shown} of selections of different lengths)")
    key = ("compacted together", tuple(m.key for m in ms))
    out, k = [], iter(parts)
    for a in args:
        if isinstance(a, Masked):
            data = next(k)[0]
            out.append(_prefix(em, Traced(data.value, a.data.weak, a.params), total, key, a.params))
        else:
            out.append(a)
    return out


def _diff_of_selection(em, impl, m: Masked, n: int) -> Masked:
    """np.diff(x[mask], n) (`np.diff(np.flatnonzero(d))`, gaps between events): the selection
    compacted, differenced, a selection of its first len - n entries."""
    data, count = compacted(em, m)
    if n < 0:
        raise ShapeError(f"ValueError: order must be non-negative but got {n}")
    out = impl(em, data, n=min(n, data.shape[0])) if n else data
    left = em.emit("max", em.emit("sub", count, em.constant(np.int64(n))), em.constant(np.int64(0)))
    return _prefix(em, out, left, ("diff", m.key, n), m.params)


def _sorted_selection(em, impl, m: Masked) -> Masked:
    """np.sort(x[mask]): the left-out entries made the largest value (NaN for floats: NumPy sorts
    NaNs last, and the selected NaNs are as many in the first len entries), sorted; a selection
    of the first len entries."""
    dt = m.data.dtype
    if is_complex(dt):
        need(m, "np.sort")
    fill = sorts_last(dt)
    out = impl(em, filled(em, m, fill))
    return _prefix(em, out, length(em, m), ("sorted", m.key), m.params)


def _argsorted_selection(em, impl, m: Masked) -> Masked:
    """np.argsort(x[mask]) (`np.argsort(counts)` of np.unique's counts, `v[np.argsort(v)]`): the
    positions among the selected entries, so the selection is compacted first; the entries past
    its length made the largest value (NaN for floats), which a stable sort leaves after the
    selected ones equal to it."""
    dt = m.data.dtype
    if is_complex(dt):
        need(m, "np.argsort")
    packed, n = compacted(em, m)
    inside = em.emit("compare", em.emit("iota", shape=packed.shape, dim=0, dtype=np.dtype(np.int64)),
                     em.broadcast(n, packed.shape), direction="LT")
    data = em.emit("select", inside, packed, em.full(sorts_last(dt), dt, packed.shape))
    return _prefix(em, impl(em, Traced(data.value)), n, ("argsorted", m.key), m.params)


RESHAPED.update(sliced=_sliced_selection, together=_compacted_together, diff=_diff_of_selection,
                sort=_sorted_selection, argsort=_argsorted_selection)
