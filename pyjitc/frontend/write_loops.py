"""write_loops: writes through run-time positions as run-time loops over the positions, in order,
on targets whose scalar loops run natively (CPU: Emitter.element_loops). A later position naming
the same element writes last, as in NumPy; the loop's cost is the number of positions written,
and a loop around it stays one native loop. Elsewhere (GPU targets) indexing.py scatters."""
from __future__ import annotations

import numpy as np

from ..ir.types import TensorType
from .masked import Masked, _int64, aligned
from .store_values import values_for
from .values import Traced, is_py_scalar, join_params


def scatter_loop(em, x: Traced, idx, value, what: str) -> Traced | None:
    """The new 1-D x after `x[idx[a:b]] = v` (v one number, or a run-time slice with the same
    bounds) as a run-time loop over the slice's positions, on targets whose scalar loops run
    natively: the write costs b - a steps where the scatter of the whole selection costs the
    capacity, and a loop around it stays native (average ranks over tied runs, `ranks[order[i:j +
    1]] = r` in a while loop, ran on the host at 24x NumPy's time). A later position naming the same
    element writes last, as in NumPy; a position out of range is NumPy's IndexError. None where
    this does not apply."""
    if not (em.element_loops and isinstance(idx, Masked) and type(idx) is Masked and idx.where[0] == "bounds"
            and idx.axis == 0 and idx._data is not None and idx.data.ndim == 1
            and np.dtype(idx.data.dtype).kind in "iu" and x.ndim == 1 and isinstance(x.shape[0], int)):
        return None
    if isinstance(value, Masked):
        if not (type(value) is Masked and value.where[0] == "bounds" and aligned(value, idx) and value.axis == 0
                and value._data is not None and value.data.ndim == 1):
            return None
        v = values_for(em, Traced(value.data.value, value.data.weak, value.params), x.dtype, value.data.shape, what)
    elif is_py_scalar(value) or isinstance(value, Traced) and value.ndim == 0:
        v = values_for(em, value, x.dtype, (), what)
    else:
        return None
    _, lo, hi = idx.where
    n = x.shape[0]
    i64 = np.dtype(np.int64)
    b = em.b
    types = [lo.value.type, x.value.type, em.err.value.type]
    cond = b.open_block(types)
    b.close_block([b.emit("compare", cond.params[0], hi.value, direction="LT")])
    body = b.open_block(types)
    t, arr = Traced(body.params[0]), Traced(body.params[1])
    outer_err, em.err.value = em.err.value, body.params[2]
    try:
        p = em.cast(em.emit("reshape", em.emit("dynamic_slice", idx.data, t, sizes=(1,), in_bounds=True), shape=()), i64)
        size = _int64(em, n)
        zero = em.constant(np.int64(0))
        p = em.emit("select", em.emit("compare", p, zero, direction="LT"), em.emit("add", p, size), p)
        em.check(em.emit("or", em.emit("compare", p, zero, direction="LT"), em.emit("compare", p, size, direction="GE")),
                 f"IndexError: index out of bounds for axis 0 with size {n}")
        new = v if v.ndim == 0 else em.emit("reshape", em.emit("dynamic_slice", v, t, sizes=(1,), in_bounds=True),
                                            shape=())
        written = em.emit("dynamic_update_slice", arr, em.emit("reshape", new, shape=(1,)), p)
        b.close_block([em.emit("add", t, em.constant(np.int64(1))).value, written.value, em.err.value])
    finally:
        em.err.value = outer_err
    outs = b.emit("while", lo.value, x.value, em.err.value, regions=(cond, body))
    em.err.value = outs[2]
    return Traced(outs[1], x.weak, join_params([x, idx, v, lo, hi]))


def written_in_order(em, flat: Traced, linear: Traced, v: Traced, keep) -> Traced:
    """flat[linear[t]] = v[t] for t = 0, 1, ... in order (where keep[t] holds), as a run-time loop
    on targets whose scalar loops run natively: a later entry naming the same position writes
    last, as in NumPy. The scatter of every entry's order and the gather after it cost a pass over
    the array per write (`out[np.arange(n), codes] = 1`, a one-hot encoding of 1e6 codes: 428 ms,
    NumPy 15.6 ms) and kept a loop around it on the host. `linear` is in range (checked)."""
    m, tail = linear.shape[0], tuple(flat.shape[1:])
    i64 = np.dtype(np.int64)
    count, zero = em.constant(np.int64(m)), em.constant(np.int64(0))
    b = em.b
    types = [TensorType((), i64), flat.value.type]
    cond = b.open_block(types)
    b.close_block([b.emit("compare", cond.params[0], count.value, direction="LT")])
    body = b.open_block(types)
    t, arr = Traced(body.params[0]), Traced(body.params[1])
    rest = [zero] * len(tail)
    p = em.emit("reshape", em.emit("dynamic_slice", linear, t, sizes=(1,), in_bounds=True), shape=())
    row = em.emit("dynamic_slice", v, t, *rest, sizes=(1,) + tail, in_bounds=True)
    if keep is not None:
        old = em.emit("dynamic_slice", arr, p, *rest, sizes=(1,) + tail)
        kept = em.emit("reshape", em.emit("dynamic_slice", keep, t, sizes=(1,), in_bounds=True), shape=())
        row = em.emit("select", em.broadcast(kept, (1,) + tail), row, old)
    written = em.emit("dynamic_update_slice", arr, row, p, *rest)
    b.close_block([em.emit("add", t, em.constant(np.int64(1))).value, written.value])
    outs = b.emit("while", zero.value, flat.value, regions=(cond, body))
    return Traced(outs[1], flat.weak, flat.params)
