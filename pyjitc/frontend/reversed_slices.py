"""reversed_slices: a slice with step -1 and run-time bounds (`x[i::-1]`, `A[k, j:i:-1]`) read as
the step-1 slice of the same elements (a run-time-length slice, masked.py), then reversed: NumPy's
bounds for negative steps, worked out when the function runs. Other static steps (`x[k::3]`,
`x[i::-2]`) are the step +-1 slice, then every |step|-th element of it."""
from __future__ import annotations

import numpy as np

from ..ir.types import is_int
from .values import Traced, join_params


def forward_of_reversed(em, x: Traced, index):
    """For an index whose one run-time slice has step -1 (`x[i::-1]`, `A[k, j:i:-1]`): the same
    index with that slice as the step-1 slice of the same elements (to flip after reading), by
    NumPy's rules for negative steps (start None -> n - 1, stop None -> before 0, negative bounds
    from the end, then clipped to [-1, n - 1]); None for any other index."""
    items = index if isinstance(index, tuple) else (index,)
    rev = [k for k, it in enumerate(items) if isinstance(it, slice) and isinstance(it.step, (int, np.integer))
           and not isinstance(it.step, (bool, np.bool_)) and it.step == -1
           and (isinstance(it.start, Traced) or isinstance(it.stop, Traced))]
    if len(rev) != 1 or any(it is Ellipsis or isinstance(it, slice) and isinstance(it.step, Traced) for it in items):
        return None
    k = rev[0]
    dim = sum(1 for it in items[:k] if it is not None)
    if dim >= x.ndim or not isinstance(x.shape[dim], int):
        return None
    n, it = x.shape[dim], items[k]
    for part in (it.start, it.stop):
        if not (part is None or isinstance(part, (int, np.integer)) or isinstance(part, Traced) and part.ndim == 0 and (part.weak is int or is_int(part.dtype))):
            return None
    c = lambda v: em.constant(np.int64(v))

    def normalised(v, default):
        if v is None:
            return c(default)
        v = em.cast(em.asarray(v), np.int64) if isinstance(v, Traced) else c(int(v))
        v = em.emit("select", em.emit("compare", v, c(0), direction="LT"), em.emit("add", v, c(n)), v)
        return em.emit("min", em.emit("max", v, c(-1)), c(n - 1))
    params = join_params([v for v in (it.start, it.stop) if isinstance(v, Traced)])
    first, last = normalised(it.start, n - 1), normalised(it.stop, -1)
    lo = Traced(em.emit("add", last, c(1)).value, int, params)
    hi = Traced(em.emit("max", em.emit("add", first, c(1)), lo).value, int, params)
    forward = items[:k] + (slice(lo, hi, None),) + items[k + 1:]
    return forward if isinstance(index, tuple) else forward[0]


def unit_step(index):
    """For an index whose one run-time slice has a static step other than 1 and -1 (`x[k::3]`,
    `x[i:j:-2]`): (the same index with that slice's step +-1, |step|); None for any other index.
    x[a:b:s] holds the elements of x[a:b:sign(s)] at positions 0, |s|, 2|s|, ..."""
    items = index if isinstance(index, tuple) else (index,)
    found = [k for k, it in enumerate(items) if isinstance(it, slice) and isinstance(it.step, (int, np.integer))
             and not isinstance(it.step, (bool, np.bool_)) and it.step not in (0, 1, -1)
             and (isinstance(it.start, Traced) or isinstance(it.stop, Traced))]
    if len(found) != 1 or any(it is Ellipsis for it in items):
        return None
    k = found[0]
    it = items[k]
    unit = items[:k] + (slice(it.start, it.stop, None if it.step > 0 else -1),) + items[k + 1:]
    axis = sum(1 for i in items[:k] if i is None or isinstance(i, slice))   # the slice's axis in the result
    return (unit if isinstance(index, tuple) else unit[0]), abs(int(it.step)), axis


def run_time_step_mask(em, x: Traced, index):
    """For `x[a:b:s]` along the first axis with a run-time step s known to be positive (a sieve's
    `flags[i * i::i] = False`, i a loop variable): the bool mask of the elements it holds, in
    their order (lo <= k < hi, (k - lo) % s == 0 with NumPy's bounds lo, hi), so reads are a
    selection and writes go through the mask; None for any other index (a run-time step asked
    for the step at compile time, which unrolled the loop around it: 193 passes, 49 s)."""
    from . import masked
    items = index if isinstance(index, tuple) else (index,)
    if not items or not isinstance(items[0], slice) or not isinstance(items[0].step, Traced) or x.ndim == 0 \
            or not isinstance(x.shape[0], int) or any(it != slice(None) for it in items[1:]):
        return None
    it = items[0]
    for part in (it.start, it.stop, it.step):
        if not (part is None or isinstance(part, (int, np.integer)) and not isinstance(part, (bool, np.bool_)) or
                isinstance(part, Traced) and part.ndim == 0 and (part.weak is int or is_int(part.dtype))):
            return None
    r = em.range_of(it.step)
    if r is None or r[0] <= 0:
        return None
    n = x.shape[0]
    lo, hi, _, _ = masked.bounds(em, it.start, it.stop, n)
    i64 = np.dtype(np.int64)
    k = em.emit("iota", shape=(n,), dim=0, dtype=i64)
    lo, hi, step = em.broadcast(lo, (n,)), em.broadcast(hi, (n,)), em.broadcast(em.cast(it.step, np.int64), (n,))
    inside = em.emit("and", em.emit("compare", k, lo, direction="GE"), em.emit("compare", k, hi, direction="LT"))
    on_step = em.emit("compare", em.emit("rem", em.emit("sub", k, lo), step), em.full(0, np.int64, (n,)), direction="EQ")
    return em.emit("and", inside, on_step)
