"""reversed_slices: slices with run-time bounds and steps other than 1. A slice with step -1
(`x[i::-1]`, `A[k, j:i:-1]`) is read as the step-1 slice of the same elements (a run-time-length
slice, masked.py), then reversed: NumPy's bounds for negative steps, worked out when the function
runs. Other static steps (`x[k::3]`, `x[i::-2]`) are the step +-1 slice, then every |step|-th
element of it. A positive run-time step (`flags[i * i::i]`) is a mask of the positions it holds,
or, for one number written into a 1-D one on CPU, a loop over its elements."""
from __future__ import annotations

import numpy as np

from ..ir.types import TensorType, is_int
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


def _positive_run_time_step(em, x: Traced, index):
    """The slice of `x[a:b:s]` along the first axis with a run-time step s known to be positive
    (the rest of the index whole), else None."""
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
    return it if r is not None and r[0] > 0 else None


def element_loop(em, x: Traced, index, update):
    """x[a:b:s] = update(x[k]) for each of its elements k, as a run-time loop over them (k = lo,
    lo + s, ... < hi, NumPy's bounds), for a 1-D x and a run-time positive step s: on targets
    that run scalar loops natively, the sieve's `flags[i * i::i] = False` in its loop over i is
    then one native loop (a mask over all of x per pass: 2e6 flags 205 ms, NumPy 3.9 ms), and
    `s[2 * d::d] += d` compiles (the selection's update was refused). `update`: the element's new
    value from its old one (0-d, x's dtype). The new x; None where this does not apply."""
    from . import masked
    it = _positive_run_time_step(em, x, index)
    if it is None or x.ndim != 1 or not em.element_loops:
        return None
    lo, hi, _, _ = masked.bounds(em, it.start, it.stop, x.shape[0])
    step = em.cast(it.step, np.int64)
    b = em.b
    types = [TensorType((), np.dtype(np.int64)), x.type]
    cond = b.open_block(types)
    b.close_block([b.emit("compare", cond.params[0], hi.value, direction="LT")])
    body = b.open_block(types)
    k, arr = Traced(body.params[0], None, None), Traced(body.params[1], None, None)
    old = em.emit("reshape", em.emit("dynamic_slice", arr, k, sizes=(1,), in_bounds=True), shape=())
    new = em.cast(em.asarray(update(old)), x.dtype)
    written = em.emit("dynamic_update_slice", arr, em.emit("reshape", new, shape=(1,)), k)
    b.close_block([em.emit("add", k, step).value, written.value])
    outs = b.emit("while", em.cast(lo, np.int64).value, x.value, regions=(cond, body))
    return Traced(outs[1], None, join_params([x, lo, hi, step]))


def run_time_step_mask(em, x: Traced, index):
    """For `x[a:b:s]` along the first axis with a run-time step s known to be positive (a sieve's
    `flags[i * i::i] = False`, i a loop variable): the bool mask of the elements it holds, in
    their order (lo <= k < hi, (k - lo) % s == 0 with NumPy's bounds lo, hi), so reads are a
    selection and writes go through the mask; None for any other index (a run-time step asked
    for the step at compile time, which unrolled the loop around it: 193 passes, 49 s)."""
    from . import masked
    it = _positive_run_time_step(em, x, index)
    if it is None:
        return None
    n = x.shape[0]
    # one mask per slice expression and block: a read and a write through the same slice
    # (`phi[i::i] -= phi[i::i] // i`, Euler's totient sieve) are then the same selection
    block = em.b.blocks[-1]
    key = (id(block), n) + tuple(p.value.id if isinstance(p, Traced) else ("n", p) for p in (it.start, it.stop, it.step))
    known = em.step_masks.get(key)
    if known is not None and known[0] is block and any(r.id == known[1].value.id for op in block.ops for r in op.results):
        return known[1]     # (still in the block: a pass rolled back may have dropped it)
    lo, hi, _, _ = masked.bounds(em, it.start, it.stop, n)
    i64 = np.dtype(np.int64)
    k = em.emit("iota", shape=(n,), dim=0, dtype=i64)
    lo, hi, step = em.broadcast(lo, (n,)), em.broadcast(hi, (n,)), em.broadcast(em.cast(it.step, np.int64), (n,))
    inside = em.emit("and", em.emit("compare", k, lo, direction="GE"), em.emit("compare", k, hi, direction="LT"))
    on_step = em.emit("compare", em.emit("rem", em.emit("sub", k, lo), step), em.full(0, np.int64, (n,)), direction="EQ")
    mask = em.emit("and", inside, on_step)
    em.step_masks[key] = (block, mask)
    return mask


def _loops_over(em, x: Traced, index, value) -> bool:
    """Whether `x[index] = value` (or `op=`) is element_loop's: one number into a 1-D slice with a
    run-time positive step, on a target that runs scalar loops natively."""
    one = isinstance(value, (bool, int, float, complex, np.generic)) or isinstance(value, Traced) and value.ndim == 0
    return one and em.element_loops and x.ndim == 1 and _positive_run_time_step(em, x, index) is not None


def element_store(em, x: Traced, index, value, what):
    """`x[a::s] = v` (v one number) by element_loop; None where that does not apply."""
    if not _loops_over(em, x, index, value):
        return None
    from .store_values import values_for
    v = values_for(em, value, x.dtype, (), what, scalar=True)     # (converted once, before the loop)
    return element_loop(em, x, index, lambda old: v)


def element_update(em, x: Traced, index, op: str, value, what):
    """`x[a::s] op= v` (v one number) by element_loop, cast back by NumPy's same_kind rule as
    x[a::s].__iadd__(v) does; None where that does not apply."""
    if not _loops_over(em, x, index, value):
        return None
    from ..errors import ShapeError
    from .operators import apply_operator
    probe = apply_operator(em, op, em.full(0, x.dtype, ()), value)
    dt = em.dtype_of(probe) if not isinstance(probe, Traced) else probe.dtype
    if not isinstance(dt, np.dtype) or not np.can_cast(dt, x.dtype, "same_kind"):
        raise ShapeError(f"{what}: Cannot cast ufunc output from dtype('{dt}') to dtype('{x.dtype}') with casting "
                         "rule 'same_kind'")
    return element_loop(em, x, index, lambda old: apply_operator(em, op, old, value))

